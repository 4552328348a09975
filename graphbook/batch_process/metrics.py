"""Metrics a rank reports between two checkpoints: kept here and committed with the next one,
so a batch that is processed again after a crash does not report its metrics twice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

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


def plain_metric(value: Any) -> Any:
    """A JSON-safe form of a metric value: numbers from tensors and numpy, lists from arrays."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        return plain_metric(value.item() if value.numel() == 1 else value.tolist())
    if isinstance(value, np.ndarray | np.generic):
        return plain_metric(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): plain_metric(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_metric(v) for v in value]
    return value
