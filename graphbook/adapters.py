"""The node classes that run decorated functions: one fixed adapter per kind, never generated.

The adapter instance is the function's `ctx`: parameters are its attributes, `ctx.log` logs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from graphbook.draft import Draft
from graphbook.lifecycle import (
    BatchStep,
    Data,
    PromptStep,
    Routed,
    SourceStep,
    Step,
    items_of,
    routed,
    source_routed,
)
from graphbook.resources import Resource

STATIC_EVENTS = ("load_fn", "dump_fn")


@dataclass(frozen=True)
class DecoratedNode:
    """What every adapter instance of one decorated function shares."""

    draft: Draft
    name: str
    outputs: tuple[str, ...]


class Bound:
    """A decorated function and how to call it (with `ctx` first, or plain for staticmethods)."""

    def __init__(self, fn: Any) -> None:
        self.with_ctx = not isinstance(fn, staticmethod)
        self.fn: Callable[..., Any] = fn.__func__ if isinstance(fn, staticmethod) else fn

    def __call__(self, ctx: Any, *args: Any) -> Any:
        return self.fn(ctx, *args) if self.with_ctx else self.fn(*args)


def _apply(ctx: Any, node: DecoratedNode, params: dict[str, Any]) -> None:
    """Set parameters as attributes, attach events as hooks, then run an `__init__` event."""
    draft = node.draft
    ctx.Outputs = list(node.outputs)
    ctx.__graphbook_name__ = node.name
    for name, value in params.items():
        cast = draft.casts.get(name)
        setattr(ctx, name, cast(value) if cast is not None and value is not None else value)
    for param in draft.all_params():  # no value, no default: None, as 0.13's ctx had it
        if param.name not in params and not hasattr(ctx, param.name):
            setattr(ctx, param.name, None)
    for name, fn in draft.events.items():
        if name == "__init__":
            continue
        plain = fn.__func__ if isinstance(fn, staticmethod) else fn
        hook = plain if name in STATIC_EVENTS else _method(ctx, Bound(fn))
        setattr(ctx, name, hook)
    init = draft.events.get("__init__")
    if init is not None:
        init(ctx, **params)


def _method(ctx: Any, bound: Bound) -> Callable[..., Any]:
    return lambda *args: bound(ctx, *args)


class DecoratedStep(Step):
    """A step whose lifecycle hook (`on_data` unless `@step(event=...)`) is the function."""

    def __init__(self, fn: Any, node: DecoratedNode, params: dict[str, Any]) -> None:
        super().__init__(item_key=params.get("item_key"))
        self._main = Bound(fn)
        self._event = node.draft.main_event or "on_data"
        if self._event != "on_data":
            setattr(self, self._event, _method(self, self._main))
        _apply(self, node, params)
        events = node.draft.events
        self.direct_routes = returns_route(self.Outputs, events)
        plain = self._event == "on_data" and self.item_key is None and self.Outputs
        if plain and "on_after_item" not in events and "route" not in events:
            main = self._main
            self.direct = functools.partial(main.fn, self) if main.with_ctx else main.fn

    def process(self, data: Data) -> Routed:
        if self._event != "on_data":
            return super().process(data)
        choice = self._main(self, data)
        if choice is data or not self.direct_routes:  # `return data`: "pass it on"
            choice = None
        if self.item_key is not None:
            for item in items_of(data, self.item_key, self):
                self.on_item(item, data)
        self.on_after_item(data)
        return routed(self, choice if choice is not None else self.route(data), data)


def returns_route(outputs: list[str], events: Mapping[str, Any]) -> bool:
    """Whether what a step function returns routes the dict (the rule in docs/nodes.md).

    It does when the step declares two or more outputs and no `route` event: then returning
    an output name (or a mapping of outputs to dicts) picks where the dict goes. With one
    output, as in Graphbook 0.13, the return value is ignored and the dict goes on."""
    return len(outputs) > 1 and "route" not in events


class DecoratedSource(SourceStep):
    """A source whose function returns or yields dicts."""

    def __init__(self, fn: Any, node: DecoratedNode, params: dict[str, Any]) -> None:
        super().__init__()
        self._main = Bound(fn)
        _apply(self, node, params)

    def load(self) -> Any:
        return self._main(self)

    def produce(self) -> Iterator[Routed]:
        result = self.load()
        if isinstance(result, Iterator):
            for value in result:
                yield source_routed(self, value)
        else:
            yield source_routed(self, result)


class DecoratedBatch(BatchStep):
    """A batch step whose function is `on_item_batch(outputs, items, data)`."""

    def __init__(self, fn: Any, node: DecoratedNode, params: dict[str, Any]) -> None:
        super().__init__(params.get("batch_size", 8), params.get("item_key", ""))
        self._main = Bound(fn)
        self.load_fn = node.draft.batch.get("load_fn")  # type: ignore[misc]
        self.dump_fn = node.draft.batch.get("dump_fn")  # type: ignore[misc]
        self.runs_on_driver = bool(node.draft.batch.get("runs_on_driver"))
        _apply(self, node, params)
        self.batch_size = int(self.batch_size)

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> Any:
        return self._main(self, outputs, items, data)


class DecoratedPrompt(PromptStep):
    """A prompt step whose function is `on_prompt_response(data, response)`."""

    def __init__(self, fn: Any, node: DecoratedNode, params: dict[str, Any]) -> None:
        super().__init__()
        self._main = Bound(fn)
        _apply(self, node, params)

    def on_prompt_response(self, data: Data, response: Any) -> None:
        self._main(self, data, response)


class DecoratedResource(Resource):
    """A resource whose function returns its value."""

    def __init__(self, fn: Any, node: DecoratedNode, params: dict[str, Any]) -> None:
        super().__init__()
        self._main = Bound(fn)
        _apply(self, node, params)

    def value(self) -> Any:
        return self._main(self)


_ADAPTERS: dict[str, type] = {
    "step": DecoratedStep,
    "source": DecoratedSource,
    "batch": DecoratedBatch,
    "prompt": DecoratedPrompt,
    "resource": DecoratedResource,
}


def reserved_names(role: str) -> set[str]:
    """Names a parameter of a decorated function cannot have: they would hide `ctx`'s own
    methods and attributes (`ctx.log`, `ctx.value`, `ctx.id`, ...)."""
    adapter = _ADAPTERS[role]
    return {n for n in dir(adapter) if not n.startswith("_")} - {"item_key", "batch_size"}


def factory_for(
    fn: Any, draft: Draft, name: str, outputs: tuple[str, ...]
) -> Callable[[dict[str, Any]], Any]:
    adapter = _ADAPTERS[draft.role]
    node = DecoratedNode(draft, name, outputs)
    return lambda params: adapter(fn, node, params)
