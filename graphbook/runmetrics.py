"""A workflow run's metric rows, as the run store and the metric loggers take them: what its
nodes report (NodeMetrics, grouped by node id) and what the engine measured of each node and of
the run (from NodeFinished and RunFinished, one row each). The server's history and
`graphbook run` record the same rows from the same events."""

from __future__ import annotations

from typing import Any

from graphbook.events import Event, NodeFinished, NodeMetrics, RunFinished

Row = tuple[str, int, dict[str, Any]]
"""(group, step, metrics by name): one row of the run store's metrics."""
RUN_GROUP = "run"
"""The group of the run's own figures (its seconds, items, items per second, errors)."""


class RunMetricRows:
    """Folds one run's events into metric rows; a node's figures come at the step after the
    last it reported (0 if it reported none), so each group has each step once."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def __call__(self, event: Event) -> list[Row]:
        if isinstance(event, NodeMetrics):
            return self._reported(event)
        if isinstance(event, NodeFinished) and event.status != "cached":
            return [(event.node_id, self._next.get(event.node_id, 0), node_figures(event))]
        if isinstance(event, RunFinished):
            return [(RUN_GROUP, 0, run_figures(event))]
        return []

    def _reported(self, event: NodeMetrics) -> list[Row]:
        rows = [(event.node_id, row.step, dict(row.values)) for row in event.rows]
        after = max((row.step + 1 for row in event.rows), default=0)
        self._next[event.node_id] = max(self._next.get(event.node_id, 0), after)
        return rows


def node_figures(event: NodeFinished) -> dict[str, float]:
    """Dicts the node handed on (in all, and per output when it has several), its errors, its
    seconds and dicts per second."""
    items = sum(event.counts.values())
    figures = {"items_out": float(items), "errors": float(event.errors)}
    if len(event.counts) > 1:
        figures |= {f"items_out.{name}": float(n) for name, n in event.counts.items()}
    return figures | {"seconds": event.seconds, "items_per_s": _rate(items, event.seconds)}


def run_figures(event: RunFinished) -> dict[str, float]:
    """The run's seconds, errors, items (the most dicts any node handed on, as the Runs tab
    counts them) and items per second."""
    items = max((sum(counts.values()) for counts in event.counts.values()), default=0)
    return {
        "seconds": event.seconds,
        "items": float(items),
        "items_per_s": _rate(items, event.seconds),
        "errors": float(event.errors),
    }


def _rate(items: int, seconds: float) -> float:
    return items / seconds if seconds > 0 else 0.0
