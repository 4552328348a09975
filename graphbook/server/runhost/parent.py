"""RunHost: the server's side of the run host, the child process where served runs execute.

NOTE [ Run host ]
A served run's engine (the executor, node code, the output cache, the worker pool, prompts
waiting for answers) runs in a run host: a child process started as a fresh interpreter
(`python -c`, not a fork of the threaded server) that loads the registry from the server's node
folder (RunHostChild, child.py). The server's loop never runs user code, and Stop can
always end a run: a run that does not stop when asked is ended with its process (SIGKILL),
whatever its code is doing (blocked in C, holding the GIL). Its worker processes die with it
(PR_SET_PDEATHSIG) and unlink their shared memory.

The host starts a session of its own (its process group): ending it ends the whole group, so a
process its node code forked (a library on multiprocessing's fork start method) dies with it.
Its end is seen from its process (`_watch`), never only from its pipe: a descendant that left
the group may still hold the host's end of the pipe open, so once the host has exited and the
pipe has not closed within EOF_GRACE, the server closes its own end and the run ends.

One host is kept warm: it starts with the server and after each one that is ended, so a run
does not pay for imports. Between runs it re-imports node files that changed (as the catalog
does), keeping its cache: a node's cache key holds its code.

The two sides talk in the typed messages of messages.py. They come back over one pipe, in
order, read by one thread here (`_read`): the run's messages as clients get them with the
events the run store needs (RunEvent), replies to requests, and RunEnded. The reader hands the
run's reports to the run manager. Requests with replies (cache reads and changes, pool stats,
images) wait on a Future: from a thread, or awaited on the loop (`ask`), never blocking it.

The images a run's previews show stay in the host (its media store) until someone looks: the
server asks for one (ReadImage), encoded there once, and keeps the bytes. A preview's pixels
never cross the pipe unasked (a 224x224 image was 150,600 bytes with every preview).

The cache lives in the host. When a host is ended, what it cached is gone: the next host is
told which workflows it had (`lost`), and their nodes re-run with the cause `lost` ("its cached
outputs were lost when the run process was ended"), never reused wrongly and never said to
have not finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from graphbook.engine import processes
from graphbook.events import PoolStats
from graphbook.server.runhost.messages import (
    Call,
    Close,
    ForgetCached,
    FromHost,
    HostConfig,
    HostExited,
    ReadCacheUsage,
    ReadPoolStats,
    Ready,
    Refused,
    RenameCached,
    Replied,
    Report,
    Request,
    RunOrder,
    SetCacheBudget,
    ToHost,
)

logger = logging.getLogger(__name__)
EOF_GRACE = 1.0
"""Seconds the pipe has to close after the host has exited and its group was ended."""
CALL_TIMEOUT = 10.0
"""Seconds a request from a thread waits for the host's reply."""

BOOT = "from graphbook.server.runhost.child import main; main"
"""What the host's fresh interpreter runs (with the file descriptor of its end of the pipe)."""
Listener = Callable[["RunHost", Report], None]
R = TypeVar("R")


class HostGone(Exception):
    """The run host ended before it replied."""


class RunHost:
    """One run host process and its pipe, as the server holds them."""

    def __init__(self, config: HostConfig, listener: Listener) -> None:
        self.config = config
        self.listener = listener
        """Called in the reader thread with each run report, and HostExited at the end."""
        self.ran: set[str] = set()
        """Workflows run on this host: what it holds in its cache."""
        self.killed = False
        self.loaded = False
        """It has loaded its registry and pool and said `ready`."""
        self._calls: dict[int, Future[Any]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        ours, theirs = socket.socketpair()
        self._conn = Connection(ours.detach())
        self._read_done = threading.Event()
        self._exited = threading.Event()
        """The host has exited, its group was ended and it was reaped (`_watch`)."""
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"{BOOT}({theirs.fileno()})"],
            pass_fds=[theirs.fileno()],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            start_new_session=True,  # its own group: ended whole, forks of node code included
        )
        theirs.close()
        self.gone = False
        """Its end of the pipe has closed: it has ended."""
        self._outgoing: queue.SimpleQueue[HostConfig | ToHost | None] = queue.SimpleQueue()
        writer = threading.Thread(target=self._write, name="graphbook-host-write", daemon=True)
        writer.start()
        self._outgoing.put(config)
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, name="graphbook-host-read", daemon=True)
        self._reader.start()
        watcher = threading.Thread(target=self._watch, name="graphbook-host-watch", daemon=True)
        watcher.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    # -- to the host -------------------------------------------------------------------------
    def send(self, message: ToHost) -> bool:
        """Hand a message to the host, never waiting for it (its writer thread writes it: a
        host that is still loading reads nothing yet); False if it is gone."""
        if self.gone:
            return False
        self._outgoing.put(message)
        return True

    def _write(self) -> None:
        while True:
            message = self._outgoing.get()
            if message is None:
                return
            try:
                self._conn.send(message)
            except (OSError, ValueError):
                return
            except Exception:  # a message that cannot be pickled: say so, go on
                logger.exception("a %s could not be sent to the run host", type(message).__name__)

    def run(self, order: RunOrder) -> bool:
        self.ran.add(order.request.workflow)
        return self.send(order)

    def request(self, request: Request[R]) -> Future[R]:
        """The host's reply to come; it raises HostGone if the host ends first, RuntimeError
        (naming the host's exception) if the request raised there."""
        future: Future[R] = Future()
        call = next(self._ids)
        with self._lock:
            self._calls[call] = future
        if not self.send(Call(call, request)):
            self._fail(call)
        return future

    def call(self, request: Request[R], timeout: float = CALL_TIMEOUT) -> R:
        """The host's reply (from a thread, never the loop); raises HostGone."""
        try:
            return self.request(request).result(timeout)
        except TimeoutError:
            what = type(request).__name__
            raise HostGone(f"the run host did not answer {what} in {timeout:.0f} s") from None

    async def ask(self, request: Request[R]) -> R:
        """The host's reply, awaited on the loop; raises HostGone."""
        return await asyncio.wrap_future(self.request(request))

    def _fail(self, call: int) -> None:
        with self._lock:
            future = self._calls.pop(call, None)
        if future is not None and not future.done():
            future.set_exception(HostGone("the run host ended"))

    # -- ending ------------------------------------------------------------------------------
    def kill(self) -> None:
        """End the host now (SIGKILL to its process group): its run, node code, workers and
        whatever its node code forked end with it."""
        self.killed = True
        _kill_group(self.process.pid)

    def _watch(self) -> None:
        """The host's end, seen from its process: once it has exited (not yet reaped, so its
        group id is not reused), end what is left of its group; if the pipe is still held open
        then (by a descendant that left the group), close the server's end so the reader ends."""
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOWAIT)
        _kill_group(self.process.pid)
        self.process.wait()
        self._exited.set()
        if self._read_done.wait(EOF_GRACE):
            return
        logger.warning("the run host has exited but its pipe is held open; closing it")
        with contextlib.suppress(OSError), socket.socket(fileno=os.dup(self._conn.fileno())) as end:
            end.shutdown(socket.SHUT_RDWR)

    def close(self, timeout: float = 10.0) -> None:
        """Ask the host to end (its run stopped, its pool closed); kill it past `timeout`."""
        self.send(Close())
        if not self._exited.wait(timeout):
            self.kill()
            self._exited.wait(5)
        self._reader.join(5)
        with contextlib.suppress(OSError):
            self._conn.close()

    # -- from the host -----------------------------------------------------------------------
    def _read(self) -> None:
        while True:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                break
            except Exception:  # a message that cannot be unpickled here: say so, go on
                logger.exception("a message from the run host could not be read")
                continue
            self._dispatch(message)
        self._read_done.set()
        self.gone = True
        self._outgoing.put(None)
        self._exited.wait(5)  # its exit code (the watcher reaps it once its group is ended)
        for call in list(self._calls):
            self._fail(call)
        self.ready.set()
        self.listener(self, HostExited(self.process.returncode))
        if self.killed or self.process.returncode:
            _sweep_after_kill()

    def _dispatch(self, message: FromHost) -> None:
        match message:
            case Replied(call, value):
                self._settle(call, lambda future: future.set_result(value))
            case Refused(call, error):
                self._settle(call, lambda future: future.set_exception(RuntimeError(error)))
            case Ready():
                self.loaded = True
                self.ready.set()
            case _:
                self.listener(self, message)

    def _settle(self, call: int, settle: Callable[[Future[Any]], None]) -> None:
        with self._lock:
            future = self._calls.pop(call, None)
        if future is not None and not future.done():
            settle(future)


class HostCache:
    """The run manager's view of the output cache in the run host: what the system and workflow
    routes read and change (as `OutputCache`), forwarded to the host."""

    def __init__(self, budget: int, host: Callable[[], RunHost]) -> None:
        self.budget = budget
        self._host = host

    def usage(self) -> tuple[int, int]:
        """Bytes used and entries of the host's cache, in one call to it (0, 0 without one)."""
        try:
            usage = self._host().call(ReadCacheUsage(), timeout=2.0)
        except (HostGone, RuntimeError):
            return 0, 0
        return usage.used, usage.entries

    def set_budget(self, budget: int) -> None:
        self.budget = budget  # a host started later gets it too
        with contextlib.suppress(HostGone):
            self._host().request(SetCacheBudget(budget))

    def rename(self, old: str, new: str) -> None:
        with contextlib.suppress(HostGone):
            host = self._host()
            if old in host.ran:
                host.ran.discard(old)
                host.ran.add(new)
            host.request(RenameCached(old, new))

    def forget(self, name: str) -> None:
        with contextlib.suppress(HostGone):
            host = self._host()
            host.ran.discard(name)
            host.request(ForgetCached(name))


class HostPool:
    """The run host's worker pool, as the system route reads it."""

    def __init__(self, host: Callable[[], RunHost]) -> None:
        self._host = host

    def stats(self) -> PoolStats | None:
        try:
            return self._host().call(ReadPoolStats(), timeout=2.0)
        except (HostGone, RuntimeError):
            return None


SWEEPS = (0.0, 0.5, 2.0)
"""Pauses, in seconds, before each sweep after a host was killed: its workers die by SIGKILL a
moment after it, with no time to unlink their shared memory."""


def _kill_group(pid: int) -> None:
    """SIGKILL to the process group `pid` leads (the host's: it started a session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _sweep_after_kill() -> None:
    """Unlink what a killed host's workers left in shared memory as they go, not when the next
    host's pool starts (minutes later, or never, on an idle server)."""
    for pause in SWEEPS:
        time.sleep(pause)
        processes.sweep_orphans()
