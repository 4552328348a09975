"""check_run: the one check of a run request, whichever front end made it. Every problem of its
overrides, inputs, workflow and target comes back as a value naming its node and a fix; a
request without problems comes back with the graph (built once) and what runs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from graphbook import protocol as p
from graphbook.errors import Problem
from graphbook.nodes import library_registry
from graphbook.run_request import CheckedRun, RunRequest, check_run
from graphbook.workflow import Workflow


def loader() -> Workflow:
    """load -> split (a resource wired into its function); `start` the input of load's
    `start_from`."""
    workflow = Workflow()
    load = workflow.add("LoadJSONL", id="load", jsonl_path="in.jsonl")
    workflow.nodes["load"] = replace(workflow.nodes["load"], label="Reader")
    fn = workflow.add("Function", id="fn", val="lambda d: True")
    workflow.connect(load, workflow.add("Split", id="split", split_fn=fn))
    workflow.input("start", load, "start_from")
    return workflow


def check(**asked: Any) -> CheckedRun:
    return check_run(RunRequest("loader.json", **asked), loader(), library_registry())


def test_a_good_request_comes_back_with_its_graph_and_what_runs() -> None:
    checked = check(overrides={"Reader": {"jsonl_path": "other.jsonl"}}, inputs={"start": 4})
    assert checked.ok and checked.graph is not None
    assert checked.graph.nodes["load"].params == {"jsonl_path": "other.jsonl", "start_from": 4}
    assert checked.workflow.nodes["load"].params == {"jsonl_path": "other.jsonl", "start_from": 4}
    assert loader().nodes["load"].params == {"jsonl_path": "in.jsonl"}, "the file is not changed"


def test_each_bad_value_names_its_node_and_a_fix() -> None:
    wrong_type = check(overrides={"load": {"start_from": "ten"}}).problems
    assert wrong_type == [
        Problem(
            "load",
            "parameter 'start_from' expects a whole number, got str 'ten'",
            "give 'start_from' a whole number",
        )
    ]
    [misspelled] = check(overrides={"load": {"start_for": 2}}).problems
    assert misspelled.node_id == "load" and "no parameter 'start_for'" in misspelled.message
    assert misspelled.fix.startswith("did you mean 'start_from'?")
    [unknown] = check(overrides={"ghost": {"x": 1}}).problems
    assert "no node has that id or title" in unknown.message and "'load' (Reader)" in unknown.fix
    [bad_input] = check(inputs={"start": "soon"}).problems
    assert bad_input.node_id == "load" and "input 'start'" in bad_input.message
    assert bad_input.fix == "give 'start' a whole number"
    [twice] = check(overrides={"load": {"start_from": 1}}, inputs={"start": 2}).problems
    assert "given twice" in twice.message and twice.fix


def test_a_node_the_mode_cannot_run_to_is_about_the_request() -> None:
    missing = check(mode="until")
    assert missing.about == "request" and missing.graph is None
    assert missing.problems[0].message == 'mode "until" needs the node to run up to'
    [gone] = check(mode="trigger", node="nope").problems
    assert gone.node_id == "nope" and "has no node 'nope'" in gone.message
    assert str(check(mode="trigger", node="fn").error()) == (
        "node 'fn' is a resource; re-trigger a source or a step"
    )
    assert check(mode="step", node="split").ok


def test_the_request_is_one_shape_on_every_wire() -> None:
    """What POST /api/runs and POST /api/jobs take, what a stored job holds, what an MCP run
    makes: one RunRequest, read back whole from its JSON."""
    request = RunRequest("a.json", "until", "load", None, True, {"load": {"n": 1}}, {"x": 2})
    assert p.from_json(p.RunRequest, p.to_json(request)) == request
    assert (request.until, request.trigger, request.stepping) == ("load", None, None)
    stepping = RunRequest("a.json", "step")
    assert (stepping.until, stepping.stepping) == (None, "")
