"""What the loggers wrote, read back with each format's own reader, as (group, step, metrics)
rows comparable with the store's."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import numpy as np

from graphbook.store import Store

Rows = dict[str, list[tuple[int, dict[str, float]]]]
"""Per group: (step, the numeric metrics) in the order logged."""


def store_rows(home: Path, run_id: str, as_float32: bool = False) -> Rows:
    rows: Rows = {}
    for record in Store(home / "graphbook.sqlite").metrics([run_id]):
        values = {
            k: float(np.float32(v)) if as_float32 else float(v)
            for k, v in record.metrics.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
        rows.setdefault(record.group, []).append((record.steps_completed, values))
    return rows


def csv_rows(folder: Path) -> Rows:
    rows: Rows = {}
    for path in sorted(folder.glob("*.csv")):
        with path.open(newline="") as handle:
            for line in csv.DictReader(handle):
                step = int(line.pop("step"))
                values = {k: float(v) for k, v in line.items() if _is_number(v)}
                rows.setdefault(path.stem, []).append((step, values))
    return rows


def _is_number(text: str) -> bool:
    """A cell the store holds as a number (a list or text metric is written as JSON or text)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def by_step(rows: Rows) -> dict[str, dict[int, dict[str, float]]]:
    """Rows per group and step (readers that keep a series per metric lose the row order)."""
    out: dict[str, dict[int, dict[str, float]]] = {}
    for group, series in rows.items():
        for step, values in series:
            assert step not in out.setdefault(group, {}), f"{group} has step {step} twice"
            out[group][step] = values
    return out


def tensorboard_rows(folder: Path) -> dict[str, dict[int, dict[str, float]]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(folder))
    events.Reload()
    out: dict[str, dict[int, dict[str, float]]] = {}
    for tag in events.Tags()["scalars"]:
        group, name = tag.split("/", 1)
        for event in events.Scalars(tag):
            steps = out.setdefault(group, {})
            assert name not in steps.get(event.step, {}), f"{tag} has step {event.step} twice"
            steps.setdefault(event.step, {})[name] = event.value
    return out


def mlflow_rows(uri: str, run_id: str) -> tuple[dict[str, dict[int, dict[str, float]]], Any]:
    from mlflow.tracking import MlflowClient

    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 asks for it for a folder
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("graphbook")
    assert experiment is not None, "no MLflow experiment named graphbook"
    [run] = client.search_runs([experiment.experiment_id], f"tags.`graphbook.run_id` = '{run_id}'")
    out: dict[str, dict[int, dict[str, float]]] = {}
    for key in run.data.metrics:
        group, name = key.split("/", 1)
        for point in client.get_metric_history(run.info.run_id, key):
            steps = out.setdefault(group, {})
            assert name not in steps.get(point.step, {}), f"{key} has step {point.step} twice"
            steps.setdefault(point.step, {})[name] = point.value
    return out, run
