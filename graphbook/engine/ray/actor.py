"""A load or dump actor of the Ray pool, on its side: it learns lanes' functions, then runs
groups of their tasks in order, each outcome a value (an error with its traceback), its metrics
with it. It works in the driver's folder when its node has that folder; a failure says which
node it ran on, and why a relative path missed there.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from graphbook.engine.pool import Done, Failed, Outcome, call
from graphbook.engine.ray.detached import LEASE, watch
from graphbook.engine.ray.ship import importable
from graphbook.engine.slabs import Part
from graphbook.events import ErrorInfo
from graphbook.logs import collect_in_this_process

if TYPE_CHECKING:
    from graphbook.engine.ray.transfer import Packed

FILE_ERRORS = frozenset(
    {"FileNotFoundError", "NotADirectoryError", "IsADirectoryError", "PermissionError", "OSError"}
)
FOLDER_HINT = (
    " (this Ray node does not have the driver's folder {folder}, which relative paths and the "
    "nodes' path parameters mean: mount it at the same path on every node, or give paths on "
    "shared storage or remote URIs)"
)


class TaskActor:
    """One Ray actor: learns lanes' functions, then runs their tasks in order, in the driver's
    folder when its machine has that folder (relative paths then mean what they mean there)."""

    def __init__(
        self,
        seed: int,
        cwd: str,
        preload: Sequence[str] = (),
        driver_node: str = "",
        shipped: Sequence[str] = (),
        namespace: str = "",
        lease: float = LEASE,
    ) -> None:
        if namespace:  # detached: it ends itself when no driver renews the lease
            watch(namespace, lease)
        collect_in_this_process()  # the metrics a task reports go back with its outcome
        importable(shipped)  # folders shipped with the pool import as on the driver
        self.fns: dict[int, Callable[..., Any] | ErrorInfo] = {}
        self.where = self.elsewhere = ""
        self.reset(seed, cwd, driver_node)
        self.preload(preload)

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        """The id of its node: answered once it has started (imports included)."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def reset(self, seed: int = 0, cwd: str = "", driver_node: str = "") -> str:
        """Serve a new driver (one that made it, or one that attaches): no lanes (its lanes are
        numbered anew), its folder, its seed, errors placed relative to its node. Returns the
        id of this actor's node."""
        import random

        import ray

        self.fns.clear()
        self.seed = seed
        self.where = where(driver_node)
        self.elsewhere = "" if not cwd or os.path.isdir(cwd) else cwd
        """The driver's folder when this node does not have it (relative paths then miss)."""
        if cwd and not self.elsewhere:  # the driver's folder, where relative paths point
            os.chdir(cwd)
        random.seed(seed)
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.manual_seed(seed)
        return str(ray.get_runtime_context().get_node_id())

    def preload(self, modules: Sequence[str]) -> None:
        """Import the slow modules the workflow's code uses (torch: seconds), before the first task
        needs them (graphbook/engine/ray/preload.py)."""
        import importlib

        had_torch = "torch" in sys.modules
        for module in modules:
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
        torch = sys.modules.get("torch")
        if torch is not None and not had_torch:
            torch.manual_seed(self.seed)
            torch.set_num_threads(1)

    def learn(self, lane: int, pickled: bytes) -> None:
        """Load a lane's function; one that cannot be loaded fails each of its tasks."""
        from ray import cloudpickle

        try:
            self.fns[lane] = cloudpickle.loads(pickled)
        except Exception as exc:
            error = ErrorInfo.from_exception(exc)
            message = f"the function could not be loaded on the Ray actor: {error.message}"
            hint = " (is the module it needs installed on every Ray node?)"
            self.fns[lane] = ErrorInfo(error.type, message + hint, error.traceback)

    def forget(self, lane: int) -> None:
        self.fns.pop(lane, None)

    def run(self, lane: int, packed: Packed, refs: Sequence[Any] = (), count: int = 0) -> Packed:
        """Run a group of tasks of one lane, in order; each outcome is a value. Tasks and
        outcomes are packed, so their tensors are not copied (graphbook/engine/ray/transfer.py);
        `refs`: the values kept in the object store that the `count` tasks take (fetched here)."""
        from graphbook.engine.ray.transfer import pack

        return pack(self._outcomes(lane, packed, refs, count))

    def run_kept(
        self, lane: int, packed: Packed, refs: Sequence[Any] = (), count: int = 0
    ) -> tuple[Any, ...]:
        """`run`, its values kept apart: (the outcomes without their values, the values). The
        driver reads the first and hands on the second as an object ref (called with
        `num_returns=2`), so the values stay in this node's object store."""
        from graphbook.engine.ray.transfer import pack

        outcomes = self._outcomes(lane, packed, refs, count)
        values = [o.value if isinstance(o, Done) else None for o in outcomes]
        bare = [Done(None) if isinstance(o, Done) else o for o in outcomes]
        for plain, outcome in zip(bare, outcomes, strict=True):
            if plain is not outcome and outcome.metrics:
                object.__setattr__(plain, "metrics", outcome.metrics)
        return pack(bare), pack(values)

    def _outcomes(
        self, lane: int, packed: Packed, refs: Sequence[Any], count: int
    ) -> list[Outcome]:
        from graphbook.engine.ray.transfer import spread, unpack_refs

        try:
            tasks: list[tuple[Any, ...]] = unpack_refs(packed, list(refs))
        except Exception as exc:  # a value it takes was lost (with its node)
            failed = Failed(ErrorInfo.from_exception(exc))
            return [self._placed(failed)] * count
        fn = self.fns.get(lane)
        if fn is None:
            fn = ErrorInfo("LookupError", "the actor has no function for this lane", "")
        if isinstance(fn, ErrorInfo):
            return [self._placed(Failed(fn)) for _ in tasks]
        return [self._placed(call(fn, spread(args))) for args in tasks]

    def _placed(self, outcome: Outcome) -> Outcome:
        """A failure on another node than the driver's says which node and host it ran on; a
        file not found where the driver's folder is missing says why relative paths missed.
        The items of a batch's part are placed each (slabs.py: a part is loaded as one task)."""
        if isinstance(outcome, Done) and isinstance(outcome.value, Part):
            outcome.value.outcomes[:] = [self._placed(o) for o in outcome.value.outcomes]
            return outcome
        if not isinstance(outcome, Failed):
            return outcome
        error = outcome.error
        message = error.message
        if self.elsewhere and error.type in FILE_ERRORS:
            message += FOLDER_HINT.format(folder=self.elsewhere)
        if self.where:
            message += f" (on {self.where})"
        if message == error.message:
            return outcome
        placed = Failed(replace(error, message=message))
        if outcome.metrics:  # what it reported goes back with it
            object.__setattr__(placed, "metrics", outcome.metrics)
        return placed


def where(driver_node: str) -> str:
    """'Ray node ID on HOST' when this actor runs on another node than the driver, else ''."""
    import socket

    import ray

    node = ray.get_runtime_context().get_node_id()
    if not driver_node or node == driver_node:
        return ""
    return f"Ray node {node[:8]} on {socket.gethostname()}"


__all__ = ["TaskActor", "where"]
