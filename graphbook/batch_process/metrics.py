"""Metrics a rank reports between two checkpoints: kept here and committed with the next one,
so a batch that is processed again after a crash does not report its metrics twice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphbook.plain import plain_metric

MetricRow = tuple[str, int, dict[str, Any]]
"""(group, steps_completed, metrics) as the store keeps it."""


class MetricBuffer:
    def __init__(self) -> None:
        self.rows: list[MetricRow] = []

    def add(self, group: str, steps_completed: int, metrics: Mapping[str, Any]) -> None:
        if not isinstance(group, str) or not group:
            raise ValueError(f"a metrics group must be a non-empty string, got {group!r}")
        if not isinstance(metrics, Mapping):
            raise TypeError(f"metrics must be a dict of name to value, got {metrics!r}")
        self.rows.append(
            (group, int(steps_completed), {str(k): plain_metric(v) for k, v in metrics.items()})
        )

    def take(self) -> list[MetricRow]:
        rows, self.rows = self.rows, []
        return rows
