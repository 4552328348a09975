"""What a step function returns routes only with two or more outputs, and a routing
error fails its node like any other node error (exit 1, summary, `--continue-on-error`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphbook import run_workflow
from graphbook.cli import main


def lines(path: Path) -> list[object]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_one_output_step_function_may_return_anything(project: Path) -> None:
    result = run_workflow(project / "Numbers.json", nodes=[project / "custom_nodes"])
    assert result.counts["1"] == {"out": 10}, "Tag returned its tag as text; it is not a route"


def test_a_wrong_output_name_fails_its_node_and_the_run_reports_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "Numbers.json", "--json"])
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 1, err
    failed = [e for e in events if e["type"] == "node_error"]
    assert [e["node_id"] for e in failed] == ["2"]
    assert "'neither'" in failed[0]["error"]["message"]
    assert "even, odd" in failed[0]["error"]["message"], "the message names the outputs"
    assert events[-1]["type"] == "run_finished" and events[-1]["status"] == "failed"


def test_the_summary_is_printed_for_a_routing_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "Numbers.json"]) == 1
    out, err = capsys.readouterr()
    assert "Parity" in out + err and "'neither'" in out + err
    assert "invalid" not in (out + err).lower()


def test_continue_on_error_lets_the_other_dicts_through(project: Path) -> None:
    assert main(["run", "Numbers.json", "--continue-on-error", "--quiet"]) == 1
    even, odd = lines(project / "even.jsonl"), lines(project / "odd.jsonl")
    assert [d["n"] for d in even] == [0, 2, 4, 6, 8]  # type: ignore[index]
    assert [d["n"] for d in odd] == [1, 5, 7, 9], "all but the bad one, 3"  # type: ignore[index]


def test_routing_by_return_value_with_two_outputs_still_works(project: Path) -> None:
    workflow = json.loads((project / "Numbers.json").read_text())
    workflow["nodes"][2]["data"]["parameters"]["bad"]["value"] = -1
    (project / "Numbers.json").write_text(json.dumps(workflow))
    result = run_workflow(project / "Numbers.json", nodes=[project / "custom_nodes"])
    assert result.ok, result.errors
    assert result.counts["2"] == {"even": 5, "odd": 5}
