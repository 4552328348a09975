"""The one fold of run messages (graphbook/runview.py) against the shared fixtures in
tests/fixtures/runview/, which web/src/__tests__/runViewFixtures.test.ts runs against the
browser's fold: after every message, the server's snapshot (what a page shows after a reload)
must show what the fixture expects (what the live page shows)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from graphbook import protocol as p
from graphbook.runview import RunState

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "runview"


def seen(view: RunState) -> dict[str, Any]:
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
    view = RunState()
    for number, step in enumerate(json.loads(path.read_text())["steps"]):
        view.apply(p.decode_server(json.dumps(step["message"])))
        wrong = differences(step["expect"], seen(view))
        assert not wrong, f"step {number} ({step['message']['type']}): " + "; ".join(wrong)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda path: path.stem)
def test_the_nodes_a_run_ends_with_are_read_before_its_end_is_folded(path: Path) -> None:
    """The run's record is written from `nodes_after(end)` before clients get the end: it must
    say what the fold says once the end is folded in, and leave the view as it was."""
    view, ends = RunState(), 0
    for step in json.loads(path.read_text())["steps"]:
        message = p.decode_server(json.dumps(step["message"]))
        if isinstance(message, p.RunFinished) and view.run is not None:
            before = view.snapshot()
            after = view.nodes_after(message)
            if view.run.started.run_id != message.run_id:
                assert after is None
            else:
                ends += 1
                now = view.snapshot()
                assert now is not None and before is not None
                assert replace(now, seconds=0) == replace(before, seconds=0)
                view.apply(message)
                ended = view.snapshot()
                assert ended is not None and after == ended.nodes
                continue
        view.apply(message)
    assert ends or "another_run" in path.stem or "cached" in path.stem


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
