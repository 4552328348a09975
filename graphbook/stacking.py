"""A batch step's loaded values, and their stacked form.

`on_item_batch(outputs, items, data)` receives `outputs` as a list, as seed 004 shows: one
value per item. When the load functions ran in the worker pool, those values were written by
the workers into one shared memory slab laid out as the batch, and each value in the list is a
view into it. `stack(outputs)` returns the whole batch as one tensor (or array, or a dict or
tuple of them, following the values' structure) without copying when it can: a view of the
slab. Otherwise (the values came from several slabs, an item failed in the middle, values
built in the step) it stacks them as `torch.stack` / `numpy.stack` would.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any


class Loaded(list[Any]):
    """The values a batch step's load function made, one per item, in the batch's order.
    `stacked`, when set, is the batch stacked already (views of one slab), in the same
    structure as each value."""

    stacked: Any = None

    def __init__(self, values: Any = (), stacked: Any = None) -> None:
        super().__init__(values)
        self.stacked = stacked


def stack(values: Sequence[Any]) -> Any:
    """The batch `values` stacked along a new first dimension: tensors with `torch.stack`,
    NumPy arrays with `numpy.stack`, numbers as a tensor, dicts, tuples and lists field by
    field. A `Loaded` list whose workers laid it out as one slab returns that slab's view,
    with nothing copied."""
    stacked = getattr(values, "stacked", None)
    if stacked is not None:
        return stacked
    if not values:
        raise ValueError("cannot stack an empty batch")
    return _stack(list(values))


def _stack(values: list[Any]) -> Any:
    first = values[0]
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(first, torch.Tensor):
        return torch.stack(values)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(first, numpy.ndarray):
        return numpy.stack(values)
    if isinstance(first, Mapping):
        return {key: _stack([value[key] for value in values]) for key in first}
    if isinstance(first, tuple | list) and not isinstance(first, str):
        return type(first)(_stack(list(column)) for column in zip(*values, strict=True))
    if isinstance(first, bool | int | float):
        import torch as torch_

        return torch_.tensor(values)
    raise TypeError(
        f"cannot stack values of type {type(first).__name__}: stack takes tensors, NumPy "
        "arrays, numbers, and dicts, tuples or lists of them"
    )
