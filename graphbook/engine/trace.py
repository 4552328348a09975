"""Where a run's time goes, as a Chrome/Perfetto trace (`graphbook run --trace FILE`).

A `Tracer` collects spans while a run goes: each node's turns in the engine's thread, each batch
a batch step runs, each part of a batch a load worker made (timed in the worker, on the same
monotonic clock), each dump, the time a batch step waited for input, and each copy to a device.
`write` saves them in the Trace Event Format that chrome://tracing, ui.perfetto.dev and
TensorBoard's profiler open: one row per node, one per worker process.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphbook.atomic import atomic_write


@dataclass(frozen=True)
class Span:
    """Something that took time: where (`process`, `row`), what, and when (monotonic s)."""

    name: str
    category: str
    process: str
    row: str
    start: float
    end: float
    args: dict[str, Any] | None = None


@dataclass(frozen=True)
class Timed:
    """When a task ran in a worker, on the monotonic clock every process of the machine shares."""

    pid: int
    start: float
    end: float


def now() -> float:
    """The clock spans are on (CLOCK_MONOTONIC: the same in every process of a machine)."""
    return time.monotonic()


class Tracer:
    """The spans of one run; thread-safe (a feed may copy on another thread)."""

    def __init__(self) -> None:
        self.start = now()
        self.spans: list[Span] = []
        self._lock = threading.Lock()

    def add(self, span: Span) -> None:
        with self._lock:
            self.spans.append(span)

    def span(
        self,
        name: str,
        category: str,
        row: str,
        start: float,
        end: float | None = None,
        **args: Any,
    ) -> None:
        """A span of this process (the run's), on `row`."""
        end = now() if end is None else end
        self.add(Span(name, category, "run", row, start, end, args or None))

    def worker(self, name: str, category: str, timed: Timed, **args: Any) -> None:
        """A span a worker process timed (or this process, running its tasks inline)."""
        process = "run" if timed.pid == os.getpid() else f"{category} worker {timed.pid}"
        self.add(Span(name, category, process, category, timed.start, timed.end, args or None))

    def events(self) -> list[dict[str, Any]]:
        """The spans as Trace Event Format events: "X" (complete) events in microseconds from
        the run's start, with "M" (metadata) events naming each process and row."""
        with self._lock:
            spans = list(self.spans)
        pids = {"run": os.getpid()}
        rows: dict[tuple[str, str], int] = {}
        events: list[dict[str, Any]] = []
        for span in spans:
            pid = pids.setdefault(span.process, _pid_of(span.process, len(pids)))
            tid = rows.setdefault((span.process, span.row), len(rows) + 1)
            event = {
                "name": span.name,
                "cat": span.category,
                "ph": "X",
                "pid": pid,
                "tid": tid,
                "ts": round((span.start - self.start) * 1e6, 1),
                "dur": round(max(0.0, span.end - span.start) * 1e6, 1),
            }
            if span.args:
                event["args"] = span.args
            events.append(event)
        for process, pid in pids.items():
            events.append(_meta("process_name", pid, 0, process))
        for (process, row), tid in rows.items():
            events.append(_meta("thread_name", pids[process], tid, row))
        return events

    def write(self, path: Path | str) -> Path:
        """Save the trace as JSON at `path` (atomically); returns the path written."""
        path = Path(path)
        document = {"traceEvents": self.events(), "displayTimeUnit": "ms"}
        atomic_write(path, json.dumps(document, separators=(",", ":")))
        return path


def _pid_of(process: str, fallback: int) -> int:
    """A worker's own pid, from its process name; else a number of its own."""
    last = process.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else -fallback


def _meta(name: str, pid: int, tid: int, value: str) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": pid, "tid": tid, "args": {"name": value}}
