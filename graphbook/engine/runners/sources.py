"""Runners that hand dicts on without taking any in: a source's `produce()` pulled while the
nodes downstream have room, and a node reused from the cache replaying its outputs."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator

from graphbook.engine.runners.base import (
    CHUNK,
    CHUNK_SECONDS,
    RunContext,
    Runner,
    clock_due,
)
from graphbook.events import (
    NodeStatus,
)
from graphbook.graph import GraphNode
from graphbook.lifecycle import (
    Data,
    Routed,
    SourceStep,
    fork,
)
from graphbook.logs import node_context


class SourceRunner(Runner[SourceStep]):
    """Pulls from a source's `produce()` while the nodes downstream have room."""

    def __init__(self, node: GraphNode, instance: SourceStep, run: RunContext) -> None:
        super().__init__(node, instance, run)
        self._chunks: Iterator[Routed] | None = None
        self._done = False

    def ready(self) -> bool:
        return not self._done and self.has_room()

    def exhausted(self) -> bool:
        return self._done

    def close(self, status: NodeStatus = "done") -> None:
        """Close the source's generator here and now (its `with` blocks run, its files close)
        when the run ends before it did, rather than whenever the garbage collector finds it,
        where a file in a reference cycle is closed by its own finalizer with a warning."""
        chunks, self._chunks = self._chunks, None
        close = getattr(chunks, "close", None)
        if close is not None:
            with node_context(self.id, self.on_log):
                try:
                    close()
                except Exception as exc:
                    self.fail(exc)
        super().close(status)

    def handle_chunk(self) -> None:
        if self._chunks is None:
            self._chunks = iter(self.instance.produce())
        if not self.run.control.stepping:
            self._pull(self._chunks, min(CHUNK, self.room()))
        elif self._pull(self._chunks, 1):
            self.unit_done()

    def _pull(self, chunks: Iterator[Routed], limit: int) -> int:
        """Pull from the source until `limit` dicts came, it ends, or the turn's time is up;
        hand the dicts on together, output by output. Returns how many values it pulled."""
        pending: dict[str, list[Data]] = {}
        emitted = pulled = 0
        deadline = time.perf_counter() + CHUNK_SECONDS
        try:
            while emitted < limit:
                if clock_due(pulled) and time.perf_counter() > deadline:
                    break
                try:
                    pairs = next(chunks)
                except StopIteration:
                    self._done = True
                    break
                except Exception as exc:
                    self._done = True
                    self.fail(exc)
                    break
                pulled += 1
                for output, data in pairs:
                    pending.setdefault(output, []).append(data)
                emitted += len(pairs) or 1
        finally:
            for output, dicts in pending.items():
                self.emit_many(output, dicts)
        return pulled


class ReplayRunner(SourceRunner):
    """A node reused from the cache: it hands its cached dicts (copied) to the nodes that run
    again, and neither starts, previews nor reports: its outputs are already known."""

    def __init__(self, node: GraphNode, pairs: Iterable[tuple[str, Data]], run: RunContext) -> None:
        super().__init__(node, SourceStep(), run)  # nothing of it runs
        self._pairs = deque(pairs)
        self._done = not self._pairs

    def start(self) -> None:
        """Nothing runs."""

    def end(self) -> None:
        """Nothing ran."""

    def handle_chunk(self) -> None:
        emitted = 0
        while emitted < CHUNK and self._pairs and self.has_room():
            output, data = self._pairs.popleft()
            self.emit([(output, fork(data))])
            emitted += 1
        self._done = not self._pairs

    def close(self, status: NodeStatus = "done") -> None:
        self.closed = True
        self.status = status
        for targets in self.targets.values():
            for target in targets:
                target.open_upstream -= 1

    def preview_firsts(self) -> None:
        """The cached outputs were previewed when the run began."""
        self._firsts.clear()

    def report_progress(self, force: bool = False) -> None:
        """A reused node reports its counts once, as cached."""
