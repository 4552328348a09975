"""Files in Graphbook 0.13's own format open as workflows and validate as they are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphbook import Registry, Workflow, WorkflowFormatError, build_graph
from graphbook.nodes import library_registry
from graphbook.workflow import Edge

FIXTURES = Path(__file__).parent.parent / "fixtures"
SIMPLE = FIXTURES / "graphbook013_simple_workflow.json"


def registry() -> Registry:
    registry = library_registry()
    registry.load_file(FIXTURES / "graphbook013_nodes.py")
    assert not registry.failures
    return registry


def test_steps_and_resources_become_nodes() -> None:
    workflow = Workflow.load(SIMPLE)
    assert {i: n.type for i, n in workflow.nodes.items()} == {
        "0": "MyFirstStep",
        "2": "Number",
        "3": "MyFirstSource",
        "5": "AddLabel",
        "6": "AddLabel",
        "7": "DumpJSONL",
    }


def test_params_come_from_value_and_falsy_values_are_kept() -> None:
    nodes = Workflow.load(SIMPLE).nodes
    assert nodes["3"].params == {"amount": 10, "message": "Hello, World!"}
    assert nodes["2"].params == {"val": 0.5}
    assert nodes["0"].params == {}  # a resource param has no value: it is wired
    assert nodes["6"].params == {"label": ""}
    assert nodes["7"].params == {"jsonl_path": "picked.jsonl", "overwrite": False}


def test_a_resource_is_wired_to_the_parameter_named_by_target_handle() -> None:
    assert Edge("2", "resource", "0", "prob") in Workflow.load(SIMPLE).edges


def test_group_children_get_absolute_positions() -> None:
    nodes = Workflow.load(SIMPLE).nodes
    assert nodes["5"].position == (940.0, 160.0)  # group at (900, 100) + child at (40, 60)
    assert nodes["6"].position == (900.0, 420.25)


def test_labels_are_kept_only_when_they_differ_from_the_name() -> None:
    nodes = Workflow.load(SIMPLE).nodes
    assert nodes["5"].label == "Tag as picked"
    assert nodes["0"].label == nodes["6"].label == ""


def test_groups_are_flattened_into_direct_edges() -> None:
    assert sorted(Workflow.load(SIMPLE).edges, key=Edge.sort_key) == [
        Edge("0", "A", "5", "in"),  # through the group's input handle
        Edge("0", "B", "6", "in"),
        Edge("2", "resource", "0", "prob"),
        Edge("3", "out", "0", "in"),
        Edge("5", "out", "7", "in"),  # through the group's output handle
    ]


def test_ui_only_fields_are_dropped_from_the_canonical_form(tmp_path: Path) -> None:
    saved = Workflow.load(SIMPLE).save(tmp_path / "simple.json").read_text(encoding="utf-8")
    for noise in ("isCollapsed", "selected", "positionAbsolute", "reactflow", "parentId"):
        assert noise not in saved
    assert Workflow.load(tmp_path / "simple.json").to_json() == Workflow.load(SIMPLE).to_json()


def test_it_validates_with_its_nodes_registered() -> None:
    graph = build_graph(Workflow.load(SIMPLE), registry())
    assert graph.nodes["0"].resources == {"prob": "2"}
    assert graph.nodes["3"].params == {"message": "Hello, World!", "amount": 10}
    assert graph.nodes["5"].title == "Tag as picked"
    order = list(graph.nodes)
    assert order.index("3") < order.index("0") < order.index("5") < order.index("7")


def test_its_nodes_build_and_process_data() -> None:
    graph = build_graph(Workflow.load(SIMPLE), registry())
    source = graph.nodes["3"].spec.build({**graph.nodes["3"].params, "amount": 7})
    prob = graph.nodes["2"].spec.build(graph.nodes["2"].params).value()
    first = graph.nodes["0"].spec.build({"prob": prob})
    routed = [first(data) for _, data in next(source.produce())]
    assert [list(r) for r in routed] == [["A"]] * 5 + [["B"]] * 2  # num / 10 < 0.5 goes to A
    assert routed[0] == {"A": [{"message": "Hello, World!", "num": 0}]}


def graphbook_file(nodes: list[Any], edges: list[Any] | None = None) -> str:
    return json.dumps({"version": "0", "type": "workflow", "nodes": nodes, "edges": edges or []})


def step_node(node_id: str, name: str = "Copy") -> dict[str, Any]:
    return {"id": node_id, "type": "step", "position": {"x": 0, "y": 0}, "data": {"name": name}}


def test_a_subflow_node_is_refused_clearly() -> None:
    subflow = {
        "id": "9",
        "type": "subflow",
        "position": {"x": 0, "y": 0},
        "data": {"name": "Subflow", "label": "Cleaning", "filename": "clean.json"},
    }
    with pytest.raises(WorkflowFormatError) as caught:
        Workflow.loads(graphbook_file([step_node("1"), subflow]), name="main.json")
    message = str(caught.value)
    assert "main.json: node '9' is a subflow of clean.json" in message
    assert "subflows are not supported" in message and "copy its nodes in" in message


def test_export_nodes_are_left_out_as_graphbook_does_at_the_top_level() -> None:
    export = {"id": "4", "type": "export", "data": {"label": "Output", "exportType": "output"}}
    edges = [{"source": "1", "sourceHandle": "A", "target": "4", "targetHandle": "out"}]
    workflow = Workflow.loads(graphbook_file([step_node("1"), export], edges))
    assert list(workflow.nodes) == ["1"] and workflow.edges == []


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ([step_node("1"), step_node("1")], "two nodes have id '1'"),
        ([{"type": "step", "data": {"name": "Copy"}}], r"nodes\[0\] needs an 'id'"),
        ([{"id": "1", "type": "step", "data": {}}], "node '1' has no data.name"),
        ([{"id": "1", "type": "note"}], "has type 'note'; Graphbook files hold nodes of type"),
        (
            [{"id": "1", "type": "step", "data": {"name": "Copy", "parameters": [1]}}],
            "data.parameters must be an object",
        ),
    ],
)
def test_bad_graphbook_files_give_a_useful_error(nodes: list[Any], message: str) -> None:
    with pytest.raises(WorkflowFormatError, match=message):
        Workflow.loads(graphbook_file(nodes))


def test_an_edge_without_a_target_is_an_error() -> None:
    with pytest.raises(WorkflowFormatError, match="an edge has no 'target'"):
        Workflow.loads(graphbook_file([step_node("1")], [{"source": "1"}]))


def test_edges_to_nodes_that_do_not_exist_are_dropped_as_graphbook_does() -> None:
    edges = [{"source": "1", "sourceHandle": "A", "target": "99", "targetHandle": "in"}]
    assert Workflow.loads(graphbook_file([step_node("1")], edges)).edges == []
