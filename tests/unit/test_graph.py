"""Validation: build_graph finds every problem of a workflow before anything runs, each one
attached to its node with a way to fix it."""

from __future__ import annotations

import itertools

import pytest

from graphbook import Registry, Workflow, WorkflowError, build_graph
from graphbook.errors import Problem
from graphbook.nodes import library_registry
from graphbook.workflow import Edge


def problems(workflow: Workflow) -> list[Problem]:
    with pytest.raises(WorkflowError) as caught:
        build_graph(workflow, library_registry())
    return caught.value.problems


def only(workflow: Workflow) -> Problem:
    [problem] = problems(workflow)
    return problem


def copies(*ids: str) -> Workflow:
    workflow = Workflow()
    for node_id in ids:
        workflow.add("Copy", id=node_id)
    return workflow


def test_a_valid_workflow_builds() -> None:
    workflow = Workflow()
    source = workflow.add("LoadJSONL", id="src", jsonl_path="in.jsonl")
    fn = workflow.add("Function", id="fn", val="lambda d: True")
    split = workflow.add("Split", id="split", split_fn=fn)
    workflow.connect(source, split)
    graph = build_graph(workflow, library_registry())
    assert set(graph.nodes) == {"src", "fn", "split"}
    assert graph.nodes["src"].params == {"jsonl_path": "in.jsonl", "start_from": 0}
    assert graph.consumers("src", "out") == ["split"]


def test_unknown_node_type_with_a_suggestion() -> None:
    workflow = Workflow()
    workflow.add("Splitt", id="s")
    problem = only(workflow)
    assert problem == Problem("s", "unknown node type 'Splitt'", "did you mean 'Split'?")


def test_missing_required_parameter() -> None:
    workflow = Workflow()
    workflow.add("LoadJSONL", id="load")
    problem = only(workflow)
    assert problem.node_id == "load"
    assert problem.message == "required parameter 'jsonl_path' has no value"
    assert problem.fix == "give 'jsonl_path' a string, or wire a resource node to it"


def test_missing_required_function_says_a_resource_may_be_wired() -> None:
    workflow = Workflow()
    workflow.add("Split", id="split")
    problem = only(workflow)
    assert problem.message == "required parameter 'split_fn' has no value"
    assert problem.fix.endswith("or wire a resource node to it")


def test_missing_resource_parameter_says_to_wire_one() -> None:
    from graphbook import param, step

    @step("NeedsModel")
    @param("model", "resource", required=True)
    def needs_model(ctx: object, data: object) -> None: ...

    workflow = Workflow()
    workflow.add(needs_model, id="m")
    assert only(workflow) == Problem(
        "m", "required parameter 'model' has no value", "wire a resource node to 'model'"
    )


def test_wrong_parameter_type() -> None:
    workflow = Workflow()
    workflow.add("LoadJSONL", id="load", jsonl_path="x", start_from="ten")
    problem = only(workflow)
    assert problem.node_id == "load"
    assert "parameter 'start_from' expects a whole number, got str 'ten'" in problem.message
    assert problem.fix == "give 'start_from' a whole number"


def test_unknown_parameter() -> None:
    workflow = Workflow()
    workflow.add("DumpJSONL", id="dump", jsonl_path="x", jsonl_pth="y")
    problem = only(workflow)
    assert problem == Problem(
        "dump",
        "DumpJSONL has no parameter 'jsonl_pth'",
        "did you mean 'jsonl_path'? its parameters are: jsonl_path, overwrite",
    )


def test_edge_to_a_missing_node() -> None:
    workflow = copies("a")
    workflow.edges.append(Edge("a", "A", "ghost"))
    problem = only(workflow)
    assert problem.node_id == "a"
    assert problem.message == "an edge connects it to node 'ghost', which does not exist"


def test_edge_from_a_missing_output() -> None:
    workflow = copies("a", "b")
    workflow.edges.append(Edge("a", "out", "b"))
    problem = only(workflow)
    assert problem == Problem("a", "has no output 'out' (edge to 'b')", "its outputs are: A, B")


def test_edge_to_a_missing_parameter() -> None:
    workflow = copies("a")
    workflow.add("Number", id="num", val=1)
    workflow.edges.append(Edge("num", "resource", "a", "threshold"))
    problem = only(workflow)
    assert problem.node_id == "a"
    assert problem.message == "has no input or parameter 'threshold' (edge from 'num')"


def test_resource_wired_to_a_data_input() -> None:
    workflow = copies("a")
    workflow.add("Number", id="num", val=1)
    workflow.edges.append(Edge("num", "resource", "a", "in"))
    problem = only(workflow)
    assert problem.node_id == "a"
    assert problem.message == "resource 'num' is wired to its data input 'in'"
    assert "wire resources to a parameter" in problem.fix


def test_data_wired_into_a_source() -> None:
    workflow = copies("a")
    workflow.add("LoadJSONL", id="src", jsonl_path="x")
    workflow.edges.append(Edge("a", "A", "src"))
    problem = only(workflow)
    assert (problem.node_id, problem.message) == ("src", "takes no input, but 'a' is wired into it")


def test_step_output_wired_to_a_parameter() -> None:
    workflow = copies("a")
    workflow.add("Split", id="split", split_fn="lambda d: True")
    workflow.edges.append(Edge("a", "A", "split", "split_fn"))
    assert only(workflow) == Problem(
        "split",
        "parameter 'split_fn' is wired from the step output a.A",
        "only resource nodes can feed parameters; wire the step into 'in' instead",
    )


def test_a_parameter_wired_twice() -> None:
    workflow = Workflow()
    one = workflow.add("Function", id="one", val="lambda d: 1")
    workflow.add("Split", id="split", split_fn=one)
    workflow.add("Function", id="two", val="lambda d: 2")
    workflow.edges.append(Edge("two", "resource", "split", "split_fn"))
    problem = only(workflow)
    assert (problem.node_id, problem.message) == ("split", "parameter 'split_fn' is wired twice")


def test_a_cycle_names_its_nodes_and_only_them() -> None:
    workflow = copies("start", "a", "b", "c", "after")
    workflow.edges += [
        Edge("start", "A", "a"),
        Edge("a", "A", "b"),
        Edge("b", "A", "c"),
        Edge("c", "A", "a"),
        Edge("c", "B", "after"),
    ]
    problem = only(workflow)
    assert problem.node_id in {"a", "b", "c"}
    assert problem.message.startswith("is part of a cycle: ")
    path = problem.message.removeprefix("is part of a cycle: ").split(" -> ")
    assert set(path) == {"a", "b", "c"} and path[0] == path[-1] and len(path) == 4
    assert all(Edge(s, "A", t) in workflow.edges for s, t in itertools.pairwise(path))


def test_a_node_wired_to_itself_is_a_cycle() -> None:
    workflow = copies("a")
    workflow.edges.append(Edge("a", "B", "a"))
    assert only(workflow).message == "is part of a cycle: a -> a"


def test_every_problem_is_reported_at_once_each_naming_its_node() -> None:
    workflow = Workflow()
    workflow.add("Splitt", id="unknown")
    workflow.add("LoadJSONL", id="no_path")
    workflow.add("DumpJSONL", id="typo", jsonl_path="x", overwrite="maybe", extra=1)
    workflow.add("Copy", id="c1")
    workflow.add("Copy", id="c2")
    workflow.edges += [Edge("c1", "A", "c2"), Edge("c2", "A", "c1"), Edge("c1", "nope", "typo")]
    workflow.edges.append(Edge("no_path", "out", "missing"))
    found = problems(workflow)
    assert all(p.node_id is not None and p.message and p.fix for p in found)
    assert len(found) == 7
    messages = {(p.node_id, p.message.split(":")[0].split(" (")[0]) for p in found}
    assert messages >= {
        ("unknown", "unknown node type 'Splitt'"),
        ("no_path", "required parameter 'jsonl_path' has no value"),
        ("no_path", "an edge connects it to node 'missing', which does not exist"),
        ("typo", "parameter 'overwrite' expects true or false, got str 'maybe'"),
        ("typo", "DumpJSONL has no parameter 'extra'"),
        ("c1", "has no output 'nope'"),
    }
    assert any(p.message.startswith("is part of a cycle") for p in found)
    text = str(WorkflowError(found))
    assert text.startswith("workflow has 7 problem(s):")
    assert "node 'unknown': unknown node type 'Splitt' (did you mean 'Split'?)" in text


def test_graph_knows_ancestors_and_subgraphs() -> None:
    workflow = copies("a", "b", "c", "d")
    workflow.edges += [Edge("a", "A", "b"), Edge("b", "A", "c"), Edge("a", "B", "d")]
    graph = build_graph(workflow, library_registry())
    assert graph.ancestors("c") == {"a", "b", "c"}
    assert set(graph.subgraph(graph.ancestors("c")).nodes) == {"a", "b", "c"}
    assert list(graph.nodes).index("a") < list(graph.nodes).index("b")


def test_a_resource_wired_into_a_parameter_that_cannot_take_its_value() -> None:
    workflow = Workflow()
    workflow.add("Number", id="num", val=5)
    workflow.add("DumpJSONL", id="dump")
    workflow.edges.append(Edge("num", "resource", "dump", "jsonl_path"))
    problem = only(workflow)
    assert problem.node_id == "dump"
    assert problem.message == (
        "parameter 'jsonl_path' expects a string, but resource 'num' (Number) gives a number"
    )
    assert problem.fix == (
        "delete the wire and give 'jsonl_path' a value, or wire a resource that gives a string"
    )


def test_a_wire_bent_through_reroute_points_is_checked_as_the_same_wire() -> None:
    workflow = Workflow()
    workflow.add("Number", id="num", val=5)
    workflow.add("DumpJSONL", id="dump")
    workflow.edges.append(Edge("num", "resource", "dump", "jsonl_path", ((40.0, 80.0), (90, 10))))
    assert "resource 'num' (Number) gives a number" in only(workflow).message
    workflow.edges.append(Edge("dump", "out", "dump"))
    assert "is part of a cycle: dump -> dump" in problems(workflow)[-1].message


def test_what_resources_give_decides_where_they_may_be_wired() -> None:
    from graphbook import resource

    @resource("Model")
    def model(ctx: object) -> Registry:  # any class other than str, list, ...: an object
        return Registry()

    @resource("Path")
    def path(ctx: object) -> str:
        return "out.jsonl"

    registry = library_registry()
    registry.add(model)
    registry.add(path)
    assert registry.get("Model").gives == "object"
    assert registry.get("Path").gives == "string"
    assert [registry.get(n).gives for n in ("Number", "Text", "Function", "List", "Dict")] == [
        "number",
        "string",
        "function",
        "list",
        "dict",
    ]

    def wired(source: str, target: str, name: str, **params: object) -> Workflow:
        workflow = Workflow()
        workflow.add(source, id="r")
        workflow.add(target, id="t", **params)
        workflow.edges.append(Edge("r", "resource", "t", name))
        return workflow

    build_graph(wired("Path", "DumpJSONL", "jsonl_path"), registry)
    build_graph(wired("Number", "LoadJSONL", "start_from", jsonl_path="x"), registry)
    with pytest.raises(WorkflowError, match="gives a Python object"):
        build_graph(wired("Model", "DumpJSONL", "jsonl_path"), registry)
