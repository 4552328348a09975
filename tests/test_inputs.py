"""Workflow inputs: the file format and the builder (round trip), the JSON Schema of a
workflow's inputs, values turned into overrides, and the problems named when they are wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphbook import Workflow
from graphbook.engine.executor import run_workflow
from graphbook.errors import GraphbookError, WorkflowError, WorkflowFormatError
from graphbook.graph import build_graph
from graphbook.inputs import input_schema, merge, overrides_from_inputs, parse_inputs
from graphbook.nodes import library_registry

REGISTRY = library_registry()


def rows_to_file(source: str = "", target: str = "out.jsonl") -> Workflow:
    """rows (LoadJSONL) -> out (DumpJSONL), with three inputs."""
    wf = Workflow()
    rows = wf.add("LoadJSONL", id="rows", jsonl_path=source)
    out = wf.add("DumpJSONL", id="out", jsonl_path=target)
    wf.connect(rows, out)
    wf.input("rows", rows, "jsonl_path", description="the rows to read")
    wf.input("skip", rows, "start_from")
    wf.input("destination", out, "jsonl_path")
    return wf


def test_inputs_are_written_sorted_after_doc_and_read_back_the_same() -> None:
    wf = rows_to_file("in.jsonl")
    text = wf.dumps()
    assert text.splitlines()[3:8] == [
        '  "inputs": {',
        '    "destination": {"node": "out", "param": "jsonl_path"},',
        '    "rows": {"node": "rows", "param": "jsonl_path", "description": "the rows to read"},',
        '    "skip": {"node": "rows", "param": "start_from"}',
        "  },",
    ]
    again = Workflow.loads(text)
    assert again.inputs == wf.inputs
    assert again.dumps() == text


def test_a_workflow_without_inputs_writes_no_inputs_key() -> None:
    wf = Workflow()
    wf.add("LoadJSONL", id="rows", jsonl_path="a.jsonl")
    assert "inputs" not in wf.to_json()


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ([], ["'inputs' must be an object"]),
        ({"two words": {"node": "rows", "param": "x"}}, ["'two words'", "not a word"]),
        ({"rows": "rows.jsonl_path"}, ["inputs['rows']", "must be an object"]),
        ({"rows": {"node": "rows"}}, ["inputs['rows']", '"param": NAME']),
        ({"rows": {"node": "rows", "param": "p", "description": 3}}, ["'description'"]),
    ],
)
def test_a_malformed_inputs_key_is_refused_naming_it(inputs: Any, words: list[str]) -> None:
    data = rows_to_file().to_json() | {"inputs": inputs}
    with pytest.raises(WorkflowFormatError) as caught:
        Workflow.from_json(data, "wf.json")
    for word in words:
        assert word in str(caught.value)


def test_the_builder_refuses_a_bad_name_or_an_unknown_node() -> None:
    wf = rows_to_file()
    with pytest.raises(ValueError, match="not a word"):
        wf.input("1st", "rows", "jsonl_path")
    with pytest.raises(ValueError, match="no node 'ghost'"):
        wf.input("ghost", "ghost", "jsonl_path")


def test_the_schema_has_types_defaults_descriptions_and_required() -> None:
    schema = input_schema(rows_to_file(""), REGISTRY)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["properties"] == {
        "destination": {
            "type": "string",
            "format": "file",
            "description": "path of the file",
            "default": "out.jsonl",
        },
        "rows": {"type": "string", "format": "file", "description": "the rows to read"},
        "skip": {"type": "integer", "description": "first line to read", "default": 0},
    }
    assert schema["required"] == ["rows"]  # saved empty, and LoadJSONL has no default
    with_rows = input_schema(rows_to_file("in.jsonl"), REGISTRY)
    assert with_rows["required"] == [] and with_rows["properties"]["rows"]["default"] == "in.jsonl"


def test_booleans_and_lists_map_to_json_schema_types() -> None:
    wf = Workflow()
    out = wf.add("DumpJSONL", id="out", jsonl_path="o.jsonl", overwrite=False)
    wf.input("overwrite", out, "overwrite")
    assert input_schema(wf, REGISTRY)["properties"]["overwrite"]["type"] == "boolean"
    assert input_schema(wf, REGISTRY)["properties"]["overwrite"]["default"] is False


def test_values_become_overrides_by_node_id() -> None:
    wf = rows_to_file("")
    overrides = overrides_from_inputs(wf, {"rows": "a.jsonl", "skip": 2}, REGISTRY)
    assert overrides == {"rows": {"jsonl_path": "a.jsonl", "start_from": 2}}


def test_wrong_values_name_the_input_its_node_and_the_type() -> None:
    wf = rows_to_file("in.jsonl")
    with pytest.raises(WorkflowError) as caught:
        overrides_from_inputs(wf, {"skip": "many", "limit": 3}, REGISTRY)
    text = str(caught.value)
    assert "node 'rows': input 'skip'" in text and "a whole number" in text and "type int" in text
    assert "no input 'limit'" in text and "its inputs are: destination, rows, skip" in text


def test_a_required_input_left_out_is_named() -> None:
    with pytest.raises(WorkflowError, match=r"input 'rows' .* is required"):
        overrides_from_inputs(rows_to_file(""), {"skip": 1}, REGISTRY)


def test_text_values_are_read_as_their_parameters_type() -> None:
    wf = rows_to_file("in.jsonl")
    assert parse_inputs(wf, REGISTRY, ["skip=3", "rows=a=b.jsonl"]) == {
        "skip": 3,
        "rows": "a=b.jsonl",
    }
    with pytest.raises(GraphbookError, match=r"--input 'skip=x': node 'rows'.*type int"):
        parse_inputs(wf, REGISTRY, ["skip=x"])
    with pytest.raises(GraphbookError, match="write NAME=VALUE"):
        parse_inputs(wf, REGISTRY, ["skip"])


def test_inputs_and_overrides_merge_and_a_conflict_is_named() -> None:
    wf = rows_to_file("in.jsonl")
    merged = merge(wf, {"out": {"overwrite": True}}, {"rows": {"start_from": 1}})
    assert merged == {"out": {"overwrite": True}, "rows": {"start_from": 1}}
    assert merge(wf, {"rows": {"start_from": 1}}, {"rows": {"start_from": 1}}) == {
        "rows": {"start_from": 1}
    }
    with pytest.raises(WorkflowError) as caught:
        merge(wf, {"LoadJSONL": {"start_from": 2}}, {"rows": {"start_from": 1}})
    assert "node 'rows': parameter 'start_from' is given twice" in str(caught.value)


@pytest.mark.parametrize(
    ("node", "param", "words"),
    [
        ("ghost", "jsonl_path", ["input 'bad'", "node 'ghost', which does not exist"]),
        ("rows", "nope", ["node 'rows'", "'nope', which LoadJSONL does not have", "jsonl_path"]),
    ],
)
def test_an_input_naming_a_missing_node_or_parameter_is_a_problem(
    node: str, param: str, words: list[str]
) -> None:
    data = rows_to_file("in.jsonl").to_json()
    data["inputs"]["bad"] = {"node": node, "param": param}
    wf = Workflow.from_json(data)
    with pytest.raises(WorkflowError) as caught:
        build_graph(wf, REGISTRY)
    assert len(caught.value.problems) == 1
    for word in words:
        assert word in str(caught.value)
    with pytest.raises(WorkflowError):
        input_schema(wf, REGISTRY)


def test_two_inputs_on_one_parameter_and_a_wired_parameter_are_problems() -> None:
    wf = Workflow()
    fn = wf.add("Function", id="fn", val="lambda d: True")
    split = wf.add("Split", id="split", split_fn=fn)
    wf.input("test", split, "split_fn")
    wf.input("a", fn, "val")
    wf.input("b", fn, "val")
    with pytest.raises(WorkflowError) as caught:
        build_graph(wf, REGISTRY)
    messages = [p.message for p in caught.value.problems]
    assert any("inputs 'a' and 'b' both set parameter 'val'" in m for m in messages)
    assert any("input 'test'" in m and "resource node wired to it" in m for m in messages)


def test_run_workflow_takes_inputs_as_the_file_takes_saved_values(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"i": i}) + "\n" for i in range(5)))
    saved, given = tmp_path / "saved.jsonl", tmp_path / "given.jsonl"
    file_wf = rows_to_file(str(rows), str(saved))
    file_wf.set("rows", start_from=2)
    run_workflow(file_wf, registry=library_registry())
    inputs = {"rows": str(rows), "skip": 2, "destination": str(given)}
    run_workflow(rows_to_file("", "x.jsonl"), registry=library_registry(), inputs=inputs)
    assert given.read_bytes() == saved.read_bytes()
    assert len(saved.read_text().splitlines()) == 3


DOC = Path(__file__).parents[1] / "docs" / "workflow-format.md"


def doc_block(language: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Workflow inputs") :]
    start = section.index(f"```{language}\n") + len(f"```{language}\n")
    return section[start : section.index("```", start)]


def test_the_documented_inputs_are_canonical_and_the_builder_writes_them() -> None:
    text = doc_block("json")
    documented = Workflow.loads(text, name="docs example")
    assert documented.dumps() == text
    namespace: dict[str, Any] = {"Workflow": Workflow}
    exec(doc_block("python"), namespace)
    assert namespace["workflow"].dumps() == text
    schema = input_schema(documented, library_registry())
    assert schema["required"] == ["images"]
    assert schema["properties"]["limit"]["type"] == "integer"
