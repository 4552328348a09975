"""The worker pool seam: where load_fn and dump_fn run, and how their outcomes come back.

A node opens a `Lane` for one function. Tasks go in with `submit`; outcomes come out of
`take_ready` in submission order. At most `capacity` tasks are in flight per lane: that is
the backpressure. `InlinePool` (zero workers) runs each task at once in this process; a
process pool implements the same protocol.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from graphbook.events import ErrorInfo, PoolStats

Kind = Literal["load", "dump"]
"""Load and dump tasks go to separate workers, so writing never waits behind loading."""


@dataclass(frozen=True)
class Done:
    value: Any


@dataclass(frozen=True)
class Failed:
    error: ErrorInfo


Outcome = Done | Failed


class RemoteError(Exception):
    """Something failed in another process or machine; `error` carries its own traceback."""

    def __init__(self, error: ErrorInfo) -> None:
        super().__init__(str(error))
        self.error = error


class Dispatcher(Protocol):
    """What an `OrderedLane` hands its tasks to: a pool's own scheduler."""

    def submit(self, lane: OrderedLane, args: tuple[Any, ...]) -> int:
        """Send one task; return its ticket (increasing within the lane)."""
        ...

    def collect(self, timeout: float) -> None:
        """Resolve on their lanes the outcomes that have arrived, waiting up to `timeout`."""
        ...

    def forget(self, lane_id: int) -> None:
        """The lane is closed: drop its function and anything still owed to it."""
        ...


class OrderedLane:
    """Tasks for one function; outcomes come back out of order and leave in order. Shared by
    the process pool and the Ray pool, which differ only in their `Dispatcher`."""

    def __init__(self, dispatcher: Dispatcher, id: int, kind: Kind, capacity: int) -> None:
        self.id = id
        self.kind = kind
        self.capacity = capacity
        self.closed = False
        self._dispatcher = dispatcher
        self._order: deque[int] = deque()
        self._outcomes: dict[int, Outcome] = {}

    def submit(self, *args: Any) -> None:
        if self.closed:
            raise RuntimeError(f"lane {self.id} is closed; open a new lane to submit tasks")
        self._order.append(self._dispatcher.submit(self, args))

    def take_ready(self) -> list[Outcome]:
        self._dispatcher.collect(0)
        ready = []
        while self._order and self._order[0] in self._outcomes:
            ready.append(self._outcomes.pop(self._order.popleft()))
        return ready

    @property
    def in_flight(self) -> int:
        return len(self._order)

    @property
    def has_ready(self) -> bool:
        """Whether the next outcome in order is here (after collecting what has arrived)."""
        self._dispatcher.collect(0)
        return bool(self._order) and self._order[0] in self._outcomes

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


class Lane(Protocol):
    """Tasks for one function of one node."""

    capacity: int

    def submit(self, *args: Any) -> None: ...

    def take_ready(self) -> list[Outcome]: ...

    @property
    def in_flight(self) -> int:
        """Tasks submitted and not yet taken back."""

    @property
    def has_ready(self) -> bool: ...

    def close(self) -> None: ...


class Pool(Protocol):
    """Opens lanes and lets the executor sleep until some outcome is ready."""

    workers: int

    def lane(self, fn: Callable[..., Any], capacity: int, kind: Kind = "load") -> Lane: ...

    def wait(self, timeout: float) -> None: ...

    def stats(self) -> PoolStats | None:
        """The workers' load; None for a pool without workers."""

    def close(self) -> None: ...


def call(fn: Callable[..., Any], args: tuple[Any, ...]) -> Outcome:
    """Run one task, turning an exception into a value that carries its traceback."""
    try:
        return Done(fn(*args))
    except Exception as exc:
        return Failed(ErrorInfo.from_exception(exc))


class InlineLane:
    def __init__(self, fn: Callable[..., Any], capacity: int) -> None:
        self.fn = fn
        self.capacity = capacity
        self._ready: deque[Outcome] = deque()

    def submit(self, *args: Any) -> None:
        self._ready.append(call(self.fn, args))

    def take_ready(self) -> list[Outcome]:
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

    def lane(self, fn: Callable[..., Any], capacity: int, kind: Kind = "load") -> InlineLane:
        return InlineLane(fn, capacity)

    def wait(self, timeout: float) -> None:
        """Nothing is ever pending elsewhere."""

    def stats(self) -> None:
        """No workers, no load."""

    def close(self) -> None:
        """Nothing to stop."""
