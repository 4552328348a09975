"""Stage actors: a batch step's `on_item_batch` on Ray actors holding replicas of the step.

The driver only steers. Its load tasks keep their values (decoded images) in the object store
of the node that decoded them (a `kept` lane, `StageHost.lane`); a batch goes to a stage actor as
those values' refs plus the items and dicts (small). The actor fetches the values from whichever
node holds them (node to node, never through the driver), runs `on_item_batch` on its replica of
the step, and answers with the dicts as it changed them (the driver updates its own in place,
so the nodes downstream see the fields), what it logged and reported, and an error as a value
with its traceback. The dump arguments it returned stay in its node's object store as one
object the driver hands to the dump lane unread.

A replica is the step the driver built and started, pickled once (a model it holds included)
and loaded once by each actor; on an actor that Ray gave a GPU its models move to `cuda`. State
the step keeps on `self` in `on_item_batch` is per replica. One replica runs on each node (one
per GPU on GPU nodes) up to the pool's `replicas`; each reserves a CPU (or a GPU), so an
autoscaling cluster sees the demand. A replica Ray cannot place yet holds nothing up: batches go
to the ones that are ready. A replica lost with its node is replaced, and its batches run again
on another; a batch whose loaded values were lost with a node is loaded again.

Ray is imported by the Ray pool that makes a stage (a `StageHost`: this module depends on that
seam, never on the pool); this module imports Ray only in functions. The actor's side is
stage_actor.py.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from graphbook.engine.pool import (
    WORKER_DIED,
    BatchResult,
    Done,
    Failed,
    Kind,
    Lane,
    NoticeLevel,
    OrderedLane,
    Outcome,
)
from graphbook.engine.ray.preload import of_pickle
from graphbook.engine.ray.stage_actor import Reply, StageActor, first_line, update_dicts
from graphbook.events import ErrorInfo

if TYPE_CHECKING:
    from graphbook.engine.ray.connection import Connection
    from graphbook.engine.ray.nodes import Node
    from graphbook.lifecycle import BatchStep

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


class StageHost(Protocol):
    """What stage actors need of the Ray pool that makes them (the seam between the two: the
    pool is one, and this module never imports it)."""

    @property
    def connection(self) -> Connection:
        """The Ray the pool joined: its nodes, the driver's node, what actors ship."""
        ...

    @property
    def replicas(self) -> int:
        """Stage actors per batch step at most (0: one per node, per GPU on GPU nodes)."""
        ...

    @property
    def closed(self) -> bool: ...

    @property
    def spares(self) -> Spares:
        """Stage actors idle since their run ended, for the next run's stages."""
        ...

    def lane(
        self, fn: Callable[..., Any], capacity: int, kind: Kind = "load", kept: bool = False
    ) -> Lane[Any]:
        """A lane of the pool's load actors; `kept`: its values stay in the object store."""
        ...

    def room(self) -> dict[str, float] | None:
        """The CPUs free on each live node for one more reservation."""
        ...

    def watch(self, stage: RayStage) -> None:
        """Have the pool's `wait` wait for the stage's calls too (it is a `Watcher`)."""
        ...

    def unwatch(self, stage: RayStage) -> None: ...

    def received(self, size: int) -> None:
        """Count `size` bytes the driver read back (the pool's `timings`)."""
        ...

    def notice(self, text: str, level: NoticeLevel = "info") -> None:
        """A line for the run's log."""
        ...


def stages_problem(stages: str) -> str | None:
    """Why `stages` is not a setting of `--ray-stages`, saying what is; None when it is."""
    if stages in STAGES:
        return None
    return f"--ray-stages is one of {', '.join(STAGES)}, not {stages!r}"


def runs_on_driver(step: Any) -> bool:
    """Whether a step says its `on_item_batch` needs the driver (`runs_on_driver = True`)."""
    return bool(getattr(step, "runs_on_driver", False))


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


def stage_for(host: StageHost, node_id: str, step: BatchStep, capacity: int) -> RayStage | None:
    """Stage actors for `step`, or None when it runs on the driver (it says it must, or it
    cannot be pickled): the run's log then says why."""
    if runs_on_driver(step):
        host.notice(f"node {node_id!r} runs on_item_batch on the driver (runs_on_driver = True)")
        return None
    try:
        pickled = host.connection.ray.cloudpickle.dumps(step)
    except Exception as exc:
        host.notice(
            f"node {node_id!r} runs on_item_batch on the driver: its step cannot be sent to "
            f"Ray stage actors ({first_line(exc)})",
            "warning",
        )
        return None
    return RayStage(host, node_id, step, capacity, of_pickle(pickled))


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


class Spares:
    """Stage actors idle since their run ended, kept by the pool for its next run's stages
    (by kind: node, GPU, reservation), and ended with it."""

    def __init__(self) -> None:
        self._idle: list[_Replica] = []

    def __iter__(self) -> Iterator[_Replica]:
        return iter(self._idle)

    def put(self, replica: _Replica) -> None:
        replica.learned = False  # the next stage's step is another
        self._idle.append(replica)

    def take(self, kind: tuple[str, bool, bool]) -> _Replica | None:
        spare = next((r for r in self._idle if r.kind == kind), None)
        if spare is not None:
            self._idle.remove(spare)
        return spare

    def close(self, ray: Any) -> None:
        for spare in self._idle:
            with contextlib.suppress(Exception):
                ray.kill(spare.actor, no_restart=True)
        self._idle.clear()


@dataclass
class _Batch:
    ticket: int
    args: tuple[Any, ...]
    nodes: Counter[str]
    """Where its loaded values are, by node id: a replica there reads them locally."""
    since: float = field(default_factory=time.monotonic)


class RayStage:
    """The stage actors of one batch step in one run, and its lane of batches."""

    def __init__(
        self,
        host: StageHost,
        node_id: str,
        step: BatchStep,
        capacity: int,
        preload: Sequence[str] = (),
    ) -> None:
        self.host = host
        self.connection = host.connection
        self.ray = self.connection.ray
        self.nodes = self.connection.nodes
        self.node_id = node_id
        self.step = step
        self.preload = list(preload)
        """What its replicas import as they start (what loading the step imports of
        preload.SLOW), so a replica is ready once it can run a batch at once."""
        self.gpu = float(self.ray.cluster_resources().get("GPU", 0)) > 0 and holds_model(step)
        per_node = {node.id: self._per_node(node) for node in self.nodes.refresh()}
        self.limit = host.replicas or max(1, sum(per_node.values()))
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
        room = None if self.gpu else host.room()
        for node in self.nodes.refresh():
            for _ in range(per_node[node.id]):
                if len(self.replicas) < self.limit:
                    self.replicas.append(self._start(node, _fits(room, node.id)))
        host.watch(self)
        self.notice = self._notice()

    # -- the stage ----------------------------------------------------------------------
    def loads(self, fn: Callable[..., Any], capacity: int) -> Lane[Any]:
        return self.host.lane(fn, capacity, kept=True)

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
        (`spares`, ended with the pool); the others end."""
        self.host.unwatch(self)
        for replica in self.replicas:
            if replica.starting is None and not replica.calls and not self.host.closed:
                self.host.spares.put(replica)
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
        spare = self.host.spares.take(kind)
        if spare is not None:  # up already: an earlier run's, idle
            return spare
        options: dict[str, Any] = {"num_cpus": 1 if reserve and not self.gpu else 0}
        if self.gpu and reserve:
            options["num_gpus"] = 1
        if node is not None:
            options["scheduling_strategy"] = self.nodes.strategy(node)
        connection = self.connection
        if connection.runtime_env is not None:
            options["runtime_env"] = connection.runtime_env
        args = (os.getcwd(), connection.driver_node, connection.shipped, self.preload, self.gpu)
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
                self.host.notice(
                    f"node {self.node_id!r}: no Ray stage actor could be placed in "
                    f"{PLACE_WAIT:.0f} s (its CPU or GPU is reserved by others): one that "
                    "reserves nothing runs on the driver's node",
                    "warning",
                )
                self.replicas.append(self._start(self.nodes.at(self.connection.driver_node), False))
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
        room = None if self.gpu else self.host.room()
        counts = Counter(_node_id(r) for r in self.replicas)
        live = self.nodes.refresh()
        node = min(live, key=lambda n: (not _has_room(room, n.id), counts[n.id]), default=None)
        if node is None or _has_room(room, node.id):
            return self._start(node)
        return self._start(None) if self.connection.elastic else self._start(node, reserve=False)

    def _lose(self, replica: _Replica, exc: Exception) -> None:
        """A stage actor died: lost with its node (or never started there), its batches run
        again on another replica; else (the step killed it) they fail, saying so."""
        if replica not in self.replicas:
            return
        self.replicas.remove(replica)
        with contextlib.suppress(Exception):
            self.ray.kill(replica.actor, no_restart=True)
        innocent = replica.node is not None and self.nodes.lost(replica.node, exc)
        logger.warning("a Ray stage actor died; starting another")
        tickets = list(replica.calls.values())
        for ref in replica.calls:
            self._calls.pop(ref, None)
        replica.calls.clear()
        node = replica.node if not innocent else None
        if node is not None or not self.replicas:
            self.replicas.append(self._start(node or self.nodes.next()))
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
        self.host.received(size(packed))
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
        self.host.notice(
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
    return ErrorInfo(WORKER_DIED, message, f"{message}\n\n{exc}")


__all__ = [
    "AUTO",
    "OFF",
    "ON",
    "STAGES",
    "RayStage",
    "Spares",
    "StageHost",
    "stage_for",
    "stages_problem",
]
