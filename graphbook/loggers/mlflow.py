"""MLflowLogger: a run's metrics and hyperparameters in an MLflow tracking store on disk
(`sqlite:///path/mlflow.db`, or a folder as `file:///path/mlruns`); no server. Metrics are
keyed `<group>/<name>` at the run's step; the MLflow run is tagged with the store's run id.
(mlflow-skinny: pip install 'graphbook[mlflow]'.)"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from graphbook.loggers.base import LoggedRun, numbers
from graphbook.store import MetricRecord

RUN_TAG = "graphbook.run_id"
BATCH = 1000
"""Metrics per log_batch call (MLflow's limit)."""
FILE_STORE_ENV = "MLFLOW_ALLOW_FILE_STORE"


class MLflowLogger:
    """Logs to `tracking_uri` under `experiment`. Opening it for a run replaces the MLflow run
    tagged with the same store run id (deleted, then logged again from the store's rows), so a
    resumed run's MLflow history holds each step once."""

    def __init__(self, tracking_uri: str, experiment: str = "graphbook") -> None:
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self._client: Any = None
        self._run_id: str | None = None

    def open(self, run: LoggedRun, history: Sequence[MetricRecord]) -> None:
        client = self._client = _client(self.tracking_uri)
        experiment = client.get_experiment_by_name(self.experiment)
        experiment_id = (
            experiment.experiment_id
            if experiment is not None
            else client.create_experiment(self.experiment)
        )
        for old in client.search_runs([experiment_id], f"tags.`{RUN_TAG}` = '{run.id}'"):
            client.delete_run(old.info.run_id)
        created = client.create_run(
            experiment_id, run_name=run.name, tags={RUN_TAG: run.id, "graphbook.kind": run.kind}
        )
        self._run_id = created.info.run_id
        self._log(history)

    def log_hparams(self, hparams: Mapping[str, Any]) -> None:
        from mlflow.entities import Param

        params = [Param(str(k), str(v)[:6000]) for k, v in hparams.items()]
        for start in range(0, len(params), 100):
            self._client.log_batch(self._run_id, params=params[start : start + 100])

    def log_metrics(self, group: str, step: int, values: Mapping[str, Any]) -> None:
        self._log([MetricRecord("", group, step, dict(values), time.time())])

    def close(self) -> None:
        if self._client is not None and self._run_id is not None:
            self._client.set_terminated(self._run_id)
        self._client, self._run_id = None, None

    def _log(self, rows: Sequence[MetricRecord]) -> None:
        from mlflow.entities import Metric

        metrics = [
            Metric(f"{row.group}/{name}", value, int(row.time * 1000), row.steps_completed)
            for row in rows
            for name, value in numbers(row.metrics).items()
        ]
        for start in range(0, len(metrics), BATCH):
            self._client.log_batch(self._run_id, metrics=metrics[start : start + BATCH])


def _client(tracking_uri: str) -> Any:
    try:
        from mlflow.tracking import MlflowClient
    except ImportError as exc:
        raise ImportError(
            "MLflowLogger needs mlflow (or mlflow-skinny): pip install 'graphbook[mlflow]'"
        ) from exc
    if tracking_uri.startswith("file:"):
        # MLflow 3 refuses a folder store unless asked; a folder is what was asked for here.
        os.environ.setdefault(FILE_STORE_ENV, "true")
    return MlflowClient(tracking_uri=tracking_uri)
