"""Decorators that describe a node on a plain function; the function itself stays unchanged.

Each decorator records what it says on the function's `Draft` (in any stacking order); the
registry later turns the draft into a NodeSpec. A function step receives its context (`ctx`,
whose attributes are the parameters and which has `ctx.log`) first, unless it is a
`@staticmethod`, which receives only the data, as in Graphbook's seed examples.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from graphbook.adapters import factory_for, reserved_names
from graphbook.draft import Draft
from graphbook.errors import NodeDefinitionError
from graphbook.params import ANY, ParamSpec, normalize_type, value_type
from graphbook.spec import RESOURCE_OUTPUT, NodeSpec, code_hash, parse_name, source_file

F = TypeVar("F")
DRAFT_ATTR = "__graphbook__"


def draft_of(fn: Any, create: bool = True) -> Draft | None:
    draft: Draft | None = getattr(fn, DRAFT_ATTR, None)
    if draft is None and isinstance(fn, staticmethod):  # `@staticmethod` above `@step`
        draft = getattr(fn.__func__, DRAFT_ATTR, None)
    if draft is None and create:
        draft = Draft()
        setattr(fn, DRAFT_ATTR, draft)
    return draft


_collected: ContextVar[list[Any] | None] = ContextVar("graphbook_collected", default=None)


@contextmanager
def collecting() -> Iterator[list[Any]]:
    """Gather every node function decorated while the block runs (a node file being imported).

    A file may define two steps with one Python name (Graphbook's guide does); the second
    rebinds the name, so only decoration time sees both.
    """
    found: list[Any] = []
    token = _collected.set(found)
    try:
        yield found
    finally:
        _collected.reset(token)


def _updating(update: Callable[[Draft], None]) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        if not callable(fn):
            raise NodeDefinitionError(f"graphbook decorators apply to functions, not {fn!r}")
        draft = draft_of(fn)
        assert draft is not None
        update(draft)
        found = _collected.get()
        if draft.is_node and found is not None:
            found.append(fn)
        return fn

    return decorate


def step(name: str | None = None, event: str | None = None) -> Callable[[F], F]:
    """Make the function a step named `name` ("Category/Sub/Name"); `event` picks the hook."""

    def update(draft: Draft) -> None:
        draft.name = name
        draft.is_node = True
        draft.main_event = event

    return _updating(update)


def resource(name: str | None = None) -> Callable[[F], F]:
    """Make the function a resource: its return value is given to the steps wired to it."""

    def update(draft: Draft) -> None:
        draft.name = name
        draft.is_node = True
        draft.is_resource = True
        draft.set_role("resource")

    return _updating(update)


def source(is_generator: bool = True) -> Callable[[F], F]:
    """Make the step a source: no input; the function returns or yields dicts."""

    def update(draft: Draft) -> None:
        draft.set_role("source")

    return _updating(update)


def batch(
    batch_size: int = 8,
    item_key: str = "",
    *,
    load_fn: Callable[..., Any] | None = None,
    dump_fn: Callable[..., Any] | None = None,
    runs_on_driver: bool = False,
) -> Callable[[F], F]:
    """Make the step a batch step; the function receives `(outputs, items, data)` lists.
    `runs_on_driver`: on a Ray cluster, the function runs in the driver's process, never on
    stage actors (it writes local files, or keeps state across batches that must be one)."""

    def update(draft: Draft) -> None:
        draft.set_role("batch")
        draft.batch = {"load_fn": _unwrap(load_fn), "dump_fn": _unwrap(dump_fn)}
        draft.batch["runs_on_driver"] = runs_on_driver
        draft.batch_params = {
            "batch_size": ParamSpec("batch_size", "int", batch_size, "items per batch", True),
            "item_key": ParamSpec("item_key", "string", item_key, "key holding the items", True),
        }

    return _updating(update)


def prompt(get_prompt: Callable[..., Any] | None = None) -> Callable[[F], F]:
    """Make the step ask the person; the function receives `(data, response)`."""

    def update(draft: Draft) -> None:
        draft.set_role("prompt")
        if get_prompt is not None:
            draft.events["get_prompt"] = get_prompt

    return _updating(update)


def param(
    name: str,
    type: str = "string",
    *,
    default: Any = None,
    required: bool = False,
    description: str = "",
    cast_as: Callable[[Any], Any] | None = None,
    path: bool = False,
    expression: bool = False,
) -> Callable[[F], F]:
    """Declare a parameter; its value is `ctx.<name>` when the step runs. `path=True`: the
    value is a file or folder, which a run on a Ray cluster makes absolute on the driver.
    `expression=True`: the value is a Python expression, checked to compile before a run."""

    def update(draft: Draft) -> None:
        kind = normalize_type(type)
        spec = ParamSpec(name, kind, default, description, required, path, expression)
        # Decorators apply bottom-up; putting each new one first keeps the order they read in.
        draft.params = {name: spec, **{k: v for k, v in draft.params.items() if k != name}}
        if cast_as is not None:
            draft.casts[name] = cast_as

    return _updating(update)


def output(*names: str) -> Callable[[F], F]:
    """Declare the step's outputs (default `out`)."""

    def update(draft: Draft) -> None:
        draft.outputs = list(dict.fromkeys([*names, *draft.outputs]))

    return _updating(update)


def event(event: str, event_fn: Callable[..., Any]) -> Callable[[F], F]:
    """Attach `event_fn` as the lifecycle hook `event` (route, on_start, load_fn, __init__...)."""

    def update(draft: Draft) -> None:
        draft.events[event] = _unwrap(event_fn) if event in ("load_fn", "dump_fn") else event_fn

    return _updating(update)


def function_spec(fn: Any) -> NodeSpec:
    """The NodeSpec described by the decorators on `fn`."""
    draft = draft_of(fn, create=False)
    if draft is None:
        raise NodeDefinitionError(f"{fn!r} carries no graphbook decorators")
    plain = _plain(fn)
    default_name = getattr(plain, "__name__", "node")
    name, category = parse_name(draft.name or default_name)
    if len(set(draft.roles)) > 1:
        used = " and ".join(f"@{r}" for r in sorted(set(draft.roles)))
        raise NodeDefinitionError(f"{name}: {used} cannot be combined; a node is one kind")
    params = draft.all_params()
    clash = [p.name for p in params if p.name in reserved_names(draft.role)]
    if clash:
        raise NodeDefinitionError(
            f"{name}: a parameter cannot be called {clash[0]!r}, because ctx.{clash[0]} is "
            "part of every node; rename the parameter"
        )
    check_signature(fn, draft, name)
    outputs = (RESOURCE_OUTPUT,) if draft.is_resource else tuple(draft.outputs or ["out"])
    return NodeSpec(
        name=name,
        kind=draft.role,
        factory=factory_for(fn, draft, name, outputs),
        category=category,
        params=params,
        outputs=outputs,
        requires_input=draft.role in ("step", "batch", "prompt"),
        doc=inspect.getdoc(plain) or "",
        origin=source_file(plain),
        code_hash=code_hash(plain),
        gives=_gives(plain) if draft.is_resource else ANY,
    )


CALLED_WITH = {
    "step": ("data",),
    "source": (),
    "batch": ("outputs", "items", "data"),
    "prompt": ("data", "response"),
    "resource": (),
}
"""What each kind of node function is called with after `ctx` (a @staticmethod: without it)."""


def check_signature(fn: Any, draft: Draft, name: str) -> None:
    """Refuse, as the file is imported, a node function that cannot take what the engine
    will call it with: the message names the function, its file and line, and the signature
    to write (a TypeError at run time would show only Graphbook's frames)."""
    if draft.role == "step" and draft.main_event not in (None, "on_data"):
        return  # another hook: its own arguments
    given = CALLED_WITH[draft.role]
    with_ctx = not isinstance(fn, staticmethod)
    _check_call(_plain(fn), ("ctx", *given) if with_ctx else given, f"{name}: a {draft.role}")
    get_prompt = draft.events.get("get_prompt")
    if draft.role == "prompt" and callable(get_prompt):
        _check_call(_plain(get_prompt), ("ctx", "data"), f"{name}: its get_prompt")


def _check_call(fn: Any, arguments: tuple[str, ...], what: str) -> None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or a C callable: nothing to read
        return
    try:
        signature.bind(*arguments)
    except TypeError:
        where = _where(fn)
        wanted = ", ".join(arguments)
        raise NodeDefinitionError(
            f"{what} function is called as {fn.__name__}({wanted}), but "
            f"{fn.__name__}{signature}{where} cannot take that; write "
            f"`def {fn.__name__}({wanted}):`"
        ) from None


def _where(fn: Any) -> str:
    """` (FILE, line N)`: where the function's `def` is, for a message; "" if unknown."""
    try:
        lines, start = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn)
    except (OSError, TypeError):
        return ""
    found = next((i for i, line in enumerate(lines) if line.lstrip().startswith(DEFS)), 0)
    return f" ({file}, line {start + found})"


DEFS = ("def ", "async def ")


def _gives(fn: Any) -> str:
    """What a @resource function gives, from its return annotation."""
    try:
        return value_type(inspect.signature(fn).return_annotation)
    except (TypeError, ValueError):
        return ANY


def _plain(fn: Any) -> Any:
    return inspect.unwrap(getattr(fn, "__func__", fn))


def _unwrap(fn: Any) -> Any:
    """`load_fn`/`dump_fn` run alone in workers; a `@staticmethod` is given as its function."""
    return fn.__func__ if isinstance(fn, staticmethod) else fn


def is_node_function(obj: Any) -> bool:
    draft = draft_of(obj, create=False)
    return isinstance(draft, Draft) and draft.is_node
