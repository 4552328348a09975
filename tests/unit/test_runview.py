"""The one fold of run messages (graphbook/runview.py) against the shared fixtures in
tests/fixtures/runview/, which web/src/__tests__/runViewFixtures.test.ts runs against the
browser's fold: after every message, the server's snapshot (what a page shows after a reload)
must show what the fixture expects (what the live page shows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphbook import protocol as p
from graphbook.runview import RunView

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runview"


def seen(view: RunView) -> dict[str, Any]:
    """What a person sees, in the fixtures' terms: errors and logs counted, outputs by index."""
    snapshot = view.snapshot()
    run: dict[str, Any] | None = None
    if snapshot is not None:
        run = p.to_json(snapshot)
        run["nodes"] = {
            node["node_id"]: {
                **node,
                "errors": len(node["errors"]),
                "logs": len(node["logs"]),
                "outputs": {name: shown["index"] for name, shown in node["outputs"].items()},
            }
            for node in run["nodes"]
        }
    return {"run": run, "prompts": sorted(view.prompts)}


def differences(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Where `actual` differs from `expected`; objects need only hold the keys expected."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return [
            d
            for key, value in expected.items()
            for d in (
                differences(value, actual[key], f"{where}.{key}")
                if key in actual
                else [f"{where}.{key}: missing"]
            )
        ]
    return [] if expected == actual else [f"{where}: expected {expected!r}, got {actual!r}"]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda path: path.stem)
def test_the_fold_shows_what_each_fixture_expects(path: Path) -> None:
    view = RunView()
    for number, step in enumerate(json.loads(path.read_text())["steps"]):
        view.apply(p.decode_server(json.dumps(step["message"])))
        wrong = differences(step["expect"], seen(view))
        assert not wrong, f"step {number} ({step['message']['type']}): " + "; ".join(wrong)


def test_the_fixtures_cover_every_run_message() -> None:
    types = {
        step["message"]["type"]
        for path in FIXTURES.glob("*.json")
        for step in json.loads(path.read_text())["steps"]
    }
    run_messages = set(p.SERVER_TYPES) - {"hello", "snapshot", "catalog_changed", "error"}
    run_messages -= {"workflows_changed", "workflows_listed", "workflow_changed", "jobs"}
    run_messages -= {"ack", "pong"}
    run_messages -= {"node_metrics"}  # not sent to browsers: the Runs tab reads the store
    assert run_messages <= types, f"no fixture sends {sorted(run_messages - types)}"


def test_a_differing_state_is_reported() -> None:
    assert differences({"a": {"b": 1}}, {"a": {"b": 2, "c": 3}}) == [".a.b: expected 1, got 2"]
    assert differences({"a": 1}, {}) == [".a: missing"]
