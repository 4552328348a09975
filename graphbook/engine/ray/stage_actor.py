"""A stage actor, on its side: one replica of a batch step on a Ray actor. It learns the step
once (its models moved to `cuda` when Ray gave it a GPU), then runs batches: it fetches a batch's
loaded values from the object store of whichever node holds them, runs `on_item_batch`, and
answers with the dicts as it changed them, what it logged and reported, and an error as a value;
the dump arguments it returned stay in its node's object store (stage.py, the driver's side).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphbook.engine.pool import Done, Failed, Outcome
from graphbook.engine.ray.actor import where
from graphbook.engine.ray.ship import importable
from graphbook.events import ErrorInfo

if TYPE_CHECKING:
    from graphbook.engine.ray.transfer import Packed


@dataclass(frozen=True)
class Reply:
    """What a stage actor answers for a batch that ran (its dump arguments apart)."""

    data: list[Any] = field(default_factory=list)
    """The dict of each item, as `on_item_batch` left it."""
    dumps: int = 0
    """How many dump tasks it returned."""
    logs: list[tuple[str, Any, Any]] = field(default_factory=list)
    lost: str = ""
    """Why it did not run: a loaded value was lost with its node."""
    changed: list[str] = field(default_factory=list)
    """The step's attributes this call changed, after its replica's first call (which may
    set up what it needs lazily): state kept on self, which the driver's step never sees."""


def update_dicts(mine: Sequence[Any], theirs: Sequence[Any]) -> None:
    """Make each of the driver's dicts equal to the stage actor's copy, in place (a dict that
    holds several items of the batch once)."""
    seen: set[int] = set()
    for old, new in zip(mine, theirs, strict=True):
        if id(old) not in seen:
            seen.add(id(old))
            update(old, new)


def update(old: Any, new: Any) -> Any:
    """`old` made equal to `new` in place where both are dicts or lists, so what refers to it
    or its parts sees the change (an item is also in its dict's list), keys in `new`'s order;
    returns what holds the value now: `old`, or `new` when `old` cannot become it."""
    if type(old) is dict and type(new) is dict:
        merged = {k: update(old[k], v) if k in old else v for k, v in new.items()}
        if list(old) != list(merged) or any(old[k] is not v for k, v in merged.items()):
            old.clear()
            old.update(merged)
        return old
    if type(old) is list and type(new) is list:
        if len(old) == len(new):
            old[:] = [update(a, b) for a, b in zip(old, new, strict=True)]
        else:
            old[:] = new
        return old
    return new


def state_of(step: Any) -> dict[str, tuple[int, int | None, Any]]:
    """What a step keeps on self, to tell whether a call changed it: each attribute's object,
    a container's length and a plain value (torch modules are left out: their buffers may
    change in a forward pass, and they are the replica's own by design)."""
    torch = sys.modules.get("torch")
    module = torch.nn.Module if torch is not None else ()
    state: dict[str, tuple[int, int | None, Any]] = {}
    for name, value in vars(step).items():
        if isinstance(value, module):
            continue
        size = len(value) if isinstance(value, list | dict | set | deque | bytearray) else None
        plain = value if isinstance(value, int | float | str | bool) else None
        state[name] = (id(value), size, plain)
    return state


def changed_state(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The attributes set, removed or grown between two `state_of`s."""
    return sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class StageActor:
    """One replica of a batch step on a Ray actor: learns the step once, then runs batches."""

    def __init__(
        self,
        node_id: str,
        cwd: str,
        driver_node: str,
        shipped: Sequence[str],
        preload: Sequence[str],
        gpu: bool,
    ) -> None:
        importable(shipped)
        if cwd and os.path.isdir(cwd):  # relative paths mean the driver's folder, if here
            os.chdir(cwd)
        self.preload = list(preload)
        self.node_id = node_id
        self.gpu = gpu
        self.where = where(driver_node)
        self.step: Any = None
        self.broken: ErrorInfo | None = None
        self.calls = 0
        """Batches run by the replica learned last."""

    def placed(self) -> bool:
        """Answers as soon as the actor runs: Ray found it room (its imports come next)."""
        return True

    def ready(self) -> bool:
        """Answers once the slow modules the step uses are imported (torch: seconds)."""
        import importlib

        for module in self.preload:
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
        return True

    def learn(self, pickled: bytes, node_id: str) -> None:
        """Load the replica of the step (of node `node_id`, in place of any step before); one
        that cannot be loaded fails each batch."""
        from ray import cloudpickle

        self.node_id, self.step, self.broken = node_id, None, None
        self.calls = 0
        try:
            self.step = cloudpickle.loads(pickled)
            if self.gpu:
                to_gpu(self.step)
        except Exception as exc:
            error = ErrorInfo.from_exception(exc)
            message = f"the step could not be loaded on a Ray stage actor: {error.message}"
            hint = " (is the module it needs installed on every Ray node?)"
            self.broken = ErrorInfo(error.type, message + hint, error.traceback)

    def run(self, packed: Packed, refs: Sequence[Any]) -> tuple[Packed, Packed]:
        """Run one batch: (the reply, the dump arguments), returned as two objects (the
        driver reads the first only)."""
        from ray.exceptions import RayError

        from graphbook.engine.ray.transfer import pack, unpack_refs

        try:
            values, items, data = unpack_refs(packed, list(refs))
        except RayError as exc:  # a loaded value was lost with its node
            return pack(Done(Reply(lost=first_line(exc)))), pack([])
        if self.broken is not None:
            return pack(Failed(self._placed(self.broken))), pack([])
        outcome, dumps = self._call(values, items, data)
        return pack(outcome), pack(dumps)

    def _call(self, values: list[Any], items: list[Any], data: list[Any]) -> tuple[Outcome, Any]:
        from graphbook.engine.runners import dump_calls
        from graphbook.logs import metric_context, node_context

        logs: list[tuple[str, Any, Any]] = []
        metrics: list[Any] = []

        def logged(node: str, message: Any, level: Any) -> None:
            logs.append((node, message, level))

        with (
            node_context(self.node_id, logged),
            metric_context(lambda node, reported: metrics.append(reported)),
        ):
            before = state_of(self.step)
            try:
                dumps = dump_calls(self.step, self.step.on_item_batch(values, items, data))
            except Exception as exc:
                failed = Failed(self._placed(ErrorInfo.from_exception(exc)))
                return _with_metrics(failed, metrics), []
        self.calls += 1
        changed = changed_state(before, state_of(self.step)) if self.calls > 1 else []
        done = Done(Reply(data, len(dumps), logs, changed=changed))
        return _with_metrics(done, metrics), dumps

    def _placed(self, error: ErrorInfo) -> ErrorInfo:
        if not self.where:
            return error
        return ErrorInfo(error.type, f"{error.message} (on {self.where})", error.traceback)


def _with_metrics(outcome: Outcome, metrics: list[Any]) -> Outcome:
    if metrics:
        object.__setattr__(outcome, "metrics", tuple(metrics))
    return outcome


def to_gpu(step: Any) -> None:
    """On an actor Ray gave a GPU: the step's models there, as devices.prepare puts them."""
    import torch

    from graphbook.engine.devices import prepare

    for value in vars(step).values():
        if isinstance(value, torch.nn.Module):
            prepare(value, {"device": "cuda", "cpu_slices": 1}, training=True)


__all__ = ["Reply", "StageActor", "first_line", "update_dicts"]
