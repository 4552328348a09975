"""The process pool: load and dump functions run in worker processes, as DataLoader workers do.

Each worker has its own task queue and its own result pipe, as in PyTorch's DataLoader (one
index queue per worker): a worker killed with SIGKILL then holds no lock that others need and
leaves no half-written message where others write. `submit` only queues a task here; `wait()`
hands what is queued to the workers, one message per worker for all of them, then sleeps on
every result pipe and every worker's process sentinel at once (one poll set, kept), so a death
is seen as soon as it happens. The pool hands each worker at most `PREFETCH` tasks; the rest
wait here, per kind, and each kind has its own workers, so dump tasks never queue behind load
tasks. A function is pickled once per lane and sent once to each worker that runs it. Arrays
and tensors travel through shared memory (`graphbook.engine.shm`). A worker writes the ticket
it is about to run in a shared slot; when it dies, that task is reported failed and its other
tasks go to the other workers.
"""

from __future__ import annotations

import itertools
import logging
import os
import signal
import threading
import uuid
import weakref
from collections.abc import Callable
from typing import Any

from graphbook.engine import shm
from graphbook.engine.pool import (
    WORKER_DIED,
    Failed,
    Kind,
    Notice,
    OrderedLane,
    Outcome,
    unsendable,
)
from graphbook.engine.worker import HEADER
from graphbook.engine.workers import (
    Group,
    Task,
    Worker,
    context,
    selector,
    stop_all,
)
from graphbook.errors import GraphbookError
from graphbook.events import ErrorInfo, PoolStats

logger = logging.getLogger(__name__)

KINDS: tuple[Kind, ...] = ("load", "dump")
WORKER_NICE = 10
"""How much lower a worker's scheduling priority is than its parent's (`os.nice`); see NOTE
[ Workers yield to the model ]. GRAPHBOOK_WORKER_NICE sets it (0: the parent's priority)."""
NICE_ENV = "GRAPHBOOK_WORKER_NICE"

_live_prefixes: set[str] = set()
"""The segment prefixes of this process's open pools, which no orphan sweep may touch."""
_live_lock = threading.RLock()  # reentrant: a pool collected during a sweep closes itself


def sweep_orphans() -> int:
    """Unlink what killed pools and workers left in shared memory, sparing this process's open
    pools; returns how many segments there were."""
    with _live_lock:
        return shm.sweep_orphans(keep=_live_prefixes)


def worker_nice() -> int:
    """How much lower the workers' priority is: GRAPHBOOK_WORKER_NICE, else WORKER_NICE."""
    given = os.environ.get(NICE_ENV, "").strip()
    if not given:
        return WORKER_NICE
    if not given.isdigit() or int(given) > 19:
        raise GraphbookError(
            f"{NICE_ENV} is how much lower the worker processes' priority is than the run's, a "
            f"whole number from 0 (the same) to 19, got {given!r}; unset it for {WORKER_NICE}"
        )
    return int(given)


# NOTE [ Shutdown protocol ]
#
# `ProcessPool.close()`, also run by a finalizer when the pool is collected or Python exits:
# 1. Set the shared stop flag: a worker checks it before each task, and leaves rather than run
#    the tasks still queued for it.
# 2. Put a poison pill (None) on every worker's task queue, to wake those blocked in `get`.
# 3. Join the workers for up to SHUTDOWN_GRACE seconds, meanwhile reading and dropping their
#    results, so that a worker blocked writing to a full pipe can finish and see the pill.
# 4. Terminate (SIGTERM) the workers still alive, then kill (SIGKILL) those that outlive that.
# 5. Close the pipes; cancel the task queues' feeder threads rather than join them (a dead
#    worker's queue may never be read), then close the queues.
# 6. Unlink every shared memory segment named with this pool's prefix: results dropped in step
#    3, and segments of workers that died before their handle was read.
# A worker whose parent dies sees it within WATCHDOG_INTERVAL (its `get` times out and it checks
# `os.getppid()`), unlinks what it and the parent left in shared memory, and leaves.

# NOTE [ Workers yield to the model ]
#
# A batch step's model runs in the parent, on one thread per core (graphbook/engine/slices.py),
# while the workers decode the next batches. At the same priority, a worker that takes a core
# in the middle of a forward pass delays one slice: the others finish, and their cores wait for
# it. Workers run at a lower priority (WORKER_NICE): the slices keep the cores while they run,
# and the workers decode in every gap they leave (between batches, while the parent collects,
# while a slice waits), which is all they need, since they work ahead of the model by up to two
# batches. When the model waits for them, they have the cores to themselves. Measured on 2 cores
# (bench/README.md): mobilenet_v3_small's plain pipeline 1.10x as fast, resnet18's
# the same. On a machine busy with other programs' work the workers, not the model, give way.

# NOTE [ Workers start with their lane ]
#
# A forked worker shares its parent's pages until either writes to one; then each has its own
# copy. A batch step's dump workers used to start with its first dump task, after the model's
# first forward pass: the heap the parent had just filled with activations, and went on
# reusing, became theirs too, page by page (on 2 dump workers and mobilenet_v3_small, the
# peak memory of a run grew by 5 MB per image of batch size; bench/memory.py). Workers of a kind
# start when the first lane of that kind opens, when the graph is built, before any step runs.


class ProcessPool:
    """`workers` processes for load functions and as many for dump functions, each group
    started when its first lane opens and kept until `close()`; they run at a lower priority
    than the parent (WORKER_NICE)."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"a process pool needs 1 worker or more, got {workers}")
        self.workers = workers
        self._scheduler = _Scheduler(workers, context())
        self._finalizer = weakref.finalize(self, self._scheduler.shutdown)

    def lane(self, fn: Callable[..., Any], capacity: int, kind: Kind = "load") -> ProcessLane:
        """A lane for `fn`, run by the workers of `kind` (dump work never waits behind load)."""
        if kind not in KINDS:
            raise ValueError(f"a lane's kind is one of {KINDS}, got {kind!r}")
        return self._scheduler.open_lane(fn, capacity, kind)

    def wait(self, timeout: float) -> None:
        """Hand queued tasks to workers, block until some outcome arrives (or `timeout`
        passes; not at all when nothing is out), then route every outcome that has arrived to
        its lane."""
        self._scheduler.collect(timeout)

    def stats(self) -> PoolStats:
        return self._scheduler.stats()

    def notices(self) -> list[Notice]:
        return []

    @property
    def ships(self) -> bool:
        """Its workers are on this machine, in this folder."""
        return False

    def place_resource(self, node: Any, params: dict[str, Any]) -> None:
        """Resources are built in the run's process."""

    def stage(self, node_id: str, step: Any, capacity: int) -> None:
        """`on_item_batch` runs in the run's process, fed by the workers' shared memory."""

    def close(self) -> None:
        """Stop the workers and free what they hold; see NOTE [ Shutdown protocol ]."""
        self._finalizer()

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


ProcessLane = OrderedLane[Any]


class _Scheduler:
    """The pool's state: lanes, tasks and workers. Lanes hold it; it holds lanes weakly, so a
    lane nobody holds is forgotten, and the pool's finalizer holds it but not the pool."""

    def __init__(self, workers: int, context: Any) -> None:
        nice = worker_nice()
        self.prefix = f"{shm.NAME_PREFIX}{uuid.uuid4().hex[:8]}_"
        with _live_lock:
            shm.sweep_orphans(keep=_live_prefixes)
            _live_prefixes.add(self.prefix)
        shm.open_returns(self.prefix)
        self.forks = context.get_start_method() == "fork"
        self.stop = context.RawValue("b", 0)
        self.selector = selector()
        """Every worker's result pipe and sentinel, registered while the worker lives."""
        self.groups = {
            kind: Group(kind, workers, context, self.prefix, self.stop, self.selector, nice)
            for kind in KINDS
        }
        self.lanes: weakref.WeakValueDictionary[int, ProcessLane] = weakref.WeakValueDictionary()
        self.fns: dict[int, bytes | ErrorInfo] = {}
        self.tasks: dict[int, Task] = {}
        self.collected: list[int] = []
        """Lanes garbage-collected without `close()`: appended by finalizers, forgotten later."""
        self.closed = False
        self._tickets = itertools.count()
        self._lane_ids = itertools.count()

    # -- lanes and tasks -------------------------------------------------------------------
    def open_lane(self, fn: Callable[..., Any], capacity: int, kind: Kind) -> ProcessLane:
        self._check_open()
        lane = ProcessLane(self, next(self._lane_ids), kind, capacity)
        self.groups[kind].start()  # see NOTE [ Workers start with their lane ]
        self.lanes[lane.id] = lane
        self.fns[lane.id] = _pickle_fn(fn, self.forks)
        weakref.finalize(lane, self.collected.append, lane.id)
        return lane

    def submit(self, lane: ProcessLane, args: tuple[Any, ...]) -> int:
        """Queue a task (the next `collect` hands it to a worker) and return its ticket; a task
        that cannot be sent fails at once."""
        self._check_open()
        ticket = next(self._tickets)
        fn = self.fns[lane.id]
        if isinstance(fn, ErrorInfo):
            lane.resolve(ticket, Failed(fn))
            return ticket
        try:
            packed = shm.dumps(args, self.prefix)
        except Exception as exc:
            lane.resolve(ticket, Failed(unsendable("the task's arguments", exc)))
            return ticket
        self.tasks[ticket] = Task(lane.id, lane.kind, packed)
        self.groups[lane.kind].backlog.append(ticket)
        return ticket

    def forget(self, lane_id: int) -> None:
        """Drop a lane: its waiting tasks, its outcomes to come, its function in the workers."""
        self.lanes.pop(lane_id, None)
        if self.fns.pop(lane_id, None) is None or self.closed:
            return
        for ticket, task in list(self.tasks.items()):
            if task.lane == lane_id and task.worker is None:
                del self.tasks[ticket]
                shm.unlink(task.args.segments)
        for group in self.groups.values():
            group.forget(lane_id)

    # -- outcomes ---------------------------------------------------------------------------
    def collect(self, timeout: float) -> None:
        """Hand waiting tasks to workers with room, wait up to `timeout` for any worker to
        answer or die (not at all if no task is out), handle all that did, and hand out
        again."""
        if self.closed:
            return
        while self.collected:
            self.forget(self.collected.pop())
        self._hand_back()
        self._dispatch()
        if not self.tasks:
            return
        ready = {key.fd: key.data for key, _ in self.selector.select(timeout)}
        for worker in set(ready.values()):
            self._route(worker.receive())
            if worker.process.sentinel in ready and worker.dead:
                self._bury(worker)
        if ready:
            self._dispatch()

    def _dispatch(self) -> None:
        for group in self.groups.values():
            group.dispatch(self.tasks, self.fns)

    def _hand_back(self) -> None:
        """Note the lent segments given back since the last call on their workers (`dispatch`
        sends them with the workers' next tasks); a gone worker's are unlinked."""
        names = shm.given_back(self.prefix)
        if not names:
            return
        workers = {w.pid: w for group in self.groups.values() for w in group.workers}
        for name in names:
            worker = workers.get(shm.creator(name))
            if worker is None or worker.dead:
                shm.unlink([name])
            else:
                worker.given_back.append(name)

    def _route(self, messages: list[bytes]) -> None:
        for message in messages:
            lane_id, ticket = HEADER.unpack_from(message)
            try:
                outcome = shm.loads(memoryview(message)[HEADER.size :])
            except Exception as exc:
                outcome = Failed(unsendable("the task's result", exc))
            self._resolve(lane_id, ticket, outcome)

    def _resolve(self, lane_id: int, ticket: int, outcome: Outcome) -> None:
        task = self.tasks.pop(ticket, None)
        if task is not None and task.worker is not None:
            task.worker.assigned.remove(ticket)
        lane = self.lanes.get(lane_id)
        if lane is not None:
            lane.resolve(ticket, outcome)

    def _bury(self, worker: Worker) -> None:
        """A worker died: fail the task it was running, give its other tasks to others."""
        self._route(worker.receive())
        code = worker.process.exitcode
        logger.warning(
            "%s worker %d died (%s); starting another",
            worker.kind,
            worker.pid,
            _describe_exit(code),
        )
        requeue = []
        for ticket in list(worker.assigned):
            task = self.tasks.get(ticket)
            if task is None:
                continue
            if ticket == worker.slot.value:
                self._resolve(task.lane, ticket, Failed(_died(worker.pid, code)))
                shm.unlink(task.args.segments)
            else:
                task.worker = None
                requeue.append(ticket)
        worker.assigned.clear()
        group = self.groups[worker.kind]
        group.backlog.extendleft(reversed(requeue))
        group.replace(worker)

    # -- the rest ---------------------------------------------------------------------------
    def stats(self) -> PoolStats:
        load, dump = (self.groups[kind].stats(self.tasks) for kind in KINDS)
        return PoolStats(self.groups["load"].size, load, dump)

    def shutdown(self) -> None:
        """See NOTE [ Shutdown protocol ]."""
        self.closed = True
        workers = [w for group in self.groups.values() for w in group.workers]
        for group in self.groups.values():
            group.workers = []
        self.stop.value = 1
        stop_all(workers)
        self.tasks.clear()
        shm.close_returns(self.prefix)
        shm.sweep(self.prefix)
        with _live_lock:
            _live_prefixes.discard(self.prefix)

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("the process pool is closed; make a new one")


def _pickle_fn(fn: Callable[..., Any], forks: bool) -> bytes | ErrorInfo:
    try:
        return shm.dumps(fn, recurse=not forks).data
    except Exception as exc:
        return unsendable(f"function {getattr(fn, '__qualname__', fn)!r}", exc)


def _died(pid: int, code: int | None) -> ErrorInfo:
    message = (
        f"the worker process ({pid}) running this task died ({_describe_exit(code)}); "
        "a new worker took its place"
    )
    return ErrorInfo(WORKER_DIED, message, message)


def _describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
