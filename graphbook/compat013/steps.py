"""Graphbook 0.13's `graphbook.core.steps`: our steps, the shipped nodes, `StepOutput`, and the
0.13 classes that have no counterpart of their own here (`AsyncStep`, `SplitByItems`,
`SplitItemField`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from graphbook.compat013.utils import transform_function_string
from graphbook.errors import NodeDefinitionError
from graphbook.lifecycle import BatchStep, Data, GeneratorSourceStep, PromptStep, SourceStep, Step
from graphbook.logs import log
from graphbook.nodes.core import Copy, DumpJSONL, LoadJSONL, Split

StepOutput = dict[str, list[dict]]  # type: ignore[type-arg]

__all__ = [
    "AsyncStep",
    "BatchStep",
    "Copy",
    "DumpJSONL",
    "GeneratorSourceStep",
    "LoadJSONL",
    "PromptStep",
    "SourceStep",
    "Split",
    "SplitByItems",
    "SplitItemField",
    "Step",
    "StepOutput",
    "log",
]

QUEUE_METHODS = ("in_q", "is_active", "__call__", "all")


class AsyncStep(Step):
    """0.13's base of steps that queued their own work (`in_q`, `_out_queue`, `is_active`) for
    its scheduler to poll. Here the engine schedules every step, so an AsyncStep is a Step: each
    dict goes through `on_data`, `on_item`, `on_after_item` and `route`. A subclass that
    overrides those queue methods is refused when its file loads, since they would not run."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        overridden = [name for name in QUEUE_METHODS if name in cls.__dict__]
        if overridden:
            raise NodeDefinitionError(
                f"{cls.__name__} overrides {', '.join(overridden)} of 0.13's AsyncStep; the "
                "engine schedules steps here and never calls them: move the work into "
                "on_data/route, or make it a BatchStep (load_fn and dump_fn run in the pool)"
            )


def _items(data: Any, key: str) -> Any:
    """`data[key]`: a dict's value, or a 0.13 Note's item (`note.items[key]`)."""
    items = getattr(data, "items", None)
    if isinstance(items, Mapping):
        return items[key]
    return data[key]


class SplitByItems(Step):
    """Routes each dict to `A` when `split_items_fn(items=..., data=...)` is true, else to `B`;
    `items` is the value under `item_key`."""

    Parameters: ClassVar[dict[str, Any]] = {
        "split_items_fn": {
            "type": "function",
            "required": True,
            "description": "def f(items, data)",
        },
        "item_key": {"type": "string", "required": True},
    }
    Outputs: ClassVar[list[str]] = ["A", "B"]
    Category: ClassVar[str] = "Filtering"

    def __init__(self, split_items_fn: Callable[..., Any] | str, item_key: str) -> None:
        super().__init__()  # 0.13 set item_key on the step, which ran on_item once: not needed
        self.split_key = item_key
        self.fn = transform_function_string(split_items_fn)

    def route(self, data: Data) -> str:
        return "A" if self.fn(items=_items(data, self.split_key), data=data) else "B"


class SplitItemField(Step):
    """Moves each item under `item_key` to the list under `a_key` when `split_fn(item=...)` is
    true, else to the one under `b_key`; the original key is deleted unless
    `should_delete_original` is false."""

    Parameters: ClassVar[dict[str, Any]] = {
        "split_fn": {"type": "function", "required": True, "description": "def f(item)"},
        "item_key": {"type": "string", "required": True},
        "a_key": {"type": "string", "required": True},
        "b_key": {"type": "string", "required": True},
        "should_delete_original": {"type": "boolean", "default": True},
    }
    Category: ClassVar[str] = "Filtering"

    def __init__(
        self,
        split_fn: Callable[..., Any] | str,
        item_key: str,
        a_key: str,
        b_key: str,
        should_delete_original: bool = True,
    ) -> None:
        super().__init__()
        self.split_key = item_key
        self.fn = transform_function_string(split_fn)
        self.a_key, self.b_key = a_key, b_key
        self.should_delete_original = should_delete_original

    def on_after_item(self, data: Data) -> None:
        a_items: list[Any] = []
        b_items: list[Any] = []
        for item in _items(data, self.split_key):
            (a_items if self.fn(item=item) else b_items).append(item)
        data[self.a_key], data[self.b_key] = a_items, b_items
        if self.should_delete_original:
            del data[self.split_key]
