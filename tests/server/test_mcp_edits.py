"""Edit batches on a workflow in memory: what each operation does to the wiring and groups, and
the refusals that leave the workflow as it was."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from graphbook import Workflow
from graphbook.nodes import library_registry
from graphbook.registry import Registry
from graphbook.server.mcp.edits import MAX_OPERATIONS, EditError, Operation, apply_all
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


def test_fresh_ids_and_places_follow_on_from_the_batch_and_the_file(registry: Registry) -> None:
    wf = chain()
    wf.add("Split", id="split_3")
    added = [{"op": "add_node", "type": "Split"} for _ in range(3)]
    edited = apply(wf, registry, *added, {"op": "remove_node", "node": "split_4"})
    assert set(edited.nodes) == {"src", "split", "split_2", "split_3", "split_5"}
    assert edited.nodes["split_5"].position == (900.0, 0.0), "right of the last one added"


def test_add_node_without_a_type_says_it_needs_one(registry: Registry) -> None:
    with pytest.raises(EditError, match="add_node needs a `type`") as refused:
        apply(chain(), registry, {"op": "add_node", "id": "x"})
    assert "Component" not in str(refused.value)


def test_a_batch_over_the_limit_is_refused_naming_it(registry: Registry) -> None:
    wf = chain()
    ops = [{"op": "move", "node": "src", "position": [1, 1]}] * (MAX_OPERATIONS + 1)
    with pytest.raises(EditError, match="at most 50,000 operations a call"):
        apply(wf, registry, *ops)
    assert len(apply(wf, registry, *ops[:MAX_OPERATIONS]).nodes) == 2
