"""What 0.13's `graphbook.steps`, `graphbook.core.steps` and the top-level
package held (`gb.steps.Split`, `gb.resources.FunctionResource`, `gb.prompts`, `gb.Note`,
`AsyncStep`, `SplitByItems`, `SplitItemField`), as upstream's python/Pokemon.py uses them."""

from __future__ import annotations

from typing import Any

import pytest

import graphbook as gb
from graphbook import Workflow, run_workflow
from graphbook.errors import NodeDefinitionError
from graphbook.nodes import library_registry


def test_the_top_level_names_of_013() -> None:
    from graphbook.core import steps as core_steps
    from graphbook.core.note import Note

    assert gb.steps.Split is core_steps.Split
    assert gb.steps.Copy is core_steps.Copy and gb.steps.LoadJSONL is core_steps.LoadJSONL
    assert gb.steps.AsyncStep is core_steps.AsyncStep
    assert gb.resources.FunctionResource.__name__ == "FunctionResource"
    assert gb.prompts.bool_prompt({"x": 1})["type"] == "bool"
    assert gb.Note is Note
    with pytest.raises(AttributeError, match="has no attribute 'Splitt'"):
        gb.steps.Splitt  # noqa: B018


def test_a_note_is_0_13s_deprecated_dict_of_items() -> None:
    with pytest.deprecated_call():
        note = gb.Note({"name": "Eevee"})
    note["level"] = 5
    assert (note["name"], note["level"], note["missing"]) == ("Eevee", 5, None)
    assert "level" in note and note.items == {"name": "Eevee", "level": 5}


def test_split_by_items_routes_by_the_items_under_a_key(tmp_path: Any) -> None:
    (tmp_path / "pokemon.jsonl").write_text('{"moves": [1, 2]}\n{"moves": []}\n')
    workflow = Workflow()
    source = workflow.add(gb.steps.LoadJSONL, jsonl_path=str(tmp_path / "pokemon.jsonl"))
    fn = workflow.add(gb.resources.FunctionResource, val="def f(items, data):\n    return items")
    split = workflow.add(gb.steps.SplitByItems, item_key="moves", split_items_fn=fn)
    workflow.connect(source, split)
    result = run_workflow(workflow, registry=library_registry(), collect=True)
    assert result.ok, result.errors
    assert result.output(split.id, "A") == [{"moves": [1, 2]}]
    assert result.output(split.id, "B") == [{"moves": []}]


def test_split_item_field_reads_a_note_as_well_as_a_dict() -> None:
    from graphbook.core.steps import SplitItemField

    node = SplitItemField("def f(item):\n    return item > 1", "n", "big", "small")
    assert node({"n": [1, 2, 3]}) == {"out": [{"big": [2, 3], "small": [1]}]}
    with pytest.deprecated_call():
        note = gb.Note({"n": [0, 5]})
    kept = SplitItemField(lambda item: item > 1, "n", "big", "small", should_delete_original=False)
    kept.on_after_item(note)  # type: ignore[arg-type]
    assert note.items == {"n": [0, 5], "big": [5], "small": [0]}


def test_an_async_step_that_overrides_0_13s_queue_is_refused() -> None:
    with pytest.raises(NodeDefinitionError, match=r"overrides in_q, is_active of 0.13's AsyncStep"):

        class Queued(gb.steps.AsyncStep):
            def in_q(self, data: Any) -> None:
                pass

            def is_active(self) -> bool:
                return False
