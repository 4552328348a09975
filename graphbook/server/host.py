"""RunHost: the server's handle on the run host, the child process where served runs execute.

NOTE [ Run host ]
A served run's engine (the executor, node code, the output cache, the worker pool, prompts
waiting for answers) runs in a run host: a child process started as a fresh interpreter
(`python -c`, not a fork of the threaded server) that loads the registry from the server's node
folder (graphbook/server/runhost.py). The server's loop never runs user code, and Stop can
always end a run: a run that does not stop when asked is ended with its process (SIGKILL),
whatever its code is doing (blocked in C, holding the GIL). Its worker processes die with it
(PR_SET_PDEATHSIG) and unlink their shared memory.

One host is kept warm: it starts with the server and after each one that is ended, so a run
does not pay for imports. Between runs it re-imports node files that changed (as the catalog
does), keeping its cache: a node's cache key holds its code.

Messages come back over one pipe, in order, read by one thread here (`_read`): the run's
messages as clients get them, the events the run store needs, images (kept by the server's
media store), replies to requests, and `ended`. The reader hands them on as the run's own
thread did before (RunManager). Requests with replies (cache reads and changes, pool stats) wait
on a Future: from a thread, or awaited on the loop (`ask`), never blocking it.

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
from typing import Any

from graphbook.engine import processes
from graphbook.events import PoolStats
from graphbook.server.media import MediaStore
from graphbook.server.runhost import HostConfig, Reply, RunOrder

logger = logging.getLogger(__name__)
CALL_TIMEOUT = 10.0
"""Seconds a request from a thread waits for the host's reply."""

BOOT = "from graphbook.server.runhost import main; main"
"""What the host's fresh interpreter runs (with the file descriptor of its end of the pipe)."""
Listener = Callable[["RunHost", tuple[Any, ...]], None]


class HostGone(Exception):
    """The run host ended before it replied."""


class RunHost:
    """One run host process and its pipe."""

    def __init__(self, config: HostConfig, media: MediaStore, listener: Listener) -> None:
        self.config = config
        self.media = media
        self.listener = listener
        """Called in the reader thread with each run message, and ("exit", code) at the end."""
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
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"{BOOT}({theirs.fileno()})"],
            pass_fds=[theirs.fileno()],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        )
        theirs.close()
        self.gone = False
        """Its end of the pipe has closed: it has ended."""
        self._outgoing: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        writer = threading.Thread(target=self._write, name="graphbook-host-write", daemon=True)
        writer.start()
        self.send(("config", config))
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, name="graphbook-host-read", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    # -- to the host -------------------------------------------------------------------------
    def send(self, message: tuple[Any, ...]) -> bool:
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
                logger.exception("a %s message could not be sent to the run host", message[0])

    def run(self, order: RunOrder) -> bool:
        self.ran.add(order.name)
        return self.send(("run", order))

    def request(self, method: str, *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        request = next(self._ids)
        with self._lock:
            self._calls[request] = future
        if not self.send(("call", request, method, args)):
            self._fail(request)
        return future

    def call(self, method: str, *args: Any, timeout: float = CALL_TIMEOUT) -> Any:
        """The host's reply (from a thread, never the loop); raises HostGone."""
        try:
            return self.request(method, *args).result(timeout)
        except TimeoutError:
            raise HostGone(f"the run host did not answer {method} in {timeout:.0f} s") from None

    async def ask(self, method: str, *args: Any) -> Any:
        """The host's reply, awaited on the loop; raises HostGone."""
        return await asyncio.wrap_future(self.request(method, *args))

    def _fail(self, request: int) -> None:
        with self._lock:
            future = self._calls.pop(request, None)
        if future is not None and not future.done():
            future.set_exception(HostGone("the run host ended"))

    # -- ending ------------------------------------------------------------------------------
    def kill(self) -> None:
        """End the host now (SIGKILL): its run, node code and workers end with it."""
        self.killed = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGKILL)

    def close(self, timeout: float = 10.0) -> None:
        """Ask the host to end (its run stopped, its pool closed); kill it past `timeout`."""
        self.send(("close",))
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.process.wait(5)
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
        self.gone = True
        self._outgoing.put(None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        for request in list(self._calls):
            self._fail(request)
        self.ready.set()
        self.listener(self, ("exit", self.process.returncode))
        if self.killed or self.process.returncode:
            _sweep_after_kill()

    def _dispatch(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "reply":
            self._reply(message[1])
        elif kind == "media":
            self.media.put(message[1], message[2])
        elif kind == "ready":
            self.loaded = True
            self.ready.set()
        else:
            self.listener(self, message)

    def _reply(self, reply: Reply) -> None:
        with self._lock:
            future = self._calls.pop(reply.request, None)
        if future is None or future.done():
            return
        if reply.ok:
            future.set_result(reply.value)
        else:
            future.set_exception(RuntimeError(reply.value))


class HostCache:
    """The run manager's view of the output cache in the run host: what the system and workflow
    routes read and change (as `OutputCache`), forwarded to the host."""

    def __init__(self, budget: int, host: Callable[[], RunHost]) -> None:
        self.budget = budget
        self._host = host

    def usage(self) -> tuple[int, int]:
        """Bytes used and entries of the host's cache, in one call to it (0, 0 without one)."""
        try:
            used, entries = self._host().call("cache_stats", timeout=2.0)
        except (HostGone, RuntimeError):
            return 0, 0
        return int(used), int(entries)

    def set_budget(self, budget: int) -> None:
        self.budget = budget  # a host started later gets it too
        with contextlib.suppress(HostGone):
            self._host().request("set_budget", budget)

    def rename(self, old: str, new: str) -> None:
        with contextlib.suppress(HostGone):
            host = self._host()
            if old in host.ran:
                host.ran.discard(old)
                host.ran.add(new)
            host.request("rename", old, new)

    def forget(self, name: str) -> None:
        with contextlib.suppress(HostGone):
            host = self._host()
            host.ran.discard(name)
            host.request("forget", name)


class HostPool:
    """The run host's worker pool, as the system route reads it."""

    def __init__(self, host: Callable[[], RunHost]) -> None:
        self._host = host

    def stats(self) -> PoolStats | None:
        try:
            stats = self._host().call("pool_stats", timeout=2.0)
        except (HostGone, RuntimeError):
            return None
        return stats if isinstance(stats, PoolStats) else None


SWEEPS = (0.0, 0.5, 2.0)
"""Pauses, in seconds, before each sweep after a host was killed: its workers die by SIGKILL a
moment after it, with no time to unlink their shared memory."""


def _sweep_after_kill() -> None:
    """Unlink what a killed host's workers left in shared memory as they go, not when the next
    host's pool starts (minutes later, or never, on an idle server)."""
    for pause in SWEEPS:
        time.sleep(pause)
        processes.sweep_orphans()
