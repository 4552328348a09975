"""MetricBook: the metrics a run's nodes report (`log_metric`, in this process or a worker's),
gathered by node and step and handed to the sink as NodeMetrics events about once a second, so
a node that reports on every item costs the sink (and the run store) one event a second."""

from __future__ import annotations

import time
from collections.abc import Iterable

from graphbook.events import MetricRow, NodeMetrics, Sink
from graphbook.logs import Reported

FLUSH_EVERY = 1.0
"""Seconds between the NodeMetrics events of a run while its nodes report metrics."""


class MetricBook:
    """One run's metrics not yet sent, by node and step; the next automatic step of each name."""

    def __init__(self, run_id: str, sink: Sink) -> None:
        self.run_id = run_id
        self.sink = sink
        self.pending = False
        """Whether some metric waits to be sent: the one thing a run's loop reads when no node
        reports any."""
        self._rows: dict[str, dict[int, dict[str, float]]] = {}
        self._next: dict[str, dict[str, int]] = {}
        self._due = 0.0

    def add(self, node_id: str, reported: Reported) -> None:
        values, step = reported
        steps = self._next.setdefault(node_id, {})
        if step is None:
            step = max((steps.get(name, 0) for name in values), default=0)
        for name in values:
            steps[name] = max(steps.get(name, 0), step + 1)
        self._rows.setdefault(node_id, {}).setdefault(step, {}).update(values)
        if not self.pending:
            self.pending = True
            self._due = time.monotonic() + FLUSH_EVERY

    def add_all(self, node_id: str, reported: Iterable[Reported]) -> None:
        for each in reported:
            self.add(node_id, each)

    def flush_if_due(self) -> None:
        if self.pending and time.monotonic() >= self._due:
            self.flush()

    def flush(self, node_id: str | None = None) -> None:
        """Send what waits (of one node, or of every node) as one NodeMetrics per node."""
        nodes = list(self._rows) if node_id is None else [node_id] if node_id in self._rows else []
        for each in nodes:
            rows = self._rows.pop(each)
            found = [MetricRow(step, rows[step]) for step in sorted(rows)]
            self.sink(NodeMetrics(self.run_id, each, found))
        self.pending = bool(self._rows)
