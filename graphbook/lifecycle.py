"""Step base classes: the lifecycle every data node follows, and how its results are routed.

Users import them as `graphbook.steps` (steps.py, the public face that also holds 0.13's names)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar

from graphbook.errors import GraphbookError
from graphbook.logs import LogLevel, log, log_metric

Data = dict[str, Any]
Routed = list[tuple[str, Data]]
"""What a step hands on: (output name, dict) pairs, in order."""


class RouteError(GraphbookError):
    """A step routed a dict to an output it does not declare, or returned something unusable."""


class Step:
    """A node that receives dicts and routes each to one or more named outputs.

    For every dict: `on_data(data)`, then `on_item(item, data)` for each value under
    `item_key` (if set), then `on_after_item(data)`, then `route(data)` picks the outputs.
    When no more dicts will come, `flush()` hands on any it held back.
    """

    RequiresInput: ClassVar[bool] = True
    Parameters: ClassVar[dict[str, Any]] = {}
    Outputs: ClassVar[list[str]] = ["out"]
    Category: ClassVar[str] = ""

    id: str = ""
    item_key: str | None = None
    direct: Callable[[Data], Any] | None = None
    """Set when the whole lifecycle of a dict is one call, `direct(data)`, after which the
    dict goes to the first output unless the call returned a route (what `route` returns)
    other than None or the dict itself. The engine then skips the per-dict lifecycle."""
    direct_routes: bool = True
    """Whether what `direct` returns routes the dict; when False it is ignored (a step
    function with one output, as in Graphbook 0.13)."""
    Writes: ClassVar[tuple[str, ...]] = ()
    """The parameters that name the files or folders the step writes (a sink's `path`): when
    one of them is missing, a run does not reuse the step's cached outputs but runs it again,
    so a deleted output is written anew."""
    ended_as: str | None = None
    """How this node's part of the run ended, set by the engine just before `on_end`: "done"
    when every dict meant for it arrived and was handled without an error, else "failed" or
    "stopped" (a sink commits its file only when "done"); None outside a run."""

    def __init__(self, item_key: str | None = None, **params: Any) -> None:
        self.item_key = item_key or None
        for name, value in params.items():
            setattr(self, name, value)

    def on_start(self) -> None:
        """Called once when a run starts."""

    def on_end(self) -> None:
        """Called once when a run ends, whatever its outcome."""

    def on_clear(self) -> None:
        """Called before `on_start` in the first run after this node's cached outputs were
        cleared (the editor's Clear, `POST /api/workflows/.../clear`): forget what the node
        keeps outside a run (files it made, a state on disk) so it starts afresh."""

    def on_data(self, data: Data) -> None:
        """Called for every dict that arrives."""

    def on_item(self, item: Any, data: Data) -> None:
        """Called for each value under `item_key` of a dict."""

    def on_after_item(self, data: Data) -> None:
        """Called after all of a dict's items."""

    def route(self, data: Data) -> str | Mapping[str, Any] | None:
        """The output a dict goes to: a name, a mapping of outputs to dicts, or None to drop it."""
        return self.Outputs[0] if self.Outputs else None

    def flush(self) -> Mapping[str, Any] | None:
        """Called once when no more dicts will come (every input has ended), before the node
        finishes: a step that held dicts back (a reservoir sample) returns them here, as a
        mapping of outputs to dicts, to be handed on; None hands on nothing."""
        return None

    def log(self, message: Any, level: LogLevel = "info") -> None:
        log(message, level, node_id=self.id or None)

    def log_metric(self, name: str, value: float, step: int | None = None) -> None:
        """`graphbook.log_metric`: a metric of this node, in the run store and its loggers."""
        log_metric(name, value, step)

    def process(self, data: Data) -> Routed:
        """Run the whole lifecycle on one dict and return where it goes."""
        self.on_data(data)
        if self.item_key is not None:
            for item in items_of(data, self.item_key, self):
                self.on_item(item, data)
        self.on_after_item(data)
        return routed(self, self.route(data), data)

    def __call__(self, data: Data) -> dict[str, list[Data]]:
        """Process one dict by hand (handy in tests): `{output: [dicts]}`."""
        result: dict[str, list[Data]] = {}
        for output, item in self.process(data):
            result.setdefault(output, []).append(item)
        return result


class SourceStep(Step):
    """A step with no input; `load()` returns its outputs once per run."""

    RequiresInput: ClassVar[bool] = False

    def load(self) -> Any:
        raise NotImplementedError(f"{node_name(self)} must define load()")

    def produce(self) -> Iterator[Routed]:
        """The source's outputs, in chunks as the engine pulls them."""
        yield source_routed(self, self.load())


class GeneratorSourceStep(SourceStep):
    """A source whose `load()` is a generator; every yield is handed on as soon as it comes."""

    def produce(self) -> Iterator[Routed]:
        for value in self.load():
            yield source_routed(self, value)


class BatchStep(Step):
    """Gathers the items under `item_key` of many dicts into batches of `batch_size`.

    `load_fn(item)` runs in the worker pool on every item; `on_item_batch(outputs, items, data)`
    gets three aligned lists; tuples it returns are passed to `dump_fn(*tuple)` in the pool. A
    dict moves on only after all of its items (and the dumps of their batches) are done.
    """

    load_fn: ClassVar[Callable[..., Any] | None] = None
    dump_fn: ClassVar[Callable[..., Any] | None] = None
    runs_on_driver: bool = False
    """On a Ray cluster, `on_item_batch` runs in the driver's process, not on stage actors
    holding replicas of the step (graphbook/engine/ray/stage.py): set it when it writes local
    files or keeps state on `self` that must be one across batches."""

    def __init__(self, batch_size: int = 8, item_key: str = "", **params: Any) -> None:
        super().__init__(item_key=item_key, **params)
        self.batch_size = int(batch_size)

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> Any:
        """Called with each batch; may return a list of tuples of arguments for `dump_fn`."""
        return None

    def process(self, data: Data) -> Routed:
        raise GraphbookError("a BatchStep's dicts are processed by the engine in batches")


class PromptStep(Step):
    """A step that asks the person a question about each dict and waits for the answer."""

    def get_prompt(self, data: Data) -> dict[str, Any] | None:
        """The prompt to show for `data` (see graphbook.prompts), or None to let it pass."""
        return {"type": "boolean", "msg": "Continue?", "def": False, "options": {}}

    def on_prompt_response(self, data: Data, response: Any) -> None:
        """Called with the answer before the dict is routed."""


def node_name(node: Any) -> str:
    """The node's name as the person wrote it: the class name, or a decorated step's name."""
    return str(getattr(node, "__graphbook_name__", None) or type(node).__name__)


def items_of(data: Data, key: str | None, step: Step) -> list[Any]:
    """The items under `key`: a list or tuple gives many, anything else one."""
    try:
        if key is None:
            raise KeyError(key)
        value = data[key]
    except (KeyError, TypeError):
        found = ", ".join(map(repr, data)) if isinstance(data, Mapping) else type(data).__name__
        raise GraphbookError(
            f"{node_name(step)} reads items under item_key {key!r}, but the dict has no such "
            f"key (keys: {found}); set item_key to one of its keys"
        ) from None
    return list(value) if isinstance(value, list | tuple) else [value]


def routed(step: Step, choice: str | Mapping[str, Any] | None, data: Data) -> Routed:
    """Turn what `route` returned into (output, dict) pairs, checking the output names."""
    if choice is None:
        return []
    if isinstance(choice, str):
        _check_output(step, choice)
        return [(choice, data)]
    if isinstance(choice, Mapping):
        pairs: Routed = []
        for output, value in choice.items():
            _check_output(step, output)
            pairs.extend((output, d) for d in _as_dicts(value))
        return pairs
    raise RouteError(
        f"{node_name(step)}.route returned {type(choice).__name__}; return an output name, "
        "a mapping of output names to dicts, or None to drop the dict"
    )


def source_routed(step: Step, value: Any) -> Routed:
    """Interpret what a source produced: a dict, a list of dicts, or `{output: values}`.

    A mapping whose keys are all output names is `{output: values}`, as in Graphbook 0.13: a
    list there is many values, anything else one (`{"url": "https://..."}` with output `url`
    hands on the text itself)."""
    if type(value) is dict and not value.keys() <= set(step.Outputs):
        return [(step.Outputs[0], value)]  # the common case, told quickly: a dict of data
    if value is None:
        return []
    if _is_output_mapping(step, value):
        return routed(step, value, {})
    default = step.Outputs[0]
    return [(default, d) for d in _as_dicts(value)]


def _is_output_mapping(step: Step, value: Any) -> bool:
    return isinstance(value, Mapping) and len(value) > 0 and all(k in step.Outputs for k in value)


def _as_dicts(value: Any) -> Iterable[Data]:
    if value is None:
        return []
    return value if isinstance(value, list | tuple) else [value]


def _check_output(step: Step, output: str) -> None:
    if output not in step.Outputs:
        declared = ", ".join(step.Outputs) or "none"
        raise RouteError(
            f"{node_name(step)} routed a dict to output {output!r}, but it declares outputs: "
            f"{declared}; add {output!r} to its Outputs (or @output)"
        )


def fork(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """Copy containers (dicts, lists, tuples, sets) so branches don't see each other's edits;
    leaves such as tensors and images are shared, not copied. A container met again (a dict
    that holds itself) is its one copy again, as copy.deepcopy keeps it."""
    if not isinstance(value, dict | list | tuple | set):
        return value
    memo = {} if memo is None else memo
    known = memo.get(id(value))
    if known is not None:
        return known
    if isinstance(value, dict):
        copied: dict[Any, Any] = memo.setdefault(id(value), {})
        copied.update((k, fork(v, memo)) for k, v in value.items())
        return copied
    if isinstance(value, list):
        items: list[Any] = memo.setdefault(id(value), [])
        items.extend(fork(v, memo) for v in value)
        return items
    if isinstance(value, tuple):  # a tuple cannot hold itself but through a list or dict
        return memo.setdefault(id(value), tuple(fork(v, memo) for v in value))
    return memo.setdefault(id(value), set(value))
