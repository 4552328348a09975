"""The worker pool seam: where load_fn and dump_fn run, and how their outcomes come back.

A node opens a `Lane` for one function. Each task goes in with `submit(context, args)`: the
arguments travel to a worker, the context stays here, and the two meet again as `(context,
outcome)` from `take_ready`, in submission order. At most `capacity` tasks are in flight per
lane: that is the backpressure. A lane only keeps books; the pool's `wait` is the one call that
does I/O (hands queued tasks to workers, reads what came back, routes it to its lane).
`InlinePool` (zero workers) runs each task at once in this process; the process and Ray pools
implement the same protocol over `OrderedLane`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from graphbook.events import ErrorInfo, PoolStats
from graphbook.logs import Reported, take_reported

Kind = Literal["load", "dump"]
"""Load and dump tasks go to separate workers, so writing never waits behind loading."""
C = TypeVar("C")
"""What a task's submitter keeps with it (the item and the dict it came from, say)."""


NoticeLevel = Literal["info", "warning"]


@dataclass(frozen=True)
class Notice:
    """A line the pool has for the run's log: information (where dump functions run, warm
    actors attached to) or a warning (Ray's object store spilling, a node struck off)."""

    level: NoticeLevel
    message: str


WORKER_DIED = "WorkerDied"
"""The error type of a task whose worker process (or Ray actor) died running it."""


@dataclass(frozen=True)
class Done:
    value: Any
    metrics: ClassVar[tuple[Reported, ...]] = ()
    """What the task reported with `log_metric`: set (see `reporting`) only on the outcomes of
    tasks that did, so the others travel as they did before."""


@dataclass(frozen=True)
class Failed:
    error: ErrorInfo
    metrics: ClassVar[tuple[Reported, ...]] = ()


Outcome = Done | Failed


def reporting(outcome: Outcome) -> Outcome:
    """`outcome` carrying back to the run the metrics its task reported in a worker process
    (logs.py: `collect_in_this_process`), if there are any."""
    metrics = take_reported()
    if metrics:
        object.__setattr__(outcome, "metrics", metrics)
    return outcome


def unsendable(what: str, exc: Exception, problem: str = "could not be pickled") -> ErrorInfo:
    """The error of a value that could not cross to another process, saying which."""
    error = ErrorInfo.from_exception(exc)
    return ErrorInfo(error.type, f"{what} {problem}: {error.message}", error.traceback)


class RemoteError(Exception):
    """Something failed in another process or machine; `error` carries its own traceback."""

    def __init__(self, error: ErrorInfo) -> None:
        super().__init__(str(error))
        self.error = error


class Dispatcher(Protocol):
    """What an `OrderedLane` hands its tasks to: a pool's own scheduler."""

    def submit(self, lane: OrderedLane[Any], args: tuple[Any, ...]) -> int:
        """Queue one task (no I/O needed); return its ticket (increasing within the lane)."""
        ...

    def forget(self, lane_id: int) -> None:
        """The lane is closed: drop its function and anything still owed to it."""
        ...


class OrderedLane(Generic[C]):
    """Tasks for one function; outcomes come back out of order (`resolve`, called by the
    pool's `wait`) and leave in order with their contexts. Shared by the process pool and the
    Ray pool, which differ only in their `Dispatcher`."""

    def __init__(self, dispatcher: Dispatcher, id: int, kind: Kind, capacity: int) -> None:
        self.id = id
        self.kind = kind
        self.capacity = capacity
        self.closed = False
        self._dispatcher = dispatcher
        self._order: deque[tuple[int, C]] = deque()
        self._outcomes: dict[int, Outcome] = {}

    def submit(self, context: C, args: tuple[Any, ...]) -> None:
        if self.closed:
            raise RuntimeError(f"lane {self.id} is closed; open a new lane to submit tasks")
        self._order.append((self._dispatcher.submit(self, args), context))

    def take_ready(self) -> list[tuple[C, Outcome]]:
        ready = []
        while self._order and self._order[0][0] in self._outcomes:
            ticket, context = self._order.popleft()
            ready.append((context, self._outcomes.pop(ticket)))
        return ready

    @property
    def in_flight(self) -> int:
        return len(self._order)

    @property
    def has_ready(self) -> bool:
        return bool(self._order) and self._order[0][0] in self._outcomes

    def close(self) -> None:
        """Drop the tasks not yet taken; the workers forget the function."""
        if not self.closed:
            self.closed = True
            self._order.clear()
            self._outcomes.clear()
            self._dispatcher.forget(self.id)

    def resolve(self, ticket: int, outcome: Outcome) -> None:
        if not self.closed:
            self._outcomes[ticket] = outcome


class Lane(Protocol[C]):
    """Tasks for one function of one node. Nothing here does I/O: what has come back is what
    the pool's last `wait` routed to the lane."""

    capacity: int

    def submit(self, context: C, args: tuple[Any, ...]) -> None:
        """Queue `fn(*args)`; `context` comes back beside its outcome."""

    def take_ready(self) -> list[tuple[C, Outcome]]:
        """The outcomes that came back, with their contexts, up to the first still missing."""

    @property
    def in_flight(self) -> int:
        """Tasks submitted and not yet taken back."""

    @property
    def has_ready(self) -> bool:
        """Whether `take_ready` would return something now."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class BatchResult:
    """What a batch step's `on_item_batch` did on a stage actor (graphbook/engine/ray/stage.py),
    the outcome of one batch: the dicts it changed are updated in place already."""

    dumps: list[Any]
    """The arguments of each dump task it returned, to submit as they are (they may stay in
    Ray's object store until a dump actor reads them)."""
    logs: list[tuple[str, Any, Any]]
    """What it logged: (node id, message, level), in order."""
    lost: str = ""
    """Why the batch did not run: a loaded value was lost with its node (load them again)."""


class Stage(Protocol):
    """Where a batch step's `on_item_batch` runs when not here: lanes of batches."""

    notice: str
    """The line the node's log shows once: where its `on_item_batch` runs."""

    @property
    def batches(self) -> Lane[Any]:
        """Batches: args (loaded values, items, the dict of each item); outcome a
        `BatchResult`."""

    def loads(self, fn: Callable[..., Any], capacity: int) -> Lane[Any]:
        """The lane for the step's `load_fn`, its values kept where the stage reads them."""


class Pool(Protocol):
    """Opens lanes, and moves tasks and outcomes between them and the workers in `wait`."""

    @property
    def workers(self) -> int:
        """The workers of each kind (at most, now: a Ray pool grows and shrinks)."""

    def lane(self, fn: Callable[..., Any], capacity: int, kind: Kind = "load") -> Lane[Any]: ...

    def wait(self, timeout: float) -> None:
        """Hand queued tasks to workers, wait up to `timeout` seconds (0: not at all) for some
        outcome to arrive, and route every outcome that has arrived to its lane."""

    def stats(self) -> PoolStats | None:
        """The workers' load: tasks queued here and handed to workers, per kind; None for a
        pool without workers."""

    def notices(self) -> list[Notice]:
        """Lines for the run's log that arose since the last call, each said once, at its
        level: information (where dump functions run) or a warning (Ray's object store
        spilling to disk)."""

    @property
    def ships(self) -> bool:
        """Whether its work may run on other machines, where this process's folder may not
        exist: the executor then makes path parameters absolute first."""

    def place_resource(self, node: Any, params: dict[str, Any]) -> Any:
        """A resource node's value built where the pool puts it (a model on a Ray actor with a
        GPU); None: the executor builds it here."""

    def stage(self, node_id: str, step: Any, capacity: int) -> Stage | None:
        """Where a batch step's `on_item_batch` runs when not here (Ray stage actors); None:
        here."""

    def close(self) -> None: ...


def call(fn: Callable[..., Any], args: tuple[Any, ...]) -> Outcome:
    """Run one task, turning an exception into a value that carries its traceback; the metrics
    it reports come back with it."""
    try:
        outcome: Outcome = Done(fn(*args))
    except Exception as exc:
        outcome = Failed(ErrorInfo.from_exception(exc))
    return reporting(outcome)


class InlineLane(Generic[C]):
    def __init__(self, fn: Callable[..., Any], capacity: int) -> None:
        self.fn = fn
        self.capacity = capacity
        self._ready: deque[tuple[C, Outcome]] = deque()

    def submit(self, context: C, args: tuple[Any, ...]) -> None:
        self._ready.append((context, call(self.fn, args)))

    def take_ready(self) -> list[tuple[C, Outcome]]:
        ready = list(self._ready)
        self._ready.clear()
        return ready

    @property
    def in_flight(self) -> int:
        return len(self._ready)

    @property
    def has_ready(self) -> bool:
        return bool(self._ready)

    def close(self) -> None:
        self._ready.clear()


class InlinePool:
    """Zero workers: every task runs in the calling process, immediately, with the same API."""

    workers = 0

    def lane(self, fn: Callable[..., Any], capacity: int, kind: Kind = "load") -> InlineLane[Any]:
        return InlineLane(fn, capacity)

    def wait(self, timeout: float) -> None:
        """Nothing is ever pending elsewhere."""

    def stats(self) -> None:
        """No workers, no load."""

    def notices(self) -> list[Notice]:
        return []

    @property
    def ships(self) -> bool:
        return False

    def place_resource(self, node: Any, params: dict[str, Any]) -> None:
        """Resources are built in the run's process."""

    def stage(self, node_id: str, step: Any, capacity: int) -> None:
        """`on_item_batch` runs in the run's process."""

    def close(self) -> None:
        """Nothing to stop."""
