"""What makes a workflow an app, in the file and the Python builder: inputs narrowed (bounds,
choices, pickers) and checked for every run, and outputs shown (declared, or found: sinks and
image nodes), with the problems named when they are wrong."""

from __future__ import annotations

from typing import Any

import pytest

from graphbook import Workflow
from graphbook.errors import WorkflowError, WorkflowFormatError
from graphbook.graph import build_graph
from graphbook.inputs import input_schema, input_value_problems, overrides_from_inputs
from graphbook.nodes import library_registry
from graphbook.outputs import shown_outputs, written
from graphbook.run_request import RunRequest, check_run
from graphbook.templates import TEMPLATES

REGISTRY = library_registry()


def classify() -> Workflow:
    """images -> keep (Threshold) -> csv, with a folder, a threshold and a choice."""
    wf = Workflow()
    images = wf.add("ImageFolder", id="images", folder="photos")
    keep = wf.add("Threshold", id="keep", field="confidence", minimum=0.5)
    csv = wf.add("WriteCSV", id="csv", path="out/rows.csv")
    wf.connect(images, keep)
    wf.connect(keep["keep"], csv)
    wf.input("folder", images, "folder", picker="folder")
    wf.input("threshold", keep, "minimum", minimum=0, maximum=1)
    wf.input("field", keep, "field", choices=["confidence", "score"])
    wf.output("rows", csv, kind="table", description="what was kept")
    return wf


def test_narrowed_inputs_and_outputs_are_written_one_a_line_and_read_back() -> None:
    wf = classify()
    text = wf.dumps()
    lines = text.splitlines()
    assert lines[3:13] == [
        '  "inputs": {',
        '    "field": {"node": "keep", "param": "field", "choices": ["confidence", "score"]},',
        '    "folder": {"node": "images", "param": "folder", "picker": "folder"},',
        '    "threshold": {"node": "keep", "param": "minimum", "minimum": 0, "maximum": 1}',
        "  },",
        '  "outputs": {',
        '    "rows": {"node": "csv", "output": "out", "kind": "table", '
        '"description": "what was kept"}',
        "  },",
        '  "nodes": [',
        "    {",
    ]
    again = Workflow.loads(text)
    assert again.inputs == wf.inputs and again.outputs == wf.outputs
    assert again.dumps() == text


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"minimum": "0"}, ["'minimum' must be a number"]),
        ({"minimum": 2, "maximum": 1}, ["'minimum' 2 is above 'maximum' 1"]),
        ({"choices": "a"}, ["'choices' must be a list"]),
        ({"picker": "photo"}, ["'picker' is one of file, folder, image"]),
        ({"accept": ["csv"]}, ["'accept' lists file suffixes"]),
    ],
)
def test_a_malformed_narrowing_is_refused_naming_it(
    entry: dict[str, Any], words: list[str]
) -> None:
    data = classify().to_json()
    data["inputs"]["threshold"] |= entry
    with pytest.raises(WorkflowFormatError) as caught:
        Workflow.from_json(data, "wf.json")
    for word in ["inputs['threshold']", *words]:
        assert word in str(caught.value)


@pytest.mark.parametrize(
    ("outputs", "words"),
    [
        ({"rows": {"node": "csv", "kind": "chart"}}, ["outputs['rows']", "'kind' is one of"]),
        ({"rows": {"kind": "table"}}, ["outputs['rows']", '"node": ID']),
        ({"two words": {"node": "csv", "kind": "table"}}, ["'two words'", "not a word"]),
    ],
)
def test_a_malformed_outputs_key_is_refused_naming_it(outputs: Any, words: list[str]) -> None:
    data = classify().to_json() | {"outputs": outputs}
    with pytest.raises(WorkflowFormatError) as caught:
        Workflow.from_json(data, "wf.json")
    for word in words:
        assert word in str(caught.value)


def test_the_schema_says_bounds_choices_and_pickers() -> None:
    properties = input_schema(classify(), REGISTRY)["properties"]
    assert properties["threshold"] | {} == {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": "the least value kept",
        "default": 0.5,
    }
    assert properties["field"]["enum"] == ["confidence", "score"]
    assert properties["folder"]["format"] == "folder"


def test_values_outside_the_bounds_or_choices_are_refused_by_name() -> None:
    wf = classify()
    problems = input_value_problems(wf, REGISTRY, {"threshold": 1.5, "field": "size"})
    assert problems["threshold"].message == "input 'threshold': 1.5 is above the maximum 1"
    assert problems["threshold"].fix == "give 'threshold' a value from 0 up to 1"
    assert "is not one of the choices" in problems["field"].message
    assert "folder" not in problems
    assert input_value_problems(wf, REGISTRY, {"threshold": -0.1})["threshold"].message == (
        "input 'threshold': -0.1 is below the minimum 0"
    )
    with pytest.raises(WorkflowError, match="above the maximum"):
        overrides_from_inputs(wf, {"threshold": 2}, REGISTRY)
    assert overrides_from_inputs(wf, {"threshold": 0.75}, REGISTRY) == {"keep": {"minimum": 0.75}}


def test_check_run_refuses_a_value_out_of_bounds_naming_its_node() -> None:
    checked = check_run(RunRequest("wf.json", inputs={"threshold": 7}), classify(), REGISTRY)
    assert not checked.ok
    assert [(p.node_id, "maximum 1" in p.message) for p in checked.problems] == [("keep", True)]


def test_bounds_on_text_and_a_default_out_of_bounds_are_problems_of_the_workflow() -> None:
    wf = classify()
    wf.input("field", "keep", "field", minimum=0)
    wf.set("keep", minimum=3)
    with pytest.raises(WorkflowError) as caught:
        build_graph(wf, REGISTRY)
    text = str(caught.value)
    assert "input 'field' has a minimum or maximum, but parameter 'field' is a string" in text
    assert "input 'threshold': its default 3 is above the maximum 1" in text


def test_outputs_naming_a_missing_node_or_output_are_problems() -> None:
    wf = classify()
    wf.output("ghost", "csv", "sideways")
    wf.outputs["gone"] = wf.outputs["rows"].__class__("nowhere")
    with pytest.raises(WorkflowError) as caught:
        build_graph(wf, REGISTRY)
    text = str(caught.value)
    assert "output 'ghost' shows output 'sideways', which WriteCSV does not have" in text
    assert "output 'gone' shows node 'nowhere', which does not exist" in text


def test_without_declared_outputs_the_sinks_and_last_image_nodes_are_shown() -> None:
    wf = Workflow()
    images = wf.add("ImageFolder", id="images", folder="photos")
    stats = wf.add("ImageStats", id="stats")
    thumbs = wf.add("Thumbnails", id="thumbs")
    table = wf.add("WriteParquet", id="table", path="out/t.parquet")
    copy = wf.add("WriteImageFolder", id="copy", folder="out/copies")
    wf.connect(images, stats)
    wf.connect(stats, thumbs)
    wf.connect(thumbs, table)
    wf.connect(thumbs, copy)
    shown = {name: (o.node, o.kind) for name, o in shown_outputs(wf, REGISTRY).items()}
    assert shown == {
        "thumbs": ("thumbs", "images"),
        "table": ("table", "table"),
        "copy": ("copy", "images"),
    }
    assert [(w.node, w.param, w.path) for w in written(wf, REGISTRY)] == [
        ("table", "path", "out/t.parquet"),
        ("copy", "folder", "out/copies"),
    ]
    wf.output("only", table, kind="table")
    assert list(shown_outputs(wf, REGISTRY)) == ["only"]


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_every_template_is_an_app_as_made(template: Any) -> None:
    workflow = Workflow.from_json(template.workflow())
    assert workflow.inputs and workflow.outputs
    build_graph(workflow, REGISTRY)
    schema = input_schema(workflow, REGISTRY)
    assert not schema["required"], "a template runs as made: every input has its default"
    assert all(prop.get("description") for prop in schema["properties"].values())
