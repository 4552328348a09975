"""Edit batches on a workflow in memory: what each operation does to the wiring and groups, and
the refusals that leave the workflow as it was."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from graphbook import Workflow
from graphbook.nodes import library_registry
from graphbook.registry import Registry
from graphbook.server.mcp.edits import EditError, Operation, apply_all
from graphbook.workflow import Edge

OPS: TypeAdapter[list[Operation]] = TypeAdapter(list[Operation])


@pytest.fixture(scope="module")
def registry() -> Registry:
    return library_registry()


def chain() -> Workflow:
    wf = Workflow()
    src = wf.add("LoadJSONL", id="src", jsonl_path="in.jsonl")
    split = wf.add("Split", id="split")
    wf.connect(src, split)
    wf.group("box", ["src", "split"], id="box")
    wf.input("source_file", src, "jsonl_path")
    return wf


def apply(wf: Workflow, registry: Registry, *ops: dict[str, Any]) -> Workflow:
    return apply_all(wf, OPS.validate_python(list(ops)), registry)


def test_removing_a_node_takes_its_wires_and_its_place_in_a_group(registry: Registry) -> None:
    wf = chain()
    edited = apply(wf, registry, {"op": "remove_node", "node": "split"})
    assert set(edited.nodes) == {"src"} and edited.edges == []
    assert edited.groups["box"].nodes == ("src",)
    assert set(wf.nodes) == {"src", "split"} and len(wf.edges) == 1, "the original is untouched"


def test_removing_a_node_takes_the_workflow_inputs_that_name_it(registry: Registry) -> None:
    wf = chain()
    edited = apply(wf, registry, {"op": "remove_node", "node": "src"})
    assert edited.inputs == {}
    assert set(wf.inputs) == {"source_file"}, "the original keeps its input"


def test_connect_disconnect_and_a_fresh_id(registry: Registry) -> None:
    wf = chain()
    edited = apply(
        wf,
        registry,
        {"op": "disconnect", "source": "src", "target": "split"},
        {"op": "add_node", "type": "Split"},
        {"op": "connect", "source": "src", "target": "split_2"},
    )
    assert edited.edges == [Edge("src", "out", "split_2", "in")]
    assert edited.nodes["split_2"].position == (300.0, 0.0)


@pytest.mark.parametrize(
    ("op", "why"),
    [
        ({"op": "add_node", "type": "Split", "id": "src"}, "id 'src' is taken"),
        ({"op": "connect", "source": "src", "target": "split"}, "is wired to split.in already"),
        ({"op": "connect", "source": "split", "target": "split"}, "to itself would make a cycle"),
        ({"op": "connect", "source": "split", "output": "A", "target": "src"}, "takes no input"),
        ({"op": "disconnect", "source": "split", "target": "src"}, "there is no wire"),
        ({"op": "set_param", "node": "src", "param": "start_from", "value": "x"}, "a whole number"),
        ({"op": "move", "node": "ghost", "position": [1, 2]}, "no node 'ghost'"),
    ],
)
def test_a_bad_operation_names_itself_and_changes_nothing(
    registry: Registry, op: dict[str, Any], why: str
) -> None:
    wf = chain()
    before = wf.to_json()
    with pytest.raises(EditError) as refused:
        apply(wf, registry, {"op": "move", "node": "src", "position": [5, 5]}, op)
    assert f"operation 1 ({op['op']}" in str(refused.value) and why in str(refused.value)
    assert wf.to_json() == before
