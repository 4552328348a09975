"""Metric curves for the browser: a run's metric rows (training, validation, a batch job's
groups) as one series per group and metric name, ready to plot."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from graphbook import protocol as p
from graphbook.store import MetricRecord, RunRecord, Store

MAX_METRIC_POINTS = 2000
"""Points per series sent to the browser; a longer series keeps every k-th point and its last."""
MAX_RUNS = 50
"""Runs whose metrics one request may ask for (a search's trials overlaid)."""


def run_metrics(store: Store, records: list[RunRecord]) -> list[p.RunMetrics]:
    """The metric series of each run, in the order given."""
    rows: dict[str, list[MetricRecord]] = {r.id: [] for r in records}
    for row in store.metrics([r.id for r in records]):
        rows[row.run_id].append(row)
    return [p.RunMetrics(r.id, r.name, series_of(rows[r.id])) for r in records]


def series_of(rows: Iterable[MetricRecord]) -> list[p.MetricSeries]:
    """One series per (group, metric) in the order they first appear; numbers only."""
    points: dict[tuple[str, str], tuple[list[int], list[float | None]]] = {}
    for row in rows:
        for name, value in row.metrics.items():
            steps, values = points.setdefault((row.group, name), ([], []))
            steps.append(row.steps_completed)
            values.append(_number(value))
    return [
        _thinned(group, name, steps, values)
        for (group, name), (steps, values) in points.items()
        if any(v is not None for v in values)  # a metric that is never a number: no curve
    ]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _thinned(group: str, name: str, steps: list[int], values: list[float | None]) -> p.MetricSeries:
    if len(steps) <= MAX_METRIC_POINTS:
        return p.MetricSeries(group, name, steps, values)
    stride = math.ceil(len(steps) / MAX_METRIC_POINTS)
    keep = [*range(0, len(steps) - 1, stride), len(steps) - 1]
    return p.MetricSeries(
        group,
        name,
        [steps[i] for i in keep],
        [values[i] for i in keep],
        dropped=len(steps) - len(keep),
    )
