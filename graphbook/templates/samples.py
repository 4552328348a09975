"""Sample data the templates read, made here (nothing is downloaded): each maker writes its
files under a root folder at the relative path the templates name, unless they exist."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

Maker = Callable[[Path], None]


def _records(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {"id": n, "text": f"record {n}", "score": round((n * 37 % 100) / 100, 2)} for n in range(20)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


SAMPLES: dict[str, tuple[str, Maker]] = {
    "records": ("data/samples/records.jsonl", _records),
}
"""Sample name -> (where it goes, relative to the root; the function that writes it there)."""


def make_sample(name: str, root: Path) -> Path | None:
    """Write sample `name` under `root`; its path, or None when it was there already."""
    relative, maker = SAMPLES[name]
    path = root / relative
    if path.exists():
        return None
    maker(path)
    return path
