"""Resources built beside the run: a model that takes seconds to build is built on a thread
of its own while the scheduler runs the nodes that do not need it (sources, the steps before
the model); what the build logged, and its value or its error, reach the scheduler's thread
when it asks (`arrived`), so every event is still sent from there."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphbook.logs import node_context


@dataclass(frozen=True)
class Built:
    """A resource's build ended: its value, or the exception it raised; how long it took."""

    node_id: str
    value: Any
    error: BaseException | None
    seconds: float


@dataclass(frozen=True)
class Logged:
    node_id: str
    message: Any
    level: str


class ResourceBuilds:
    """Builds resources one after another on a daemon thread, in the order they are asked for.

    `wake` is called whenever a build ends, so a scheduler asleep for want of work wakes up. A
    build still going when the run ends is left to finish on its own (a Stop does not wait for
    a model to load); its value is dropped."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._asked: deque[tuple[str, Callable[[], Any]]] = deque()
        self._done: deque[Built | Logged] = deque()
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.building: set[str] = set()
        """Resources asked for whose build has not arrived yet."""

    def build(self, node_id: str, make: Callable[[], Any]) -> None:
        """Build `make()` as resource `node_id`'s value, after those asked for before it."""
        self.building.add(node_id)
        with self._ready:
            self._asked.append((node_id, make))
            self._ready.notify()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="resource-builds", daemon=True)
            self._thread.start()

    def arrived(self) -> list[Built | Logged]:
        """What happened since the last call, in order: lines logged and builds ended."""
        out: list[Built | Logged] = []
        while self._done:
            item = self._done.popleft()
            if isinstance(item, Built):
                self.building.discard(item.node_id)
            out.append(item)
        return out

    def close(self) -> None:
        """No more builds: the thread ends once the one it is on (if any) does."""
        with self._ready:
            self._closed = True
            self._ready.notify()

    def _serve(self) -> None:
        while True:
            with self._ready:
                while not self._asked and not self._closed:
                    self._ready.wait()
                if self._closed:
                    return
                node_id, make = self._asked.popleft()
            self._done.append(self._one(node_id, make))
            self._wake()

    def _one(self, node_id: str, make: Callable[[], Any]) -> Built:
        def logged(node: str, message: Any, level: str) -> None:
            self._done.append(Logged(node, message, level))

        began = time.perf_counter()
        try:
            with node_context(node_id, logged):
                value = make()
        except BaseException as exc:  # it travels to the scheduler as a value
            return Built(node_id, None, exc, time.perf_counter() - began)
        return Built(node_id, value, None, time.perf_counter() - began)
