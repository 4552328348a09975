"""Batches laid out where they are loaded: a batch step's parts come back as one slab each, and
on_item_batch can take the batch stacked without a copy (issue 35)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

from graphbook import Workflow, batch, run_workflow, source, step
from graphbook.engine import shm, slabs
from graphbook.engine.pool import Done, Failed
from graphbook.engine.runners.batches import Ready, _outputs
from graphbook.events import ErrorInfo
from graphbook.stacking import Loaded, stack

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX worker processes")

SEEN: list[dict[str, Any]] = []
"""What each batch's on_item_batch saw."""


@step("Tests/Numbers")
@source()
def numbers(ctx: Any) -> Iterator[dict[str, Any]]:
    for i in range(40):
        yield {"i": i}


def image(i: int) -> torch.Tensor:
    return torch.full((3, 8, 8), i, dtype=torch.uint8)


@step("Tests/Images")
@batch(8, "i", load_fn=image)
def images(ctx: Any, outputs: list[Any], items: list[int], data: list[Any]) -> None:
    stacked = stack(outputs)
    SEEN.append(
        {
            "items": list(items),
            "stacked": stacked.clone(),
            "views": all(o.data_ptr() == stacked[n].data_ptr() for n, o in enumerate(outputs)),
            "loaded": isinstance(outputs, Loaded),
        }
    )
    for value, d in zip(outputs, data, strict=True):
        d["sum"] = int(value.sum())


def run_images(workers: int) -> Any:
    SEEN.clear()
    flow = Workflow()
    flow.connect(flow.add(numbers), flow.add(images, id="images"))
    return run_workflow(flow, workers=workers, collect=True)


def test_a_batch_loaded_by_workers_is_one_slab_and_stacks_without_a_copy() -> None:
    result = run_images(workers=2)
    assert result.ok
    assert [s["items"] for s in SEEN] == [list(range(n, n + 8)) for n in range(0, 40, 8)]
    for seen in SEEN:
        assert seen["loaded"] and seen["views"], "the batch's values are rows of one slab"
        assert torch.equal(seen["stacked"], torch.stack([image(i) for i in seen["items"]]))
    assert [d["sum"] for d in result.output("images")] == [i * 3 * 64 for i in range(40)]


def test_without_workers_the_same_batches_arrive_stacked_as_one_slab() -> None:
    result = run_images(workers=0)
    assert result.ok
    assert [s["items"] for s in SEEN] == [list(range(n, n + 8)) for n in range(0, 40, 8)]
    for seen in SEEN:
        assert seen["loaded"] and seen["views"]
        assert torch.equal(seen["stacked"], torch.stack([image(i) for i in seen["items"]]))


def record(i: int) -> dict[str, Any]:
    return {"image": image(i), "mask": np.full((4,), i, dtype=np.int32), "label": torch.tensor(i)}


@step("Tests/Records")
@batch(5, "i", load_fn=record)
def records(ctx: Any, outputs: list[Any], items: list[int], data: list[Any]) -> None:
    stacked = stack(outputs)
    SEEN.append({"items": list(items), "stacked": stacked, "label0": outputs[0]["label"]})


def test_dicts_of_tensors_and_arrays_stack_field_by_field_from_the_slab() -> None:
    SEEN.clear()
    flow = Workflow()
    flow.connect(flow.add(numbers), flow.add(records))
    assert run_workflow(flow, workers=2).ok
    first = SEEN[0]
    assert first["stacked"]["image"].shape == (5, 3, 8, 8)
    assert first["stacked"]["mask"].tolist() == [[i] * 4 for i in range(5)]
    assert first["stacked"]["label"].tolist() == [0, 1, 2, 3, 4]
    assert first["label0"].data_ptr() == first["stacked"]["label"].data_ptr()


def flaky(i: int) -> torch.Tensor:
    if i == 11:
        raise ValueError(f"item {i} is broken")
    if i == 13:
        return torch.zeros((3, 4, 4), dtype=torch.uint8)  # another shape: travels alone
    return image(i)


@step("Tests/Flaky")
@batch(8, "i", load_fn=flaky)
def flaky_images(ctx: Any, outputs: list[Any], items: list[int], data: list[Any]) -> None:
    SEEN.append({"items": list(items), "shapes": [tuple(o.shape) for o in outputs]})


def test_an_item_that_fails_fails_alone_and_one_of_another_shape_travels_alone() -> None:
    SEEN.clear()
    flow = Workflow()
    flow.connect(flow.add(numbers), flow.add(flaky_images, id="flaky"))
    result = run_workflow(flow, workers=2, continue_on_error=True, collect=True)
    assert [e.error.message for e in result.errors] == ["item 11 is broken"]
    assert "flaky" in result.errors[0].error.traceback  # the user's frame, from the worker
    assert SEEN[1]["items"] == [8, 9, 10, 12, 13, 14, 15]  # the batch runs without item 11
    assert SEEN[1]["shapes"][4] == (3, 4, 4)
    assert len(result.output("flaky")) == 39


def test_a_run_leaves_no_segment_behind() -> None:
    before = {n for n in os.listdir(shm.SHM_DIR) if n.startswith(shm.NAME_PREFIX)}
    assert run_images(workers=2).ok
    after = {n for n in os.listdir(shm.SHM_DIR) if n.startswith(shm.NAME_PREFIX)}
    assert after <= before


# -- packing, without processes --------------------------------------------------------------
def packed(part: slabs.Part) -> slabs.Part:
    """`part` packed into a slab in memory and unpacked from it, as a transport would."""
    return slabs.in_memory(part)


def value(outcome: Done | Failed) -> Any:
    assert isinstance(outcome, Done), outcome
    return outcome.value


def test_a_part_keeps_each_items_outcome_in_order() -> None:
    error = Failed(ErrorInfo("ValueError", "no", ""))
    part = packed(slabs.Part([Done(image(0)), error, Done("text"), Done(image(3))]))
    outcomes = part.outcomes
    assert torch.equal(value(outcomes[0]), image(0)) and torch.equal(value(outcomes[3]), image(3))
    assert isinstance(outcomes[1], Failed) and value(outcomes[2]) == "text"
    assert part.stacked(0, 1) is not None
    assert part.stacked(0, 2) is None, "a failed item breaks the stacked form"


def test_a_value_that_cannot_be_pickled_fails_alone_saying_why() -> None:
    part = packed(slabs.Part([Done(image(0)), Done(lambda: 1), Done(image(2))]))
    assert isinstance(part.outcomes[1], Failed)
    assert "the item's loaded value could not be pickled" in part.outcomes[1].error.message
    assert torch.equal(value(part.outcomes[2]), image(2))


def test_a_batch_of_several_parts_has_no_stacked_form_and_stack_copies() -> None:
    first, second = packed(slabs.Part([Done(image(0))])), packed(slabs.Part([Done(image(1))]))
    batch = [
        Ready(value(first.outcomes[0]), 0, None, first, 0),  # type: ignore[arg-type]
        Ready(value(second.outcomes[0]), 1, None, second, 0),  # type: ignore[arg-type]
    ]
    outputs = _outputs(batch)
    assert outputs.stacked is None
    assert torch.equal(stack(outputs), torch.stack([image(0), image(1)]))


def kill_on_five(i: int) -> torch.Tensor:
    if i == 5:
        os.kill(os.getpid(), 9)  # SIGKILL: the worker dies mid-part
    return image(i)


@step("Tests/Killer")
@batch(4, "i", load_fn=kill_on_five)
def killer(ctx: Any, outputs: list[Any], items: list[int], data: list[Any]) -> None:
    for value, d in zip(outputs, data, strict=True):
        d["sum"] = int(value.sum())


def test_a_worker_that_dies_mid_part_fails_only_the_item_that_killed_it() -> None:
    flow = Workflow()
    flow.connect(flow.add(numbers), flow.add(killer, id="killer"))
    result = run_workflow(flow, workers=2, continue_on_error=True, collect=True)
    assert [(e.error.type, e.item) for e in result.errors] == [("WorkerDied", 5)]
    sums = {d["i"]: d["sum"] for d in result.output("killer")}
    assert sorted(sums) == [i for i in range(40) if i != 5], "the part's other items load again"
    assert all(total == i * 3 * 64 for i, total in sums.items())
