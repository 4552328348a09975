"""docs/nodes/ is what `graphbook nodes --docs` writes from the node specs: a page per pack."""

from __future__ import annotations

from pathlib import Path

from graphbook.cli import main
from graphbook.nodes import PACKS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "nodes"


def test_the_pack_pages_are_the_ones_the_nodes_write(tmp_path: Path) -> None:
    assert main(["nodes", "--docs", str(tmp_path)]) == 0
    fresh = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()}
    kept = {p.name: p.read_text(encoding="utf-8") for p in DOCS.iterdir()}
    assert sorted(fresh) == sorted(kept), "a pack page is missing or stale"
    for name, text in fresh.items():
        assert kept[name] == text, (
            f"docs/nodes/{name} is stale: run graphbook nodes --docs docs/nodes"
        )
    assert "| `split_fn` | function | required |" in fresh["core.md"]
    assert {f"{pack}.md" for pack in PACKS} <= set(fresh), "every library pack has its page"
