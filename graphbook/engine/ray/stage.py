"""Stage actors: a batch step's `on_item_batch` on Ray actors holding replicas of the step.

The driver only steers. Its load tasks keep their values (decoded images) in the object store
of the node that decoded them (`RayPool.lane(keep=True)`); a batch goes to a stage actor as
those values' refs plus the items and dicts (small). The actor fetches the values from whichever
node holds them (node to node, never through the driver), runs `on_item_batch` on its replica of
the step, and answers with the dicts as it changed them (the driver updates its own in place,
so the nodes downstream see the fields), what it logged and reported, and an error as a value
with its traceback. The dump arguments it returned stay in its node's object store as one
object the driver hands to the dump lane unread.

A replica is the step the driver built and started, pickled once (a model it holds included)
and loaded once by each actor; on an actor that Ray gave a GPU its models move to `cuda`. State
the step keeps on `self` in `on_item_batch` is per replica. One replica runs on each node (one
per GPU on GPU nodes) up to `RayPool.replicas`; each reserves a CPU (or a GPU), so an
autoscaling cluster sees the demand. A replica Ray cannot place yet holds nothing up: batches go
to the ones that are ready. A replica lost with its node is replaced, and its batches run again
on another; a batch whose loaded values were lost with a node is loaded again.

Ray is imported by the Ray pool that makes a stage; this module imports it only in functions.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from graphbook.engine.pool import BatchResult, Done, Failed, Lane, OrderedLane, Outcome
from graphbook.events import ErrorInfo

if TYPE_CHECKING:
    from graphbook.engine.ray.nodes import Node
    from graphbook.engine.ray.pool import RayPool
    from graphbook.engine.ray.transfer import Packed
    from graphbook.steps import BatchStep

logger = logging.getLogger(__name__)

AUTO, ON, OFF = "auto", "on", "off"
STAGES = (AUTO, ON, OFF)
"""Where batch steps' `on_item_batch` runs on Ray (`--ray-stages`)."""
PER_REPLICA = 2
"""Batches queued on one stage actor: it starts the next while the driver takes one back."""
PLACE_WAIT = 20.0
"""Seconds batches wait for Ray to place a replica (to start its process: its imports come
after) before one that reserves nothing starts on the driver's node (a cluster whose CPUs are
all reserved still runs)."""
PRELOAD = ("numpy", "torch", "torchvision", "PIL.Image")


def stages_problem(stages: str) -> str | None:
    """Why `stages` is not a setting of `--ray-stages`, saying what is; None when it is."""
    if stages in STAGES:
        return None
    return f"--ray-stages is one of {', '.join(STAGES)}, not {stages!r}"


def runs_on_driver(step: Any) -> bool:
    """Whether a step says its `on_item_batch` needs the driver (`runs_on_driver = True`)."""
    return bool(getattr(step, "runs_on_driver", False))


class Watcher(Protocol):
    """Calls the Ray pool's `wait` waits for besides its own."""

    def refs(self) -> list[Any]: ...

    def asked(self) -> list[tuple[Node | None, float]]: ...

    def receive(self, ready: list[Any]) -> None: ...

    def dispatch(self) -> None: ...

    def close(self) -> None: ...


def _fits(room: dict[str, float] | None, node_id: str) -> bool:
    """Whether a replica pinned to `node_id` can reserve a CPU there (taking it from `room`,
    the CPUs free by node; None: unknown, so it reserves one). One that cannot would wait for
    room the node may never have (an autoscaler adds nodes, not room on a node): it starts
    reserving nothing, so the node's loads are used where they were made."""
    if not _has_room(room, node_id):
        return False
    if room is not None:
        room[node_id] -= 1.0
    return True


def _has_room(room: dict[str, float] | None, node_id: str) -> bool:
    """Whether `room` (the CPUs free by node; None: unknown) has a CPU free on `node_id`."""
    return room is None or room.get(node_id, 0.0) >= 1.0


def stage_for(pool: RayPool, node_id: str, step: BatchStep, capacity: int) -> RayStage | None:
    """Stage actors for `step`, or None when it runs on the driver (it says it must, or it
    cannot be pickled): the run's log then says why."""
    if runs_on_driver(step):
        pool.notice(f"node {node_id!r} runs on_item_batch on the driver (runs_on_driver = True)")
        return None
    try:
        pool.ray.cloudpickle.dumps(step)
    except Exception as exc:
        pool.notice(
            f"node {node_id!r} runs on_item_batch on the driver: its step cannot be sent to "
            f"Ray stage actors ({first_line(exc)})",
            "warning",
        )
        return None
    return RayStage(pool, node_id, step, capacity)


@dataclass(eq=False)
class _Replica:
    """The driver's view of one stage actor."""

    actor: Any
    node: Node | None
    starting: Any
    """The ref of its `ready()` call while it starts, imports included (None once it
    answered)."""
    placing: Any = None
    """The ref of its `placed()` call until it answers: until then Ray may not have found it
    room (answered, it runs on a node and is starting there)."""
    kind: tuple[str, bool, bool] = ("", False, True)
    """(its node's id, whether it has a GPU, whether it reserves a CPU or GPU): a replica kept
    idle by the pool between runs serves a later stage of the same kind."""
    calls: dict[Any, int] = field(default_factory=dict)
    """Ref of each batch call in flight -> its ticket."""
    learned: bool = False


@dataclass
class _Batch:
    ticket: int
    args: tuple[Any, ...]
    nodes: Counter[str]
    """Where its loaded values are, by node id: a replica there reads them locally."""
    since: float = field(default_factory=time.monotonic)


class RayStage:
    """The stage actors of one batch step in one run, and its lane of batches."""

    def __init__(self, pool: RayPool, node_id: str, step: BatchStep, capacity: int) -> None:
        self.pool = pool
        self.ray = pool.ray
        self.node_id = node_id
        self.step = step
        self.gpu = float(self.ray.cluster_resources().get("GPU", 0)) > 0 and holds_model(step)
        per_node = {node.id: self._per_node(node) for node in pool.nodes.refresh()}
        self.limit = pool.replicas or max(1, sum(per_node.values()))
        self._lane: OrderedLane[Any] = OrderedLane(self, 0, "load", PER_REPLICA * self.limit + 1)
        self.batches: Lane[Any] = self._lane
        self._tickets = itertools.count()
        self._backlog: deque[int] = deque()
        self._tasks: dict[int, _Batch] = {}
        self._calls: dict[Any, tuple[_Replica, Any]] = {}
        """Ref of each batch call -> its replica and the ref of its dump arguments."""
        self._pickled: Any = None
        self._fallback = False
        self._warned_state = False
        self._remote = self.ray.remote(StageActor)
        self.replicas: list[_Replica] = []
        room = None if self.gpu else pool.room()
        for node in pool.nodes.refresh():
            for _ in range(per_node[node.id]):
                if len(self.replicas) < self.limit:
                    self.replicas.append(self._start(node, _fits(room, node.id)))
        pool.watch(self)
        self.notice = self._notice()

    # -- the stage ----------------------------------------------------------------------
    def loads(self, fn: Callable[..., Any], capacity: int) -> Lane[Any]:
        return self.pool.lane(fn, capacity, keep=True)

    def _notice(self) -> str:
        where = sorted({r.node.describe() for r in self.replicas if r.node is not None})
        kind = "a GPU" if self.gpu else "a CPU"
        bare = sum(1 for r in self.replicas if not r.kind[2])
        unreserved = f", {bare} reserving nothing (no room was free)" if bare else ""
        return (
            f"on_item_batch runs on Ray stage actors, each with a replica of this step and "
            f"{kind} reserved ({len(self.replicas)} at first{unreserved}, up to {self.limit}; "
            f"on {', '.join(where) or 'nodes Ray picks'}): what it keeps on self is per "
            "replica (--ray-stages off: on the driver)"
        )

    def _per_node(self, node: Node) -> int:
        if not self.gpu:
            return 1
        for info in self.ray.nodes():
            if info.get("NodeID") == node.id:
                return int(info.get("Resources", {}).get("GPU", 0))
        return 0

    # -- the Dispatcher protocol (for the lane) ----------------------------------------------
    def submit(self, lane: OrderedLane[Any], args: tuple[Any, ...]) -> int:
        ticket = next(self._tickets)
        values = args[0]
        nodes = Counter(getattr(v, "node", "") for v in values if getattr(v, "node", ""))
        self._tasks[ticket] = _Batch(ticket, args, nodes)
        self._backlog.append(ticket)
        return ticket

    def forget(self, lane_id: int) -> None:
        self.close()

    # -- the Watcher protocol (for the pool's wait) ----------------------------------------
    def refs(self) -> list[Any]:
        starting = [r.starting for r in self.replicas if r.starting is not None]
        placing = [r.placing for r in self.replicas if r.placing is not None]
        return [*self._calls, *starting, *placing]

    def asked(self) -> list[tuple[Node | None, float]]:
        """(node, CPUs) its replicas reserve that Ray may not count yet: not yet placed (a
        replica given a GPU reserves no CPU)."""
        if self.gpu:
            return []
        return [(r.node, 1.0) for r in self.replicas if r.placing is not None and r.kind[2]]

    def dispatch(self) -> None:
        """Hand waiting batches to ready replicas with room, least busy first, then those on
        the node that holds most of the batch's values; grow while full batches wait."""
        self._grow()
        while self._backlog:
            free = [r for r in self.replicas if r.starting is None and len(r.calls) < PER_REPLICA]
            if not free:
                return
            batch = self._tasks[self._backlog.popleft()]
            replica = min(free, key=lambda r: (len(r.calls), -batch.nodes[_node_id(r)]))
            self._send(replica, batch)

    def receive(self, ready: list[Any]) -> None:
        for ref in ready:
            if ref in self._calls:
                self._receive(ref)
                continue
            replica = next((r for r in self.replicas if r.starting == ref), None)
            if replica is not None:
                self._started(replica)
            for replica in self.replicas:
                if replica.placing == ref:  # it runs somewhere (it may have died since)
                    replica.placing = None

    def close(self) -> None:
        """The run is over: replicas that are up and idle wait in the pool for its next run
        (`spare_stages`, ended with the pool); the others end."""
        self.pool.unwatch(self)
        for replica in self.replicas:
            if replica.starting is None and not replica.calls and not self.pool.closed:
                replica.learned = False
                self.pool.spare_stages.append(replica)
                continue
            with contextlib.suppress(Exception):
                self.ray.kill(replica.actor, no_restart=True)
        self.replicas.clear()
        self._calls.clear()
        self._tasks.clear()
        self._backlog.clear()

    # -- replicas -----------------------------------------------------------------------
    def _start(self, node: Node | None, reserve: bool = True) -> _Replica:
        kind = (node.id if node is not None else "", self.gpu, reserve)
        spares = self.pool.spare_stages
        spare: _Replica | None = next((r for r in spares if r.kind == kind), None)
        if spare is not None:  # up already: an earlier run's, idle
            spares.remove(spare)
            return spare
        options: dict[str, Any] = {"num_cpus": 1 if reserve and not self.gpu else 0}
        if self.gpu and reserve:
            options["num_gpus"] = 1
        if node is not None:
            options["scheduling_strategy"] = self.pool.nodes.strategy(node)
        if self.pool.runtime_env is not None:
            options["runtime_env"] = self.pool.runtime_env
        preload = [name for name in PRELOAD if name in sys.modules]
        args = (os.getcwd(), self.pool.driver_node, self.pool.shipped, preload, self.gpu)
        actor = self._remote.options(**options).remote(self.node_id, *args)
        logger.debug("started a Ray stage actor on %s", node and node.describe())
        placing = actor.placed.remote()
        return _Replica(actor, node, actor.ready.remote(), kind=kind, placing=placing)

    def _started(self, replica: _Replica) -> None:
        try:
            self.ray.get(replica.starting)
        except self.ray.exceptions.RayActorError as exc:
            self._lose(replica, exc)
            return
        replica.starting = replica.placing = None  # ready: placed too

    def _grow(self) -> None:
        """One more replica while full batches wait for one and the limit allows; the first
        that reserves nothing, on the driver's node, when Ray placed none in time (one placed
        and still starting, importing torch on a busy machine, is no cause)."""
        if not self._backlog:
            return
        if all(r.placing is not None for r in self.replicas) and not self._fallback:
            if time.monotonic() - self._tasks[self._backlog[0]].since > PLACE_WAIT:
                self._fallback = True
                self.pool.notice(
                    f"node {self.node_id!r}: no Ray stage actor could be placed in "
                    f"{PLACE_WAIT:.0f} s (its CPU or GPU is reserved by others): one that "
                    "reserves nothing runs on the driver's node",
                    "warning",
                )
                self.replicas.append(self._start(self.pool.nodes.at(self.pool.driver_node), False))
            return
        busy = all(len(r.calls) >= PER_REPLICA for r in self.replicas)
        if busy and len(self.replicas) < self.limit and not self._starting():
            self.replicas.append(self._more())

    def _starting(self) -> bool:
        return any(r.starting is not None for r in self.replicas)

    def _more(self) -> _Replica:
        """One more replica, reserving a CPU (or a GPU) on the node with room and the fewest
        replicas. With no room on any node: on a cluster, one that reserves and waits for room
        wherever Ray finds it (or a node an autoscaler adds); on a Ray started here, one that
        reserves nothing on the node with the fewest replicas, as the first ones do."""
        room = None if self.gpu else self.pool.room()
        counts = Counter(_node_id(r) for r in self.replicas)
        live = self.pool.nodes.refresh()
        node = min(live, key=lambda n: (not _has_room(room, n.id), counts[n.id]), default=None)
        if node is None or _has_room(room, node.id):
            return self._start(node)
        return self._start(None) if self.pool.elastic else self._start(node, reserve=False)

    def _lose(self, replica: _Replica, exc: Exception) -> None:
        """A stage actor died: lost with its node (or never started there), its batches run
        again on another replica; else (the step killed it) they fail, saying so."""
        if replica not in self.replicas:
            return
        self.replicas.remove(replica)
        with contextlib.suppress(Exception):
            self.ray.kill(replica.actor, no_restart=True)
        innocent = replica.node is not None and self.pool.nodes.lost(replica.node, exc)
        logger.warning("a Ray stage actor died; starting another")
        tickets = list(replica.calls.values())
        for ref in replica.calls:
            self._calls.pop(ref, None)
        replica.calls.clear()
        node = replica.node if not innocent else None
        if node is not None or not self.replicas:
            self.replicas.append(self._start(node or self.pool.nodes.next()))
        if innocent:
            self._backlog.extendleft(reversed([t for t in tickets if t in self._tasks]))
            return
        for ticket in tickets:
            self._resolve(ticket, Failed(died(exc)))

    # -- batches ------------------------------------------------------------------------
    def _send(self, replica: _Replica, batch: _Batch) -> None:
        from graphbook.engine.ray.transfer import pack_refs

        if not replica.learned:  # the step as the driver built and started it
            if self._pickled is None:
                self._pickled = self.ray.put(self.ray.cloudpickle.dumps(self.step))
            replica.actor.learn.remote(self._pickled, self.node_id)
            replica.learned = True
        packed, refs = pack_refs(batch.args)
        ref, dumps = replica.actor.run.options(num_returns=2).remote(packed, refs)
        replica.calls[ref] = batch.ticket
        self._calls[ref] = (replica, dumps)

    def _receive(self, ref: Any) -> None:
        from graphbook.engine.ray.transfer import size, unpack

        replica, dumps = self._calls[ref]
        try:
            packed = self.ray.get(ref)
        except self.ray.exceptions.RayActorError as exc:
            self._lose(replica, exc)
            return
        except Exception as exc:  # its answer could not be read back
            packed, error = None, ErrorInfo.from_exception(exc)
        del self._calls[ref]
        ticket = replica.calls.pop(ref)
        if packed is None:
            self._resolve(ticket, Failed(error))
            return
        self.pool.timings.received += size(packed)
        reply: Outcome = unpack(packed)
        batch = self._tasks.get(ticket)
        if batch is not None and isinstance(reply, Done) and not reply.value.lost:
            update_dicts(batch.args[2], reply.value.data)
            self._warn_state(reply.value.changed)
        self._resolve(ticket, _outcome(reply, dumps, _node_id(replica)))

    def _warn_state(self, changed: list[str]) -> None:
        """Say once that the step keeps state on self, which each replica keeps apart."""
        if not changed or self._warned_state:
            return
        self._warned_state = True
        names = ", ".join(f"self.{name}" for name in changed)
        self.pool.notice(
            f"node {self.node_id!r}: on_item_batch changed {names} on its Ray stage actor: what "
            "a step keeps on self is per replica, and the driver's step (its on_end, the next "
            "run) does not see it; give the step runs_on_driver = True (or run with "
            "--ray-stages off) to keep on_item_batch on the driver",
            "warning",
        )

    def _resolve(self, ticket: int, outcome: Outcome) -> None:
        if self._tasks.pop(ticket, None) is not None:
            self._lane.resolve(ticket, outcome)


def _node_id(replica: _Replica) -> str:
    return replica.node.id if replica.node is not None else ""


def _outcome(reply: Outcome, dumps: Any, node: str) -> Outcome:
    """A stage actor's reply as the runner takes it: its dump arguments left where they are."""
    from graphbook.engine.ray.transfer import Kept

    if not isinstance(reply, Done):
        return reply
    answer: Reply = reply.value
    kept = [Kept(dumps, n, node, spread=True) for n in range(answer.dumps)]
    outcome = Done(BatchResult(kept, answer.logs, answer.lost))
    if reply.metrics:
        object.__setattr__(outcome, "metrics", reply.metrics)
    return outcome


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


def holds_model(step: Any) -> bool:
    """Whether the step holds a torch module (a model resource) among its attributes."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    return any(isinstance(value, torch.nn.Module) for value in vars(step).values())


def died(exc: BaseException) -> ErrorInfo:
    message = (
        f"the Ray stage actor running this batch died ({first_line(exc)}); a new one took its place"
    )
    return ErrorInfo("WorkerDied", message, f"{message}\n\n{exc}")


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

        from graphbook.engine.ray.ship import importable

        importable(shipped)
        if cwd and os.path.isdir(cwd):  # relative paths mean the driver's folder, if here
            os.chdir(cwd)
        self.preload = list(preload)
        self.node_id = node_id
        self.gpu = gpu
        self.where = _where(driver_node)
        self.step: Any = None
        self.broken: ErrorInfo | None = None
        self.calls = 0
        """Batches run by the replica learned last."""

    def placed(self) -> bool:
        """Answers as soon as the actor runs: Ray found it room (its imports come next)."""
        return True

    def ready(self) -> bool:
        """Answers once the modules the driver uses are imported (torch: seconds)."""
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


def _where(driver_node: str) -> str:
    """'Ray node ID on HOST' when this actor runs on another node than the driver, else ''."""
    import socket

    import ray

    node = ray.get_runtime_context().get_node_id()
    if not driver_node or node == driver_node:
        return ""
    return f"Ray node {node[:8]} on {socket.gethostname()}"


__all__ = ["AUTO", "OFF", "ON", "STAGES", "RayStage", "StageActor", "stage_for", "stages_problem"]
