"""A worker process of the process pool (processes.py): its life from fork to the pill, as
PyTorch keeps its DataLoader's worker loop in `_utils/worker.py`. It drops what it inherited
(NOTE [ A worker is on its own ] in processes.py), runs the tasks its queue brings with the
functions sent once per lane, and writes each outcome to its result pipe (arrays and tensors
through shared memory)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import random
import signal
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphbook.engine import shm
from graphbook.engine.pool import Failed, Outcome, call, unsendable
from graphbook.events import ErrorInfo
from graphbook.logs import collect_in_this_process

WATCHDOG_INTERVAL = 1.0
"""How long an idle worker blocks on its queue before checking that its parent lives."""
ORPHAN_CHECK_INTERVAL = 0.5
"""How often a worker's watchdog thread checks that its parent lives, where the kernel cannot
end the worker with its parent (PR_SET_PDEATHSIG is Linux only)."""
_PR_SET_PDEATHSIG = 1
HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}
"""Blocked from fork until the worker has dropped the handlers it inherited."""

HEADER = struct.Struct("<qq")
"""A result message starts with its lane id and ticket; the pickled outcome follows."""
Message = tuple[str, int, int, bytes]
"""To a worker: ("fn", lane, 0, pickled fn), ("forget", lane, 0, b""), ("task", lane, ticket,
pickled args), ("back", 0, 0, names of its lent segments given back, NUL-separated). A worker's
queue carries lists of them (all a `wait` hands it at once); None stops it."""


@dataclass(frozen=True)
class Settings:
    parent: int
    prefix: str
    seed: int
    nice: int


def work(tasks: Any, results: Any, slot: Any, stop: Any, settings: Settings) -> None:
    """A worker's life: take messages until the pill, the stop flag or the parent's death."""
    _detach(settings.parent)
    _lower_priority(settings.nice)
    _prepare(settings.seed)
    _serve(tasks, results, slot, stop, settings)
    if os.getppid() != settings.parent:
        # Nobody will read what the parent and this worker left in shared memory.
        shm.sweep(f"{settings.prefix}{settings.parent}_")
        shm.sweep(f"{settings.prefix}{os.getpid()}_")


def _serve(tasks: Any, results: Any, slot: Any, stop: Any, settings: Settings) -> None:
    fns: dict[int, Callable[..., Any] | ErrorInfo] = {}
    shm.lend_from_here()
    collect_in_this_process()  # the metrics a task reports go back with its outcome
    while not stop.value:
        messages = _receive(tasks, settings.parent)
        if messages is None:
            return
        for tag, lane, ticket, data in messages:
            if tag == "fn":
                fns[lane] = _unpickle_fn(data)
            elif tag == "forget":
                fns.pop(lane, None)
                if not fns:  # nothing to run: no result will need the spare segments
                    shm.drop_spare()
            elif tag == "back":
                shm.taken_back(data.decode().split("\0"), keep=bool(fns))
            elif stop.value:
                return
            else:
                slot.value = ticket
                outcome = _run(fns.get(lane), data)
                if not _send(results, lane, ticket, outcome, settings.prefix):
                    return


def _detach(parent: int) -> None:
    """See NOTE [ A worker is on its own ]."""
    with contextlib.suppress(ValueError):  # not the main thread: a spawned worker has no fd
        signal.set_wakeup_fd(-1)
    for signum in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError):
            if callable(signal.getsignal(signum)):
                signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)
    _die_with(parent)
    _drop_sockets()


def _die_with(parent: int) -> None:
    """End this process when `parent` ends, whatever it is doing."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the kernel knew to tell us
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="watchdog", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK_INTERVAL)
    os._exit(1)


def _drop_sockets() -> None:
    """Let go of every socket inherited from the parent (its listening socket among them)."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: workers are spawned there, and inherit no sockets
        return
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in fds:
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _prepare(seed: int) -> None:
    """Give each worker its own random streams, as DataLoader does, since a forked worker would
    otherwise repeat its parent's; one thread for torch."""
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
        torch.set_num_threads(1)


def _lower_priority(nice: int) -> None:
    """See NOTE [ Workers yield to the model ]."""
    if nice > 0 and hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(nice)


def _receive(tasks: Any, parent: int) -> list[Message] | None:
    while True:
        try:
            messages: list[Message] | None = tasks.get(timeout=WATCHDOG_INTERVAL)
            return messages
        except queue.Empty:
            if os.getppid() != parent:
                return None


def _run(fn: Callable[..., Any] | ErrorInfo | None, data: bytes) -> Outcome:
    if isinstance(fn, ErrorInfo):
        return Failed(fn)
    if fn is None:
        return Failed(ErrorInfo("LookupError", "the worker has no function for this lane", ""))
    try:
        args = shm.loads(data)
    except Exception as exc:
        return Failed(unsendable("the task's arguments", exc))
    return call(fn, args)


def _send(results: Any, lane: int, ticket: int, outcome: Outcome, prefix: str) -> bool:
    """Write the outcome to the parent; False if the parent is gone."""
    try:
        packed = shm.dumps(outcome, prefix)
    except Exception as exc:
        packed = shm.dumps(Failed(unsendable("the task's result", exc)))
    try:
        results.send_bytes(HEADER.pack(lane, ticket) + packed.data)
    except OSError:
        shm.discard(packed.segments)
        return False
    return True


def _unpickle_fn(data: bytes) -> Callable[..., Any] | ErrorInfo:
    try:
        fn: Callable[..., Any] = shm.loads(data)
        return fn
    except Exception as exc:
        return unsendable("the function", exc, "could not be loaded in the worker")
