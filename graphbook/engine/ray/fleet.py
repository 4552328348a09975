"""The Ray pool's actors: each kind's (load, dump) started where there is room, pinned to a
node (nodes.py), attached to warm when an earlier driver left them detached (detached.py),
grown and ended as the work asks (sizing.py), replaced when they die, and ended with the pool.

An actor reserves `actor_cpus` so that an autoscaler sees the demand of actors that do not fit;
one asked for where a node had room takes tasks while it starts (they run once it has), one
asked for without room takes none until it has started (Ray may never place it).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphbook.engine.pool import Kind
from graphbook.engine.ray.actor import TaskActor
from graphbook.engine.ray.connection import Connection
from graphbook.engine.ray.detached import Detached, attach, named, release
from graphbook.engine.ray.nodes import DRIVER, Node
from graphbook.engine.ray.notices import Notices
from graphbook.engine.ray.preload import of_node_files
from graphbook.engine.ray.sizing import Decision, Limits, Load, Sizer, summary

logger = logging.getLogger(__name__)

KINDS: tuple[Kind, ...] = ("load", "dump")
PLACED: tuple[Kind, ...] = ("dump", "load")
"""The order a pool's first actors are placed in: dumps first, where they must go (the driver's
node), loads in the room left."""
ACTOR_CPUS = 1.0
"""CPUs each load and dump actor reserves by default, so that an autoscaler sees the demand of
actors that do not fit (`--ray-actor-cpus`)."""
NO_ROOM = (
    "the pool's first {count} actors would reserve {need:g} CPUs ({cpus:g} each) and the Ray "
    "cluster has {free:g} free where they go: they reserve none, as --ray-actor-cpus 0 would; "
    "actors the pool adds as work waits reserve {cpus:g} each"
)

Asked = Callable[[], list[tuple[Node | None, float]]]
"""(node, CPUs) that others (stage replicas) asked for and Ray may not count yet."""


@dataclass(eq=False)
class Handle:
    """The driver's view of one actor: its calls in flight (oldest first), lanes it knows."""

    actor: Any
    node: Node | None = None
    """The node it was placed on (None: where Ray chose)."""
    name: str = ""
    """Its name in the pool's namespace, when it is detached (detached.py)."""
    calls: deque[tuple[Any, tuple[int, ...]]] = field(default_factory=deque)
    """(object ref, tickets) of each call not yet collected, in the order they were made."""
    load: int = 0
    """Tasks in those calls."""
    lanes: set[int] = field(default_factory=set)
    dead: bool = False
    alone: bool = False
    """Running a suspect task: it gets nothing else until that task is back."""
    starting: Any = None
    """Until it has started: the object ref of its first call (its node's id)."""
    room: bool = True
    """Whether a node had room for it when it was asked for. One that had gets tasks while it
    starts (they run once it has, even if the driver is then busy for good); one that had not
    gets none until it has started (Ray may never place it: an autoscaler may add no node)."""
    cpus: float = 0.0
    """CPUs it reserves."""
    idle_since: float = field(default_factory=time.monotonic)
    """When it last had no task."""

    @property
    def idle(self) -> bool:
        """Whether it has started and has no call in flight (one that has could be busy for
        good)."""
        return not self.dead and not self.calls and self.starting is None


class Fleet:
    """The load and dump actors of one pool: `limits.least` of each kind to start with (the
    warm ones a detached namespace holds first), grown while work waits up to `workers` (the
    limits' most on the cluster's CPUs now), each reserving `actor_cpus`. Dump actors run on
    the driver's node unless `dumps` is `anywhere` (nodes.py)."""

    def __init__(
        self,
        connection: Connection,
        notices: Notices,
        limits: Limits,
        actor_cpus: float,
        dumps: str,
        detached: Detached | None,
        asked: Asked,
    ) -> None:
        self._connection = connection
        self._ray = connection.ray
        self.nodes = connection.nodes
        self._notices = notices
        self._asked = asked
        self.limits = limits
        self.actor_cpus = actor_cpus
        self.dumps = dumps
        self.detached = detached
        self.workers = self.limits.most_now(connection.cluster_cpus())
        """The most actors of each kind now (nodes join and leave)."""
        self.actors: dict[Kind, list[Handle]] = {kind: [] for kind in KINDS}
        self.attached = 0
        """Actors this pool found warm, left detached by a driver before it, and uses."""
        self.warm: set[Kind] = set()
        """Kinds whose actors have sent outcomes back: until then, a slow first call (the
        function learned, modules imported) says nothing of the load."""
        self._sizers = {kind: Sizer(self.limits) for kind in KINDS}
        self._run: dict[Kind, list[int]] = {}
        """Per kind used by the run: actors at its start, the most ready since, on how many
        nodes."""
        self._remote = connection.remote(TaskActor)
        self._seed = secrets.randbits(32)
        self._numbers = itertools.count()

    # -- who is there ---------------------------------------------------------------------
    def group(self, kind: Kind) -> list[Handle]:
        """The live actors of `kind`, started or not."""
        return [h for h in self.actors[kind] if not h.dead]

    def takers(self, kind: Kind) -> list[Handle]:
        """The actors of `kind` that take tasks: started, or sure to start (they had room)."""
        return [h for h in self.group(kind) if h.room or h.starting is None]

    def ready(self, kind: Kind) -> list[Handle]:
        """The actors of `kind` that have started: the ones tasks go to."""
        return [h for h in self.actors[kind] if not h.dead and h.starting is None]

    def starting(self) -> dict[Any, Handle]:
        """The ref of each starting actor's first call -> the actor."""
        return {h.starting: h for hs in self.actors.values() for h in hs if h.starting}

    def kind_of(self, handle: Handle) -> Kind:
        return next(k for k, hs in self.actors.items() if handle in hs)

    def room(self) -> dict[str, float] | None:
        """The CPUs free on each live node for one more reservation: Ray's count less what the
        pool's actors and stage replicas asked for and Ray may not count yet (Ray counts an
        actor once it is placed; one still starting is taken as not counted, so a new actor
        never reserves a CPU another one holds). None when Ray does not say."""
        room = self.nodes.room()
        if room is None:
            return None
        asked = [
            (h.node, h.cpus)
            for kind in KINDS
            for h in self.group(kind)
            if h.starting is not None and h.cpus
        ]
        for node, cpus in [*asked, *self._asked()]:
            if node is not None and node.id in room:
                room[node.id] = max(0.0, room[node.id] - cpus)
        return room

    # -- starting -------------------------------------------------------------------------
    def start_least(self) -> None:
        """Each kind's first actors: the warm ones a driver before this one left detached,
        then new ones up to the minimum. They reserve `actor_cpus` each if all of them fit
        where they go (so the run never waits for room); else none, and the run's log says so."""
        missing: dict[Kind, int] = {}
        for kind in KINDS:
            if self.detached is not None:
                self.actors[kind].extend(self._attach(kind))
            missing[kind] = max(0, self.limits.least - len(self.actors[kind]))
        plan = self._plan(missing)
        for kind in PLACED:
            for _ in range(missing[kind]):
                if plan is None:
                    self.actors[kind].append(self.start(kind, 0.0))
                else:
                    self.actors[kind].append(self._start_on(kind, self.actor_cpus, plan.pop(0)))

    def _plan(self, missing: dict[Kind, int]) -> list[Node | None] | None:
        """Nodes with room for the missing actors (in PLACED order) to reserve `actor_cpus`
        each; None when they reserve none (they would not all fit: said once)."""
        cpus, count = self.actor_cpus, sum(missing.values())
        if not cpus or not count:
            return None
        room = dict(self.room() or {})
        plan: list[Node | None] = []
        for kind in PLACED:
            counts = self._counts(kind)
            for _ in range(missing[kind]):
                node = self._place(kind, cpus, room, counts)
                if node is None or room.get(node.id, 0.0) < cpus:
                    free = sum(room.values()) + cpus * len(plan)
                    need = cpus * count
                    self._notices.say(NO_ROOM.format(count=count, need=need, cpus=cpus, free=free))
                    return None
                room[node.id] -= cpus
                counts[node.id] = counts.get(node.id, 0) + 1
                plan.append(node)
        return plan

    def _attach(self, kind: Kind) -> list[Handle]:
        """The warm actors of `kind` in the pool's namespace, set up for this driver."""
        assert self.detached is not None
        namespace, cwd, driver = self.detached.namespace, os.getcwd(), self._connection.driver_node
        found = attach(
            self._ray, namespace, kind, self.workers, lambda: (self._next_seed(), cwd, driver)
        )
        if kind == "dump" and self.dumps == DRIVER:  # what they write lands on the driver's disk
            release(namespace, [w.name for w in found if w.node_id != driver])
            found = [w for w in found if w.node_id == driver]
        self.nodes.refresh()
        preload = of_node_files()
        handles = []
        for warm in found:
            if preload:  # what this driver's node files use and theirs may not have imported
                warm.handle.preload.remote(preload)
            handles.append(Handle(warm.handle, self.nodes.get(warm.node_id), warm.name))
        self.attached += len(handles)
        return handles

    def start(self, kind: Kind, cpus: float) -> Handle:
        """An actor of `kind` in place of one that died (or was busy), reserving `cpus` where
        it has room; with no room for it anywhere, it reserves none, so that it starts (it
        may be the only one of its kind: the run must not wait for room)."""
        counts = self._counts(kind)
        room = self.room() if cpus else None
        node = self._place(kind, cpus, room, counts)
        if cpus and (node is None or room is None or room.get(node.id, 0.0) < cpus):
            cpus, node = 0.0, self._place(kind, 0.0, None, counts)
        return self._start_on(kind, cpus, node)

    def replace(self, handle: Handle) -> None:
        """Start an actor in place of `handle` (ended), reserving what it reserved."""
        kind = self.kind_of(handle)
        handles = self.actors[kind]
        handles[handles.index(handle)] = self.start(kind, handle.cpus)

    def _start_on(self, kind: Kind, cpus: float, node: Node | None) -> Handle:
        detached = self.detached
        options: dict[str, Any] = named(kind, detached.namespace) if detached else {}
        options["num_cpus"] = cpus
        if node is not None:  # pinned: Ray's SPREAD may put every actor on one node
            options["scheduling_strategy"] = self.nodes.strategy(node)
        remote = self._remote.options(**options)
        connection = self._connection
        args = (self._next_seed(), os.getcwd(), of_node_files(), connection.driver_node)
        lease = (detached.namespace, detached.lease) if detached else ()
        actor = remote.remote(*args, connection.shipped, *lease)
        logger.debug("started a Ray %s actor on %s", kind, node and node.describe())
        return Handle(actor, node, options.get("name", ""), starting=actor.node.remote(), cpus=cpus)

    def _next_seed(self) -> int:
        return (self._seed + next(self._numbers)) % 2**32

    def _counts(self, kind: Kind) -> dict[str, int]:
        """Node id -> live actors of `kind` there."""
        counts: dict[str, int] = {}
        for handle in self.group(kind):
            if handle.node is not None:
                counts[handle.node.id] = counts.get(handle.node.id, 0) + 1
        return counts

    def _place(
        self, kind: Kind, cpus: float, room: dict[str, float] | None, counts: dict[str, int]
    ) -> Node | None:
        """The node for a new actor that reserves `cpus`: the driver's for dumps (unless they
        may run anywhere), else the one with room and the fewest of its kind (`counts`);
        None: where Ray finds room."""
        if kind != "dump" or self.dumps != DRIVER:
            return self.nodes.fewest(counts, cpus, room)
        driver = self._connection.driver_node
        node = self.nodes.at(driver)
        if node is None:  # struck off: an actor could not start there (it says why)
            logger.warning(
                "a Ray dump actor cannot run on the driver's node (%s): Ray places it, so "
                "the files it writes may land on another node",
                self.nodes.struck.get(driver, "not found"),
            )
        return node

    def started(self, handle: Handle) -> BaseException | None:
        """An actor answered its first call: it takes tasks from now on. Returns why it could
        not start instead (it died: its node may be lost)."""
        if handle.dead:
            return None
        try:
            node_id = self._ray.get(handle.starting)
        except self._ray.exceptions.RayActorError as exc:
            handle.starting = None
            died: BaseException = exc
            return died
        handle.starting = None
        handle.idle_since = time.monotonic()
        if handle.node is None:  # where Ray placed it
            self.nodes.refresh()
            handle.node = self.nodes.get(str(node_id))
        kind = self.kind_of(handle)
        self._sizers[kind].restart()
        self._count_ready(kind)
        return None

    # -- growing and ending ---------------------------------------------------------------
    def size(self, kind: Kind, waiting: int) -> None:
        """Grow, shrink or cancel as the kind's load says, `waiting` tasks on the driver
        (sizing.py)."""
        if self.limits.least == self.limits.most or kind not in self.warm:
            return  # exactly N, or not known yet
        now = time.monotonic()
        handles, ready = self.group(kind), self.ready(kind)
        idle = [now - h.idle_since for h in ready if not h.load]
        load = Load(
            len(ready), len(handles) - len(ready), waiting + sum(h.load for h in handles), len(idle)
        )
        decision = self._sizers[kind].observe(now, load, self.cluster_cpus(), idle)
        self._apply(kind, decision)

    def _apply(self, kind: Kind, decision: Decision) -> None:
        if decision.grow:
            self._grow(kind)
        if decision.cancel and self._unstarted(kind):
            self._drop(kind, self._unstarted(kind)[-1])
        for _ in range(decision.end):
            idle = [h for h in self.ready(kind) if not h.load]
            self._drop(kind, min(idle, key=lambda h: h.idle_since))

    def _grow(self, kind: Kind) -> None:
        """One more actor of `kind`, reserving `actor_cpus`, on the node with room and the
        fewest of its kind. With no room anywhere: on a cluster, asked for all the same (it
        waits for room, or for a node an autoscaler adds; the run goes on without it); on a
        Ray started here, none."""
        cpus = self.actor_cpus
        room = self.room() if cpus else None
        node = self._place(kind, cpus, room, self._counts(kind))
        fits = node is not None and (room is None or room.get(node.id, 0.0) >= cpus)
        if fits or self._connection.elastic:
            handle = self._start_on(kind, cpus, node)
            handle.room = fits
            self.actors[kind].append(handle)
            logger.debug("%s actors: one more asked for (room: %s)", kind, fits)

    def _unstarted(self, kind: Kind) -> list[Handle]:
        """The actors of `kind` not started yet and holding no task: the ones to cancel."""
        return [h for h in self.group(kind) if h.starting is not None and not h.calls]

    def _drop(self, kind: Kind, handle: Handle) -> None:
        """End an actor the work does not need (idle, or not started yet)."""
        self.end(handle)
        self.actors[kind].remove(handle)
        self._sizers[kind].restart()

    def end(self, handle: Handle) -> None:
        """Kill an actor (and forget its claim, when it is detached)."""
        handle.dead = True
        with contextlib.suppress(Exception):  # it died already
            self._ray.kill(handle.actor, no_restart=True)
        if handle.name and self.detached is not None:
            release(self.detached.namespace, [handle.name])

    def cluster_cpus(self) -> float:
        """The cluster's CPUs now; the most actors of a kind follows."""
        cpus = self._connection.cluster_cpus()
        self.workers = self.limits.most_now(cpus)
        return cpus

    # -- a run ----------------------------------------------------------------------------
    def begin_run(self, kind: Kind) -> None:
        """The run opened a lane of `kind`: note the actors it starts with."""
        if kind not in self._run:
            live = sum(1 for h in self.actors[kind] if not h.dead)
            self._run[kind] = [live, *self._ready_on(kind)]

    def end_run(self) -> None:
        """The run is over: say what the pool did with its actors, and cancel those beyond
        the minimum still waiting to start, newest first."""
        self._say_sizes()
        for kind in KINDS:
            starting = self._unstarted(kind)
            while starting and len(self.group(kind)) > self.limits.least:
                self._drop(kind, starting.pop())

    def _count_ready(self, kind: Kind) -> None:
        """The most actors of `kind` ready in this run so far, and on how many nodes."""
        seen = self._run.get(kind)
        if seen is None:
            return
        ready, nodes = self._ready_on(kind)
        if ready > seen[1]:
            seen[1:] = [ready, nodes]

    def _ready_on(self, kind: Kind) -> list[int]:
        ready = self.ready(kind)
        return [len(ready), len({h.node.id for h in ready if h.node is not None})]

    def _say_sizes(self) -> None:
        """Once a run, as it ends: what the pool did with its actors, as a note."""
        parts = []
        for kind, (first, peak, nodes) in self._run.items():
            parts.append(summary(kind, first, max(first, peak), max(nodes, 1), self.workers))
        self._run = {}
        if parts:
            self._notices.say("; ".join(parts))

    # -- the pool's end -------------------------------------------------------------------
    def close(self) -> None:
        """End every actor, but those left idle to the next driver when the pool lingers."""
        detached = self.detached
        leaves = detached is not None and detached.leaves
        for handles in self.actors.values():
            for handle in handles:
                if not (leaves and handle.idle):
                    self.end(handle)
        if detached is not None:
            left = [h.name for hs in self.actors.values() for h in hs if not h.dead]
            detached.close(self._ray, left)
        self.actors = {kind: [] for kind in KINDS}

    def describe(self) -> str:
        """The cluster's nodes, CPUs and GPUs, and the actors per kind."""
        resources = self._ray.cluster_resources()
        nodes = len(self.nodes.refresh())
        cpus, gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
        reserve = f"{self.actor_cpus:g} CPU each" if self.actor_cpus else "reserving no CPU"
        return (
            f"{nodes} node{'s' * (nodes != 1)}, {cpus} CPUs, {gpus} GPUs; "
            f"{self.limits.describe()} actors per kind, {reserve}"
        )

    def wait_ready(self) -> None:
        """Block until every actor has started (and imported what it preloads)."""
        self._ray.get([h.actor.pid.remote() for kind in KINDS for h in self.group(kind)])

    def pids(self, kind: Kind) -> list[int]:
        """The process ids of the live actors of `kind`."""
        return list(self._ray.get([h.actor.pid.remote() for h in self.group(kind)]))


__all__ = ["ACTOR_CPUS", "KINDS", "Fleet", "Handle"]
