"""Outbox: calls handed to the event loop from other threads, run there in order, a slice at a
time.

The run's thread hands every message to the loop (and the run's end after them). Handed one
`call_soon_threadsafe` each, a burst (a 4,000-node run starting emits 4,000 `node_plan`
messages within a second) became 4,000 callbacks that the loop ran in one go, before it looked
at its sockets again: `/api/info` waited seconds. The outbox runs what it holds for at most
SLICE seconds, then lets the loop poll its sockets before it goes on, in the same order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)
SLICE = 0.02
"""Seconds the outbox holds the loop before it lets the loop answer its sockets."""


class Outbox:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._calls: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._lock = threading.Lock()
        self._scheduled = False

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the loop after every call posted before it (from any thread)."""
        with self._lock:
            self._calls.append((fn, args))
            if self._scheduled:
                return
            self._scheduled = True
        with contextlib.suppress(RuntimeError):  # the loop has closed: the server is gone
            self._loop.call_soon_threadsafe(self._drain)

    def __len__(self) -> int:
        return len(self._calls)

    def _drain(self) -> None:
        deadline = time.perf_counter() + SLICE
        while time.perf_counter() < deadline:
            with self._lock:
                if not self._calls:
                    self._scheduled = False
                    return
                fn, args = self._calls.popleft()
            try:
                fn(*args)
            except Exception:  # as the loop would: logged, and the next call runs
                logger.exception("a call handed to the event loop failed")
        self._loop.call_soon(self._drain)  # the rest once the loop has polled its sockets
