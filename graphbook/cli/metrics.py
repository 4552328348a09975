"""Metric loggers named on the command line (`run --logger csv:DIR`, `runs export --to csv DIR`),
and what `graphbook run` records in the run store: the run, and its metric rows, once one of
its nodes reports metrics or a logger is given (a run that does neither writes nothing)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphbook.events import Event, NodeError, NodeMetrics, RunFinished, RunStarted, Sink
from graphbook.runmetrics import Row, RunMetricRows
from graphbook.store import RunKind, Store, data_home

if TYPE_CHECKING:
    from graphbook.loggers import MetricLogger, MetricLoggers

EXPORTS = ("csv", "mlflow", "tensorboard")
"""The formats a run's metrics are written in, each through its metric logger."""
STORE_FILE = "graphbook.sqlite"
KIND: RunKind = "workflow"


def exporter(kind: str, destination: str) -> MetricLogger:
    """The metric logger that writes `kind` to `destination` (imported only when one is used)."""
    from graphbook.loggers import CSVLogger, MLflowLogger, TensorBoardLogger

    if kind == "csv":
        return CSVLogger(destination)
    if kind == "tensorboard":
        return TensorBoardLogger(destination)
    uri = destination if "://" in destination else Path(destination).resolve().as_uri()
    return MLflowLogger(uri)


def logger_spec(text: str) -> tuple[str, str]:
    """`--logger KIND:DESTINATION` as (kind, destination): `csv:runs/csv`, `tensorboard:tb`,
    `mlflow:mlruns` or `mlflow:sqlite:///m.db`."""
    kind, _, destination = text.partition(":")
    if kind not in EXPORTS or not destination:
        raise argparse.ArgumentTypeError(
            f"expected KIND:DESTINATION with KIND one of {', '.join(EXPORTS)} (csv:DIR, "
            f"tensorboard:DIR, mlflow:DIR or mlflow:URI), got {text!r}"
        )
    return kind, destination


class RunRecording:
    """A sink in front of the run's own: records the run in the store and writes its metric
    rows there and through the loggers, starting with the first metrics a node reports (or at
    once with loggers). The engine's figures of each node and the run (runmetrics.py) are held
    until then, so a run without metrics opens no store. Call `close()` when the run is over."""

    def __init__(
        self,
        sink: Sink,
        loggers: Sequence[tuple[str, str]],
        workflow: str,
        home: Path | None = None,
    ) -> None:
        self.sink = sink
        self.specs = list(loggers)
        self.workflow = workflow
        self.home = home
        self.store: Store | None = None
        self.loggers: MetricLoggers | None = None
        self.rows = RunMetricRows()
        self._held: list[Row] = []
        self._started: RunStarted | None = None
        self._error: str | None = None

    def __call__(self, event: Event) -> None:
        self.sink(event)
        rows = self.rows(event)
        if isinstance(event, RunStarted):
            self._started = event
            if self.specs:
                self._open(event)
        elif isinstance(event, NodeMetrics) and self.store is None and self._started:
            self._open(self._started)
        elif isinstance(event, NodeError) and self._error is None:
            self._error = f"node {event.node_id!r}: {event.error}"
        self._write(rows, event)
        if isinstance(event, RunFinished):
            self._finish(event)

    def close(self) -> None:
        if self.loggers is not None:
            self.loggers.close()
            self.loggers = None

    def _open(self, started: RunStarted) -> None:
        from graphbook.loggers import LoggedRun, MetricLoggers

        home = self.home if self.home is not None else data_home()
        home.mkdir(parents=True, exist_ok=True)
        self.store = Store(home / STORE_FILE)
        config: dict[str, Any] = {"mode": started.mode, "node": started.node, "params": {}}
        self.store.start_run(KIND, self.workflow, config, run_id=started.run_id)
        fan = MetricLoggers([exporter(kind, where) for kind, where in self.specs])
        fan.open(LoggedRun(started.run_id, self.workflow, KIND), [], {})
        self.loggers = fan

    def _write(self, rows: list[Row], event: Event) -> None:
        """Write `rows` with those held; a node's figures as it ends are held for the next
        reported metrics or the run's end (one transaction, not one per node)."""
        if self.store is None or not isinstance(event, NodeMetrics | RunFinished):
            self._held += rows
            return
        rows, self._held = self._held + rows, []
        if not rows or self._started is None:
            return
        self.store.report_metric_rows(self._started.run_id, rows)
        if self.loggers is not None:
            for group, step, values in rows:
                self.loggers.log_metrics(group, step, values)

    def _finish(self, event: RunFinished) -> None:
        if self.store is not None:
            status, counts = event.status, event.counts
            self.store.finish_run(event.run_id, status, counts, self._error, event.paused)
        self.close()
