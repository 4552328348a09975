"""Workflow files: the canonical format round-trips, saves atomically and stably, refuses bad
files clearly; and the Python builder makes the expected edges."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from graphbook import Workflow, WorkflowFormatError, build_graph
from graphbook.nodes import library_registry
from graphbook.workflow import Edge, Group

ROOT = Path(__file__).resolve().parents[2]


def example() -> Workflow:
    workflow = Workflow(doc="Split rows by score.")
    rows = workflow.add("LoadJSONL", id="rows", jsonl_path="rows.jsonl", start_from=0)
    keep = workflow.add("Function", id="keep", val="lambda d: d['score'] > 0.5")
    split = workflow.add("Split", id="split", split_fn=keep)
    workflow.connect(rows, split)
    high = workflow.add("DumpJSONL", id="high", jsonl_path="high.jsonl", overwrite=False)
    low = workflow.add("DumpJSONL", id="low", jsonl_path="low.jsonl")
    workflow.connect(split["A"], high)
    workflow.connect(split["B"], low)
    return workflow


def test_save_then_load_gives_the_same_workflow(tmp_path: Path) -> None:
    workflow = example()
    rows = workflow.nodes["rows"]
    workflow.nodes["rows"] = replace(rows, position=(10.5, -20.0), label="Read rows")
    path = workflow.save(tmp_path / "split.json")
    loaded = Workflow.load(path)
    assert loaded.to_json() == workflow.to_json()
    assert loaded.doc == "Split rows by score."
    assert loaded.nodes["rows"].position == (10.5, -20.0)
    assert loaded.nodes["rows"].label == "Read rows"
    assert loaded.nodes["high"].params == {"jsonl_path": "high.jsonl", "overwrite": False}


def test_the_file_is_plain_readable_json(tmp_path: Path) -> None:
    data = json.loads(example().save(tmp_path / "w.json").read_text(encoding="utf-8"))
    assert list(data) == ["format", "version", "doc", "nodes", "edges"]
    assert (data["format"], data["version"]) == ("graphbook.workflow", 1)
    assert data["nodes"][0] == {
        "id": "high",
        "type": "DumpJSONL",
        "params": {"jsonl_path": "high.jsonl", "overwrite": False},
        "position": {"x": 0, "y": 0},
    }
    assert {"source": "keep", "output": "resource", "target": "split", "input": "split_fn"} in (
        data["edges"]
    )


def test_saving_twice_gives_identical_bytes(tmp_path: Path) -> None:
    first = example().save(tmp_path / "a.json").read_bytes()
    workflow = Workflow.load(tmp_path / "a.json")
    second = workflow.save(tmp_path / "b.json").read_bytes()
    assert first == second
    assert workflow.dumps() == workflow.dumps()


def test_output_does_not_depend_on_the_order_nodes_and_edges_were_added() -> None:
    ids = ["n10", "n2", "n1", "src", "01", "1"]
    forward, backward = Workflow(), Workflow()
    for node_id in ids:
        forward.add("Copy", id=node_id)
    for node_id in reversed(ids):
        backward.add("Copy", id=node_id)
    edges = [Edge("src", "A", "n1"), Edge("n1", "B", "n2"), Edge("n2", "A", "n10")]
    forward.edges.extend(edges)
    backward.edges.extend(reversed(edges))
    assert forward.dumps() == backward.dumps()
    assert [n["id"] for n in forward.to_json()["nodes"]] == ["01", "1", "n1", "n2", "n10", "src"]


def test_params_are_saved_sorted_by_name() -> None:
    workflow = Workflow()
    workflow.add("DumpJSONL", id="d", overwrite=True, jsonl_path="x")
    assert list(workflow.to_json()["nodes"][0]["params"]) == ["jsonl_path", "overwrite"]


def test_saving_an_unsaveable_param_fails_clearly_and_keeps_the_old_file(tmp_path: Path) -> None:
    path = example().save(tmp_path / "w.json")
    before = path.read_bytes()
    workflow = example()
    workflow.set("rows", jsonl_path=object())
    with pytest.raises(WorkflowFormatError, match=r"node 'rows': parameter 'jsonl_path' holds"):
        workflow.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"]  # no temporary file left behind


def test_nan_is_refused_because_browsers_cannot_read_it(tmp_path: Path) -> None:
    workflow = Workflow()
    workflow.add("Number", id="n", val=float("nan"))
    with pytest.raises(WorkflowFormatError, match=r"node 'n': parameter 'val'.*NaN"):
        workflow.save(tmp_path / "w.json")
    assert not (tmp_path / "w.json").exists()


def test_tuples_are_saved_as_lists_and_read_back_equal(tmp_path: Path) -> None:
    workflow = Workflow()
    workflow.add("List", id="l", val=(1, 2))
    loaded = Workflow.load(workflow.save(tmp_path / "w.json"))
    assert loaded.to_json() == workflow.to_json()
    assert loaded.nodes["l"].params == {"val": [1, 2]}


def test_saving_creates_the_folder(tmp_path: Path) -> None:
    path = example().save(tmp_path / "deep" / "er" / "w.json")
    assert Workflow.load(path).to_json() == example().to_json()


def canonical(**overrides: Any) -> str:
    data: dict[str, Any] = {"format": "graphbook.workflow", "version": 1, "nodes": [], "edges": []}
    data.update(overrides)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", r"w\.json is not valid JSON: .* at line 1, column 2"),
        ("[1, 2]", "a workflow is a JSON object, not a list"),
        ('{"format": "something.else"}', 'expected "format": "graphbook.workflow"'),
        (canonical(version=2), "format version 2 is not supported; this Graphbook reads version 1"),
        (canonical(version="1"), "format version '1' is not supported"),
        (canonical(nodes={"a": {}}), "'nodes' must be a list, not an object"),
        (canonical(edges="a->b"), "'edges' must be a list, not a string"),
        (canonical(nodes=[{"id": "a"}]), r"nodes\[0\] \(id 'a'\) needs a string 'type'"),
        (canonical(nodes=[{"type": "Copy"}]), r"nodes\[0\] needs a non-empty string 'id'"),
        (canonical(nodes=["Copy"]), r"nodes\[0\] must be an object, not a string"),
        (
            canonical(nodes=[{"id": "a", "type": "Copy"}, {"id": "a", "type": "Split"}]),
            "two nodes have id 'a'; ids must be unique",
        ),
        (canonical(edges=[{"source": "a", "target": "b"}]), r"edges\[0\] needs string field"),
        (canonical(nodes=[{"id": "a", "type": "Copy", "params": [1]}]), "'params' must be an obj"),
    ],
)
def test_bad_files_give_a_useful_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "w.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WorkflowFormatError, match=message):
        Workflow.load(path)


def test_a_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(WorkflowFormatError, match="cannot read workflow"):
        Workflow.load(tmp_path / "nope.json")


def test_builder_wires_data_edges_and_named_outputs() -> None:
    edges = set(example().edges)
    assert Edge("rows", "out", "split", "in") in edges
    assert Edge("split", "A", "high", "in") in edges
    assert Edge("split", "B", "low", "in") in edges


def test_builder_wires_a_resource_passed_as_a_param() -> None:
    workflow = example()
    assert Edge("keep", "resource", "split", "split_fn") in workflow.edges
    assert "split_fn" not in workflow.nodes["split"].params


def test_builder_gives_fresh_ids_and_refuses_duplicates() -> None:
    workflow = Workflow()
    first, second = workflow.add("Copy"), workflow.add("Copy")
    assert (first.id, second.id) == ("0", "1")
    with pytest.raises(ValueError, match="already exists"):
        workflow.add("Copy", id="0")


def test_builder_connects_to_a_named_input_port() -> None:
    workflow = Workflow()
    a, b = workflow.add("Copy", id="a"), workflow.add("Copy", id="b")
    workflow.connect(a["B"], b["in"])
    assert workflow.edges == [Edge("a", "B", "b", "in")]


def test_builder_accepts_node_code_and_registers_it_when_built() -> None:
    from graphbook import step

    @step("Custom/Double")
    def double(ctx: Any, data: dict[str, Any]) -> None:
        data["x"] *= 2

    workflow = Workflow()
    workflow.add(double, id="d")
    assert workflow.nodes["d"].type == "Double"
    registry = library_registry()
    graph = build_graph(workflow, registry)
    assert "Double" in registry
    assert graph.nodes["d"].spec.build({})({"x": 2}) == {"out": [{"x": 4}]}


def test_the_built_workflow_validates() -> None:
    graph = build_graph(example(), library_registry())
    order = list(graph.nodes)
    assert order.index("rows") < order.index("split") < order.index("high")
    assert order.index("keep") < order.index("split")
    assert graph.nodes["split"].resources == {"split_fn": "keep"}


DOC = Path(__file__).parents[2] / "docs" / "workflow-format.md"


def doc_block(language: str, after: str = "## A complete example") -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(after) :]
    start = section.index(f"```{language}\n") + len(f"```{language}\n")
    return section[start : section.index("```", start)]


def test_the_documented_example_is_valid_and_canonical() -> None:
    text = doc_block("json")
    workflow = Workflow.loads(text, name="docs example")
    graph = build_graph(workflow, library_registry())
    assert set(graph.nodes) == {"rows", "is_high", "split", "high", "low"}
    assert graph.nodes["split"].resources == {"split_fn": "is_high"}
    assert workflow.dumps() == text  # the doc shows exactly what Graphbook writes


def test_the_documented_python_builds_the_documented_file(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(doc_block("python"), namespace)
    built = Workflow.load(tmp_path / "split.json").to_json()
    documented = Workflow.loads(doc_block("json")).to_json()
    for data in (built, documented):
        for node in data["nodes"]:
            node.pop("position"), node.pop("label", None)
    assert built == documented


# -- groups -----------------------------------------------------------------------------------
def grouped() -> Workflow:
    workflow = example()
    workflow.group("Outputs", ["low", "high"], id="out", position=(480, -40.04), size=(320, 300))
    return workflow


def test_groups_are_saved_after_the_edges_and_read_back(tmp_path: Path) -> None:
    path = grouped().save(tmp_path / "w.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["format", "version", "doc", "nodes", "edges", "groups"]
    assert data["groups"] == [
        {
            "id": "out",
            "label": "Outputs",
            "position": {"x": 480, "y": -40},
            "size": {"width": 320, "height": 300},
            "nodes": ["high", "low"],
        }
    ]
    loaded = Workflow.load(path)
    assert loaded.to_json() == grouped().to_json()
    assert loaded.groups["out"].nodes == ("high", "low")
    assert loaded.dumps() == path.read_text(encoding="utf-8")


def test_a_group_is_one_block_with_each_field_on_one_line() -> None:
    text = grouped().dumps()
    assert text.endswith(
        '  "groups": [\n'
        "    {\n"
        '      "id": "out",\n'
        '      "label": "Outputs",\n'
        '      "position": {"x": 480, "y": -40},\n'
        '      "size": {"width": 320, "height": 300},\n'
        '      "nodes": ["high", "low"]\n'
        "    }\n"
        "  ]\n"
        "}\n"
    )


def test_a_workflow_without_groups_has_no_groups_key() -> None:
    assert "groups" not in example().to_json()
    assert '"groups"' not in example().dumps()


def test_groups_are_sorted_by_id_whatever_order_they_were_drawn_in() -> None:
    workflow = example()
    workflow.group("B", ["low"], id="g10")
    workflow.group("A", ["high"], id="g2")
    assert [g["id"] for g in workflow.to_json()["groups"]] == ["g2", "g10"]


def test_builder_draws_a_box_around_the_nodes_and_gives_readable_ids() -> None:
    workflow = example()
    workflow.nodes["high"] = replace(workflow.nodes["high"], position=(500.0, 0.0))
    workflow.nodes["low"] = replace(workflow.nodes["low"], position=(500.0, 200.0))
    first = workflow.group("Outputs", [workflow.nodes["high"].id, "low"])
    second = workflow.group("Inputs", ["rows"])
    assert (first.id, second.id) == ("group", "group_2")
    assert first.position == (468.0, -60.0)  # 32 of margin, and 28 more for the label above
    assert first.size == (304.0, 412.0)


def test_builder_refuses_unknown_nodes_nodes_in_two_groups_and_taken_ids() -> None:
    workflow = example()
    with pytest.raises(ValueError, match="cannot group node 'ghost'"):
        workflow.group("G", ["ghost"])
    workflow.group("G", ["rows"], id="g")
    with pytest.raises(ValueError, match="node 'rows' is in group 'g' already"):
        workflow.group("H", ["rows"])
    with pytest.raises(ValueError, match="already exists"):
        workflow.group("H", ["high"], id="split")
    with pytest.raises(ValueError, match="already exists"):
        workflow.add("Copy", id="g")


def test_a_group_naming_a_missing_node_drops_it_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = grouped().to_json()
    data["groups"][0]["nodes"].append("ghost")
    loaded = Workflow.from_json(data, "w.json")
    assert loaded.groups["out"].nodes == ("high", "low")
    assert "w.json: group 'out' names node 'ghost', which does not exist" in caplog.text
    assert loaded.to_json() == grouped().to_json()


def test_groups_do_not_change_the_graph() -> None:
    registry = library_registry()
    plain, boxed = build_graph(example(), registry), build_graph(grouped(), registry)
    assert list(plain.nodes) == list(boxed.nodes)
    assert plain.edges == boxed.edges


def group(**fields: Any) -> dict[str, Any]:
    return {"id": "g", "label": "G", "nodes": ["a"], **fields}


A_NODE = [{"id": "a", "type": "Copy"}]


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ({"g": {}}, "'groups' must be a list, not an object"),
        (["g"], r"groups\[0\] must be an object, not a string"),
        ([{"nodes": ["a"]}], r"groups\[0\] needs a non-empty string 'id'"),
        ([group(label=3)], r"groups\[0\] \(id 'g'\): 'label' must be a string"),
        ([group(nodes="a")], r"groups\[0\] \(id 'g'\): 'nodes' must be a list of node ids"),
        ([group(nodes=None)], r"'nodes' must be a list of node ids"),
        ([group(position=[1, 2])], r"'position' must be \{\"x\": number, \"y\": number\}"),
        ([group(size={"width": "wide", "height": 2})], r"'size' must be \{\"width\": number"),
        ([group(size={"width": 0, "height": 2})], "'size' must have a positive width and height"),
        ([group(), group(nodes=[])], "two groups have id 'g'; ids must be unique"),
        ([group(id="a")], "group 'a' has the id of a node; give the group another id"),
        (
            [group(), group(id="h")],
            "node 'a' is in groups 'g' and 'h'; a node can be in one group only",
        ),
    ],
)
def test_bad_groups_give_a_useful_error(groups: Any, message: str) -> None:
    with pytest.raises(WorkflowFormatError, match=message):
        Workflow.loads(canonical(nodes=A_NODE, groups=groups), name="w.json")


def test_a_group_may_leave_out_its_label_position_and_size() -> None:
    loaded = Workflow.loads(canonical(nodes=A_NODE, groups=[{"id": "g", "nodes": ["a"]}]))
    assert loaded.groups["g"] == Group("g", "", ("a",), (0.0, 0.0), (300.0, 200.0))


def test_the_documented_group_file_is_canonical() -> None:
    text = doc_block("json", after="## Groups")
    workflow = Workflow.loads(text, name="docs group")
    assert workflow.groups["outputs"].nodes == ("high", "low")
    assert workflow.dumps() == text


def test_a_resized_or_folded_node_keeps_its_width_and_fold_and_bad_ones_are_named() -> None:
    text = (
        '{"format": "graphbook.workflow", "version": 1, "nodes": [{"id": "a", "type": "Copy", '
        '"position": {"x": 0, "y": 0}, "width": 412.25, "collapsed": true}], "edges": []}'
    )
    workflow = Workflow.loads(text)
    node = workflow.nodes["a"]
    assert (node.width, node.collapsed) == (412.25, True)
    assert '"position": {"x": 0, "y": 0},\n      "width": 412.2,\n      "collapsed": true\n' in (
        workflow.dumps()
    )
    assert '"width"' not in Workflow.loads(text.replace(', "width": 412.25', "")).dumps()
    for bad, words in (
        ('"width": -3', "'width' must be a positive number"),
        ('"collapsed": 1', "'collapsed' must be true or false"),
    ):
        with pytest.raises(WorkflowFormatError, match=words):
            Workflow.loads(text.replace('"width": 412.25, "collapsed": true', bad))


def test_a_coloured_node_keeps_its_colour_and_a_colour_we_do_not_have_is_named() -> None:
    text = (
        '{"format": "graphbook.workflow", "version": 1, "nodes": [{"id": "a", "type": "Copy", '
        '"position": {"x": 0, "y": 0}, "color": "green"}], "edges": []}'
    )
    workflow = Workflow.loads(text)
    assert workflow.nodes["a"].color == "green"
    assert '"position": {"x": 0, "y": 0},\n      "color": "green"\n' in workflow.dumps()
    assert '"color"' not in Workflow.loads(text.replace(', "color": "green"', "")).dumps()
    for bad in ('"color": "pink"', '"color": 3'):
        with pytest.raises(WorkflowFormatError, match="'color' must be one of red, orange"):
            Workflow.loads(text.replace('"color": "green"', bad))


def test_comments_on_the_canvas_are_kept_in_the_file_and_bad_ones_are_named() -> None:
    text = (
        '{"format": "graphbook.workflow", "version": 1, "nodes": [], "edges": [], "comments": '
        '[{"id": "c2", "text": "**Read** me", "position": {"x": 1, "y": 2}}, '
        '{"id": "c10", "text": "later", "position": {"x": 0.04, "y": 0}, "width": 300}]}'
    )
    workflow = Workflow.loads(text)
    assert [(c.id, c.text, c.width) for c in workflow.comments.values()] == [
        ("c2", "**Read** me", 240.0),
        ("c10", "later", 300.0),
    ]
    dumped = workflow.dumps()
    assert dumped.index('"id": "c2"') < dumped.index('"id": "c10"')
    assert '      "position": {"x": 0, "y": 0},\n      "width": 300\n' in dumped
    assert Workflow.loads(dumped).dumps() == dumped
    with pytest.raises(
        WorkflowFormatError, match=r"comments\[0\] \(id 'c2'\): 'text' must be a string"
    ):
        Workflow.loads(text.replace('"**Read** me"', "3"))


def test_a_bypassed_or_muted_node_keeps_its_mode_and_an_active_one_writes_none() -> None:
    text = (
        '{"format": "graphbook.workflow", "version": 1, "nodes": [{"id": "a", "type": "Copy", '
        '"position": {"x": 0, "y": 0}, "mode": "bypass"}], "edges": []}'
    )
    workflow = Workflow.loads(text)
    assert workflow.nodes["a"].mode == "bypass"
    assert '"position": {"x": 0, "y": 0},\n      "mode": "bypass"\n    }' in workflow.dumps()
    workflow.set_mode("a", "mute")
    assert '"mode": "mute"' in workflow.dumps()
    workflow.set_mode("a", "active")
    assert '"mode"' not in workflow.dumps()
    with pytest.raises(WorkflowFormatError, match=r"'mode' must be \"bypass\" or \"mute\""):
        Workflow.loads(text.replace('"bypass"', '"off"'))
    with pytest.raises(ValueError, match="a node's mode is one of active, bypass, mute"):
        workflow.set_mode("a", "off")  # type: ignore[arg-type]


def test_every_example_workflow_saves_again_byte_for_byte() -> None:
    for path in sorted((ROOT / "workflows").glob("*.json")):
        text = path.read_text(encoding="utf-8")
        if '"format": "graphbook.workflow"' in text:
            assert Workflow.loads(text).dumps() == text, path.name


def test_reroute_points_stay_on_their_edge_line_and_bad_ones_are_named() -> None:
    text = (
        '{"format": "graphbook.workflow", "version": 1, "nodes": [], "edges": [{"source": "a", '
        '"output": "out", "target": "b", "input": "in", "points": [{"x": 10.04, "y": -2}]}]}'
    )
    workflow = Workflow.loads(text)
    assert workflow.edges[0].points == ((10.04, -2.0),)
    line = (
        '    {"source": "a", "output": "out", "target": "b", "input": "in", '
        '"points": [{"x": 10, "y": -2}]}\n'
    )
    assert line in workflow.dumps()
    assert Workflow.loads(workflow.dumps()).dumps() == workflow.dumps()
    assert workflow.edges[0] == Edge("a", "out", "b")  # the same wire, wherever it bends
    for bad, words in (
        ('"points": 3', "'points' must be a list"),
        ('"points": [{"x": 1}]', r"edges\[0\]: points\[0\] must be \{\"x\": number"),
    ):
        with pytest.raises(WorkflowFormatError, match=words):
            Workflow.loads(text.replace('"points": [{"x": 10.04, "y": -2}]', bad))
