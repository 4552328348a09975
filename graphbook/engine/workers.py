"""The process pool's workers, the parent's side of each: a group per kind (started with its
first lane, topped up with tasks, a dead worker replaced), one worker's task queue, result pipe
and slot, and how workers are forked and stopped (NOTE [ Shutdown protocol ] in processes.py).
A worker's own side is worker.py.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import logging
import os
import queue
import secrets
import select
import selectors
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import multiprocess
from multiprocess.connection import wait as wait_for

from graphbook.engine import shm
from graphbook.engine.pool import (
    Kind,
)
from graphbook.engine.worker import HELD_SIGNALS, Message, Settings, work
from graphbook.events import ErrorInfo, KindStats

logger = logging.getLogger(__name__)

PREFETCH = 16
"""Tasks handed to one worker at a time. The parent hands tasks out only between its own work,
and a batch step's parent may be in a model's forward pass for a tenth of a second: a worker
needs a batch's share of tasks queued to stay busy meanwhile. A lane's capacity still bounds
the tasks in flight. A worker is topped up as soon as it has room, not in fours or eights:
measured (bench/README.md, worker pool), refilling in bunches and waking the parent only
every few results (a "bell" per worker) halved the parent's CPU per item, but on a
loaded machine the workers then got 0.5-0.9 of the CPU they got before, so it was taken out."""
SHUTDOWN_GRACE = 2.0
"""How long `close()` waits for workers to stop by themselves; see NOTE [ Shutdown protocol ]."""

GIVE_BACK_AT = 16
"""Segments given back that wait for a worker's next task before going back on their own."""


# NOTE [ A worker is on its own ]
#
# A forked worker starts as a copy of its parent, and must not act as one:
# - Signals. It inherits the parent's Python handlers and asyncio's signal wake-up socket, so a
#   SIGTERM meant for the worker would run the parent's handler in the worker, and write to the
#   socket the parent's event loop reads: the server took a worker's SIGTERM as its own and shut
#   down. The worker drops the wake-up fd, resets every Python handler to the default and
#   ignores SIGINT (Ctrl-C reaches the whole process group; the parent decides). SIGINT and
#   SIGTERM stay blocked from before fork until then, so none arrives in between.
# - Sockets. It would hold the server's listening socket and its clients' connections, keeping
#   the port bound after the server dies. Each inherited socket is replaced by /dev/null (dup2,
#   not close: a stale socket object closing its number later then closes nothing of ours).
# - Its parent's death. A worker busy in a task never reaches the between-task check above, so
#   on Linux the kernel sends it SIGKILL when its parent dies (PR_SET_PDEATHSIG); elsewhere a
#   watchdog thread checks `os.getppid()`. The signal follows the thread that forked, not the
#   process, so workers are forked by one thread that lives as long as the process (`_fork`).
#   What such workers leave in shared memory is swept by the next pool (`shm.sweep_orphans`).


@dataclass
class Task:
    lane: int
    kind: Kind
    args: shm.Packed
    worker: Worker | None = None


class Group:
    """The workers of one kind and the tasks waiting for them, started with the first lane."""

    def __init__(
        self,
        kind: Kind,
        size: int,
        context: Any,
        prefix: str,
        stop: Any,
        selector: Any,
        nice: int,
    ) -> None:
        self.kind = kind
        self.nice = nice
        self.size = size
        self.context = context
        self.prefix = prefix
        self.stop = stop
        self.selector = selector
        self.workers: list[Worker] = []
        self.backlog: deque[int] = deque()
        self._numbers = itertools.count()
        self._seed = secrets.randbits(32)  # not `random`: the parent's stream stays as it was

    def dispatch(self, tasks: dict[int, Task], fns: dict[int, bytes | ErrorInfo]) -> None:
        """Hand waiting tasks to the least busy workers: one message per worker for them all."""
        given: dict[Worker, list[Message]] = {}
        while self.backlog:
            worker = self._least_busy()
            if len(worker.assigned) >= PREFETCH:
                break
            ticket = self.backlog.popleft()
            task = tasks.get(ticket)
            if task is None:
                continue
            fn = fns.get(task.lane)
            if isinstance(fn, bytes):
                given.setdefault(worker, []).extend(worker.assign(ticket, task, fn))
            else:  # its lane was closed while a dead worker held the task
                del tasks[ticket]
                shm.unlink(task.args.segments)
        for worker in self.workers:
            if worker.given_back and (
                worker in given or len(worker.given_back) >= GIVE_BACK_AT or not worker.assigned
            ):
                given.setdefault(worker, []).insert(0, worker.hand_back())
        for worker, messages in given.items():
            worker.tasks.put(messages)

    def forget(self, lane_id: int) -> None:
        for worker in self.workers:
            worker.forget(lane_id)

    def replace(self, worker: Worker) -> None:
        worker.release()
        shm.sweep(f"{self.prefix}{worker.pid}_")
        self.workers[self.workers.index(worker)] = self._start()

    def stats(self, tasks: dict[int, Task]) -> KindStats:
        running = sum(len(w.assigned) for w in self.workers)
        alive = sum(1 for w in self.workers if not w.dead)
        return KindStats(sum(1 for t in self.backlog if t in tasks), running, alive)

    def start(self) -> None:
        """Start the workers, if they are not yet."""
        if not self.workers:
            self.workers = [self._start() for _ in range(self.size)]

    def _least_busy(self) -> Worker:
        self.start()
        return min(self.workers, key=lambda w: len(w.assigned))

    def _start(self) -> Worker:
        number = next(self._numbers)
        return Worker(self, number, (self._seed + number) % 2**32)


class Worker:
    """One worker process, its task queue, its result pipe and the slot where it writes the
    ticket it is running (read after it dies, to know which task to report)."""

    def __init__(self, group: Group, number: int, seed: int) -> None:
        context = group.context
        self.kind = group.kind
        self.tasks = context.Queue()
        self.slot = context.RawValue("q", -1)
        reader, writer = context.Pipe(duplex=False)
        settings = Settings(os.getpid(), group.prefix, seed, group.nice)
        self.process = context.Process(
            target=work,
            args=(self.tasks, writer, self.slot, group.stop, settings),
            name=f"graphbook-{group.kind}-{number}",
            daemon=True,
        )
        _fork(self.process)
        writer.close()  # Only the worker may hold the write end, so its death reads as EOF.
        self.reader = reader
        self.pid: int = self.process.pid
        self.assigned: list[int] = []
        self.lanes: set[int] = set()
        self.given_back: list[str] = []
        """Its lent segments that the parent no longer uses, to tell it with its next tasks."""
        self.selector = group.selector
        for waitable in self.waitables:
            self.selector.register(waitable, selectors.EVENT_READ, self)
        self._pending = _poller(reader)

    @property
    def waitables(self) -> tuple[Any, int]:
        return self.reader, self.process.sentinel

    @property
    def dead(self) -> bool:
        return self.process.exitcode is not None

    def assign(self, ticket: int, task: Task, fn: bytes) -> list[Message]:
        """Take the task on; returns the messages that give it to the process."""
        messages: list[Message] = []
        if task.lane not in self.lanes:
            self.lanes.add(task.lane)
            messages.append(("fn", task.lane, 0, fn))
        messages.append(("task", task.lane, ticket, task.args.data))
        self.assigned.append(ticket)
        task.worker = self
        return messages

    def hand_back(self) -> Message:
        names, self.given_back = self.given_back, []
        return ("back", 0, 0, "\0".join(names).encode())

    def forget(self, lane_id: int) -> None:
        if lane_id in self.lanes and not self.dead:
            self.lanes.discard(lane_id)
            back = [self.hand_back()] if self.given_back else []
            self.tasks.put([*back, ("forget", lane_id, 0, b"")])

    def receive(self) -> list[bytes]:
        """Every whole message in the pipe, without blocking."""
        messages = []
        try:
            while self._pending():
                messages.append(self.reader.recv_bytes())
        except (EOFError, OSError):
            pass
        return messages

    def release(self) -> None:
        for waitable in self.waitables:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(waitable)
        self.reader.close()
        self.tasks.cancel_join_thread()
        self.tasks.close()


def stop_all(workers: list[Worker]) -> None:
    """Steps 2 to 5 of NOTE [ Shutdown protocol ]."""
    for worker in workers:
        if not worker.dead:
            worker.tasks.put(None)
    deadline = time.monotonic() + SHUTDOWN_GRACE
    alive = [w for w in workers if not w.dead]
    while alive and time.monotonic() < deadline:
        for worker in alive:
            worker.receive()
        wait_for([o for w in alive for o in w.waitables], min(0.1, SHUTDOWN_GRACE))
        alive = [w for w in alive if not w.dead]
    for end in ("terminate", "kill"):
        for worker in alive:
            getattr(worker.process, end)()
        for worker in alive:
            worker.process.join(1.0)
        alive = [w for w in alive if not w.dead]
    for worker in alive:
        logger.error("worker %d did not stop, even when killed", worker.pid)
    for worker in workers:
        worker.release()


# -- helpers --------------------------------------------------------------------------------
def _fork(process: Any) -> None:
    """Start `process` from the forking thread, with SIGINT and SIGTERM blocked until the worker
    has reset its handlers; see NOTE [ A worker is on its own ]."""
    if process._start_method != "fork" or threading.current_thread() is threading.main_thread():
        _start_blocked(process)
    else:
        _Forker.get().start(process)


def _start_blocked(process: Any) -> None:
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _Forker:
    """One thread, alive as long as the process, that forks workers for other threads: the
    kernel's parent-death signal fires when the thread that forked ends, and a run's thread
    ends long before the pool it started workers for."""

    _instance: _Forker | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._requests: queue.SimpleQueue[tuple[Any, concurrent.futures.Future[None]]]
        self._requests = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="graphbook-forker", daemon=True).start()

    @classmethod
    def get(cls) -> _Forker:
        """This process's forker (a forked child needs its own: threads do not survive fork)."""
        with cls._lock:
            if cls._instance is None or cls._instance.pid != os.getpid():
                cls._instance = cls()
            return cls._instance

    def start(self, process: Any) -> None:
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._requests.put((process, done))
        done.result()

    def _serve(self) -> None:
        while True:
            process, done = self._requests.get()
            try:
                _start_blocked(process)
            except BaseException as exc:
                done.set_exception(exc)
            else:
                done.set_result(None)


def selector() -> selectors.BaseSelector:
    """poll(2) where there is one: it keeps no state in the kernel, so a pipe that a forked
    worker still holds open cannot stay registered after the parent closes its end."""
    if hasattr(selectors, "PollSelector"):
        return selectors.PollSelector()
    return selectors.SelectSelector()


def _poller(reader: Any) -> Callable[[], bool]:
    """Whether `reader` has something to read, without blocking: one poll(2) call where there is
    one (`Connection.poll` builds a selector each time)."""
    if not hasattr(select, "poll"):
        return lambda: bool(reader.poll())
    poller = select.poll()
    poller.register(reader.fileno(), select.POLLIN)
    return lambda: bool(poller.poll(0))


def context() -> Any:
    """Fork on Linux, as DataLoader does: fast, and workers see what the parent imported."""
    return multiprocess.get_context("fork" if sys.platform.startswith("linux") else "spawn")
