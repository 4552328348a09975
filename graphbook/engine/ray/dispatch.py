"""The Ray pool's tasks, from a lane to an actor and back: tasks wait on the driver, go to the
least busy actors in groups of one lane's tasks, and their outcomes come back to their lanes in
order. `collect` (the pool's `wait`) is the one call that moves them; it also waits for actors
starting and for the stage actors' calls (`Watcher`). A lane's function is put in Ray's object
store once and learned once by each actor that runs it. An actor that dies is replaced: the task
that killed it is reported failed (or run again, `retries` times), and the others it held run
again (see `Dispatch._bury`).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from graphbook.engine.pool import WORKER_DIED, Done, Failed, Kind, OrderedLane, Outcome
from graphbook.engine.ray.fleet import KINDS, Fleet, Handle
from graphbook.engine.ray.nodes import Node
from graphbook.engine.ray.notices import Notices
from graphbook.events import ErrorInfo, KindStats, PoolStats

logger = logging.getLogger(__name__)

GROUP = 16
"""Tasks of one lane sent in one actor call, at most. Each call costs the driver, the actor and
Ray's raylet about 1.5 ms of CPU in all (its reply goes through the object store), as much as
decoding a small image: a group shares that cost (bench/README.md, "Graphbook on Ray")."""
PER_ACTOR = 2 * GROUP
"""Tasks queued on one actor at a time: two full groups, so an actor starts the next group
while the driver takes the last one back. The rest wait on the driver, so a new actor (one
that replaced a dead one) or an idle one gets work first."""

RayLane = OrderedLane[Any]


class Watcher(Protocol):
    """Calls the Ray pool's `wait` waits for besides its own (a stage's replicas)."""

    def refs(self) -> list[Any]: ...

    def asked(self) -> list[tuple[Node | None, float]]: ...

    def receive(self, ready: list[Any]) -> None: ...

    def dispatch(self) -> None: ...

    def close(self) -> None: ...


@dataclass
class Timings:
    """Where the driver's time went (seconds), for bench/ray.py."""

    sending: float = 0.0
    """Making calls: arguments serialized, calls queued to actors."""
    receiving: float = 0.0
    """Taking outcomes back: results fetched and deserialized."""
    waiting: float = 0.0
    """Blocked with nothing else to do until some call finished."""
    tasks: int = 0
    calls: int = 0
    """Actor calls that carried those tasks."""
    received: int = 0
    """Bytes of outcomes the driver read back (values kept in the object store not counted:
    they never reach it)."""


@dataclass
class Task:
    ticket: int
    lane: int
    kind: Kind
    args: tuple[Any, ...]
    deaths: int = 0
    """Times an actor died running this task, known for certain (it ran alone)."""
    suspect: bool = False
    """Its actor died while it was one of several calls: it runs again alone, to find out."""
    actor: Handle | None = None


class Dispatch:
    """The tasks of a pool's lanes (it is their dispatcher), the calls that carry them to the
    fleet's actors, and the one wait for what comes back."""

    def __init__(self, ray: Any, fleet: Fleet, notices: Notices, retries: int) -> None:
        from graphbook.engine.ray import transfer  # imports Ray

        self._ray = ray
        self._transfer = transfer
        self._fleet = fleet
        self._notices = notices
        self.retries = retries
        self.timings = Timings()
        self.closed = False
        self.watchers: list[Watcher] = []
        """Others whose calls `collect` waits for too (the stage actors of batch steps)."""
        self._lanes: dict[int, RayLane] = {}
        self._fns: dict[int, Any] = {}
        """Lane id -> the object ref of the pickled function, or why it could not be pickled."""
        self._kept_lanes: set[int] = set()
        """Lanes whose values stay in the object store (`lane(kept=True)`)."""
        self._kept: dict[Any, tuple[Any, str]] = {}
        """Object ref of a call of such a lane -> the ref of its values, and their node."""
        self._tasks: dict[int, Task] = {}
        self._backlog: dict[Kind, deque[int]] = {kind: deque() for kind in KINDS}
        self._refs: dict[Any, tuple[Handle, tuple[int, ...]]] = {}
        """Object ref of each call in flight -> its actor and tickets, in the order made."""
        self._tickets = itertools.count()
        self._lane_ids = itertools.count()

    # -- lanes ----------------------------------------------------------------------------
    def lane(self, fn: Callable[..., Any], capacity: int, kind: Kind, kept: bool) -> RayLane:
        """A lane for `fn`, its function put in the object store (or why it cannot be)."""
        lane = RayLane(self, next(self._lane_ids), kind, capacity)
        self._lanes[lane.id] = lane
        if kept:
            self._kept_lanes.add(lane.id)
        try:
            self._fns[lane.id] = self._ray.put(self._ray.cloudpickle.dumps(fn))
        except Exception as exc:
            error = ErrorInfo.from_exception(exc)
            name = getattr(fn, "__qualname__", fn)
            message = f"function {name!r} could not be sent to Ray: {error.message}"
            self._fns[lane.id] = ErrorInfo(error.type, message, error.traceback)
        return lane

    def submit(self, lane: RayLane, args: tuple[Any, ...]) -> int:
        if self.closed:
            raise RuntimeError("the Ray pool is closed; make a new one")
        ticket = next(self._tickets)
        fn = self._fns[lane.id]
        if isinstance(fn, ErrorInfo):
            lane.resolve(ticket, Failed(fn))
            return ticket
        self._tasks[ticket] = Task(ticket, lane.id, lane.kind, args)
        self._backlog[lane.kind].append(ticket)  # `collect` sends it, in a group with others
        return ticket

    def forget(self, lane_id: int) -> None:
        """Drop a lane: its waiting tasks, its outcomes to come, its function in the actors.
        The last lane of a run ends the run."""
        self._lanes.pop(lane_id, None)
        self._kept_lanes.discard(lane_id)
        if self._fns.pop(lane_id, None) is None or self.closed:
            return
        if not self._lanes:  # the run is over: the next one is told of its own spilling
            self._notices.new_run()
            self._fleet.end_run()
        for ticket, task in list(self._tasks.items()):
            if task.lane == lane_id and task.actor is None:
                del self._tasks[ticket]
        for handles in self._fleet.actors.values():
            for handle in handles:
                if lane_id in handle.lanes and not handle.dead:
                    handle.lanes.discard(lane_id)
                    handle.actor.forget.remote(lane_id)

    # -- the wait -------------------------------------------------------------------------
    def collect(self, timeout: float) -> None:
        """Route every finished call's outcomes to their lanes (waiting up to `timeout` for
        one), replace dead actors, and hand waiting tasks to actors with room."""
        if self.closed:
            return
        for kind in KINDS:
            self._send(kind)
        for watcher in self.watchers:
            watcher.dispatch()
        starting = self._fleet.starting()
        theirs = {ref: w for w in self.watchers for ref in w.refs()}
        if self._refs or starting or theirs:
            refs = [*self._refs, *starting, *theirs]
            ready, _ = self._ray.wait(refs, num_returns=1, timeout=timeout)
            if ready:
                ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
                self._take_back(ready, starting, theirs)
            for kind in KINDS:
                self._fleet.size(kind, self.waiting(kind))
                self._send(kind)
            self._notices.check_spill()

    def _take_back(
        self, ready: list[Any], starting: dict[Any, Handle], theirs: dict[Any, Watcher]
    ) -> None:
        """Hand what finished to whom it concerns: actors started, outcomes, watchers' calls."""
        for handle in [starting[ref] for ref in ready if ref in starting]:
            failure = self._fleet.started(handle)
            if failure is not None:
                self._bury(handle, failure)
        self._receive_all([ref for ref in ready if ref in self._refs])
        for watcher in self.watchers:
            watcher.receive([ref for ref in ready if theirs.get(ref) is watcher])

    def waiting(self, kind: Kind) -> int:
        """Tasks of `kind` waiting on the driver."""
        return sum(1 for ticket in self._backlog[kind] if ticket in self._tasks)

    # -- outcomes -------------------------------------------------------------------------
    def _receive_all(self, ready: list[Any]) -> None:
        if not ready:
            return
        start = time.perf_counter()
        try:
            groups = self._ray.get(ready)
        except Exception:  # some call failed as a whole (its actor died): one by one
            for ref in ready:
                self._receive_one(ref)
        else:
            for ref, packed in zip(ready, groups, strict=True):
                self._route(ref, self._outcomes(packed, len(self._refs[ref][1]), ref))
        self.timings.receiving += time.perf_counter() - start

    def _receive_one(self, ref: Any) -> None:
        entry = self._refs.get(ref)
        if entry is None or entry[0].dead:
            return
        try:
            packed = self._ray.get(ref)
        except self._ray.exceptions.RayActorError as exc:
            self._bury(entry[0], exc)
            return
        except Exception as exc:  # the results could not be read back
            self._route(ref, [Failed(ErrorInfo.from_exception(exc))] * len(entry[1]))
            return
        self._route(ref, self._outcomes(packed, len(entry[1]), ref))

    def _outcomes(self, packed: Any, count: int, ref: Any = None) -> list[Outcome]:
        """A call's outcomes, or `count` failures saying why they could not be read back; a
        kept lane's values stay where they are (`Kept`)."""
        try:
            outcomes: list[Outcome] = self._transfer.unpack(packed)
            self.timings.received += self._transfer.size(packed)
        except Exception as exc:
            return [Failed(ErrorInfo.from_exception(exc))] * count
        kept = self._kept.pop(ref, None)
        if kept is None:
            return outcomes
        return [self._as_kept(outcome, n, *kept) for n, outcome in enumerate(outcomes)]

    def _as_kept(self, outcome: Outcome, index: int, values: Any, node: str) -> Outcome:
        if not isinstance(outcome, Done):
            return outcome
        kept = Done(self._transfer.Kept(values, index, node))
        if outcome.metrics:
            object.__setattr__(kept, "metrics", outcome.metrics)
        return kept

    def _route(self, ref: Any, outcomes: list[Outcome]) -> None:
        handle, tickets = self._refs.pop(ref)
        handle.calls.remove((ref, tickets))
        handle.load -= len(tickets)
        handle.alone = False
        if not handle.load:
            handle.idle_since = time.monotonic()
        if tickets and tickets[0] in self._tasks:
            self._fleet.warm.add(self._tasks[tickets[0]].kind)
        for ticket, outcome in zip(tickets, outcomes, strict=True):
            self._resolve(ticket, outcome)
        self.timings.tasks += len(tickets)
        self.timings.calls += 1

    def _resolve(self, ticket: int, outcome: Outcome) -> None:
        task = self._tasks.pop(ticket, None)
        if task is None:
            return
        lane = self._lanes.get(task.lane)
        if lane is not None:
            lane.resolve(ticket, outcome)

    # -- deaths ---------------------------------------------------------------------------
    def _bury(self, handle: Handle, exc: BaseException) -> None:
        """An actor died. Calls whose outcomes arrived keep them. If one call was left, its task
        killed the actor: it fails (or runs again, `retries` times). If several were left,
        Ray cannot say which one ran (replies of finished calls may be lost with the actor):
        each runs again alone on an actor, so a task that kills its actor is found for sure."""
        fleet = self._fleet
        nodes = fleet.nodes
        fleet.end(handle)
        kind = fleet.kind_of(handle)
        innocent = handle.node is not None and nodes.lost(handle.node, exc)
        logger.warning("a Ray %s actor died; starting another", kind)
        left = self._orphans(handle)
        fleet.replace(handle)
        if not nodes.refresh() and nodes.struck:
            innocent = False  # no node is left to run them on: they fail, saying why
            exc = RuntimeError(f"no Ray node can run this pool's actors: {nodes.struck}")
        if innocent:  # lost with its node (or never started): not the tasks' fault
            self._backlog[kind].extendleft(reversed([task.ticket for task in left]))
            return
        if len(left) == 1:
            left[0].deaths += 1
        requeue = []
        for task in left:
            if task.deaths > self.retries:
                self._resolve(task.ticket, Failed(_died(kind, exc)))
            else:
                task.suspect = True
                requeue.append(task.ticket)
        self._backlog[kind].extendleft(reversed(requeue))

    def _orphans(self, handle: Handle) -> list[Task]:
        """The tasks a dead actor held whose outcomes did not arrive (those that did are
        resolved); its calls are forgotten."""
        left: list[Task] = []
        for ref, tickets in handle.calls:
            self._refs.pop(ref, None)
            outcomes = self._finished(ref, len(tickets))
            self._kept.pop(ref, None)
            for n, ticket in enumerate(tickets):
                task = self._tasks.get(ticket)
                if task is None:
                    continue
                task.actor = None
                if outcomes is not None:
                    self._resolve(ticket, outcomes[n])
                else:
                    left.append(task)
        handle.calls.clear()
        handle.load = 0
        return left

    def _finished(self, ref: Any, count: int) -> list[Outcome] | None:
        """The outcomes of a call of a dead actor, if it finished before the actor died."""
        try:
            packed = self._ray.get(ref, timeout=0)
        except Exception:
            return None
        return self._outcomes(packed, count, ref)

    def recycle_busy(self) -> int:
        """After a stop: replace the actors still running the stopped run's tasks (a task may
        never end), drop its waiting tasks, and keep every other actor as it is, warm (the
        server's next run then starts at once). Returns how many actors were replaced."""
        replaced = 0
        for kind in KINDS:
            for handle in list(self._fleet.actors[kind]):
                if handle.dead or not handle.load:
                    continue
                for ref, tickets in handle.calls:
                    self._refs.pop(ref, None)
                    self._kept.pop(ref, None)
                    for ticket in tickets:
                        self._tasks.pop(ticket, None)
                self._fleet.end(handle)
                self._fleet.replace(handle)
                replaced += 1
            for ticket in self._backlog[kind]:
                self._tasks.pop(ticket, None)
            self._backlog[kind].clear()
        return replaced

    # -- sending --------------------------------------------------------------------------
    def _send(self, kind: Kind) -> None:
        """Hand waiting tasks to the least busy actors, in groups of one lane's tasks: a backlog
        is split between the idle actors, so none waits while another has a queue; else it goes
        in full groups, to actors that have work queued already. A suspect task waits for an
        idle actor and runs alone on it."""
        backlog = self._backlog[kind]
        while backlog:
            free = [h for h in self._fleet.takers(kind) if not h.alone and h.load < PER_ACTOR]
            first = self._tasks.get(backlog[0])
            if first is None or first.lane not in self._fns:
                backlog.popleft()
                continue
            if not free:
                return
            handle = min(free, key=lambda h: h.load)
            if first.suspect:
                if handle.load:
                    return
                self._give(handle, [self._tasks[backlog.popleft()]])
                continue
            idle = sum(1 for h in free if not h.load)
            share = -(-len(backlog) // idle) if idle else len(backlog)
            size = min(GROUP, PER_ACTOR - handle.load, share)
            self._give(handle, self._take(backlog, first.lane, size))

    def _take(self, backlog: deque[int], lane: int, size: int) -> list[Task]:
        """Up to `size` tasks from the front of the backlog, all of `lane` and none suspect."""
        group: list[Task] = []
        while backlog and len(group) < size:
            task = self._tasks.get(backlog[0])
            if task is not None and (task.lane != lane or task.suspect):
                break
            backlog.popleft()
            if task is not None:
                group.append(task)
        return group

    def _give(self, handle: Handle, tasks: list[Task]) -> None:
        if not tasks:
            return
        start = time.perf_counter()
        lane = tasks[0].lane
        if lane not in handle.lanes:
            handle.lanes.add(lane)
            handle.actor.learn.remote(lane, self._fns[lane])
        packed, refs = self._transfer.pack_refs([task.args for task in tasks])
        if lane in self._kept_lanes:  # its values stay on the actor's node
            run = handle.actor.run_kept.options(num_returns=2)
            ref, values = run.remote(lane, packed, refs, len(tasks))
            self._kept[ref] = (values, handle.node.id if handle.node is not None else "")
        else:
            ref = handle.actor.run.remote(lane, packed, refs, len(tasks))
        tickets = tuple(task.ticket for task in tasks)
        for task in tasks:
            task.actor = handle
        handle.alone = tasks[0].suspect
        handle.calls.append((ref, tickets))
        handle.load += len(tasks)
        self._refs[ref] = (handle, tickets)
        self.timings.sending += time.perf_counter() - start

    # -- the pool's state -----------------------------------------------------------------
    def stats(self) -> PoolStats:
        """Tasks waiting on the driver and running (or queued) on actors, per kind."""

        def of(kind: Kind) -> KindStats:
            running = sum(h.load for h in self._fleet.group(kind))
            return KindStats(self.waiting(kind), running, len(self._fleet.ready(kind)))

        return PoolStats(self._fleet.workers, of("load"), of("dump"))

    def close(self) -> None:
        """No more tasks: those in flight are dropped, and the watchers closed."""
        self.closed = True
        self._tasks.clear()
        self._refs.clear()
        self._kept.clear()
        for watcher in list(self.watchers):
            watcher.close()


def _died(kind: str, exc: BaseException) -> ErrorInfo:
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    message = f"the Ray {kind} actor running this task died ({why}); a new actor took its place"
    return ErrorInfo(WORKER_DIED, message, f"{message}\n\n{exc}")


__all__ = ["GROUP", "PER_ACTOR", "Dispatch", "RayLane", "Task", "Timings", "Watcher"]
