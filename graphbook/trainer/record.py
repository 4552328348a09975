"""The run's record in the store (rank 0's; the other ranks keep none): metric rows, written in
one transaction per FLUSH_SECONDS and before every checkpoint and the end, copied to the
metric loggers; the run's final status, a failure's error, and what `train` returns."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from graphbook.loggers.base import LoggedRun, MetricLoggers
from graphbook.plain import plain_metric
from graphbook.store import Store
from graphbook.trainer.metrics import Window, across_ranks, average, reduce_wrapped
from graphbook.trainer.parts import LoopState, RunParts
from graphbook.trainer.runs import RunStart

logger = logging.getLogger(__name__)
FLUSH_SECONDS = 1.0


@dataclass(frozen=True)
class TrainResult:
    """What `train` returns: the run, where it ended, and its last metrics."""

    run_id: str
    run_name: str
    batches: int
    epochs: float
    training: dict[str, Any]
    validation: dict[str, Any]
    checkpoint: str | None
    best_checkpoint: str | None
    stopped: bool = False

    def __getitem__(self, key: str) -> Any:
        """Validation metrics by name (`result["loss"]`), then training metrics."""
        if key in self.validation:
            return self.validation[key]
        return self.training[key]


class RunRecord:
    """The run's metric rows and status; `store` is None on every rank but 0."""

    def __init__(self, store: Store | None, run: RunStart, loggers: MetricLoggers) -> None:
        self.store = store
        self.run = run
        self.loggers = loggers
        self._rows: list[tuple[str, int, dict[str, Any]]] = []
        self._flushed = time.monotonic()

    def store_metrics(self, group: str, batches: int, metrics: dict[str, Any]) -> None:
        """Metrics go to the store in one transaction per FLUSH_SECONDS (a commit per report
        would cost more than small batches do), and before every checkpoint and the end."""
        if self.store is None:
            return
        self._rows.append((group, batches, metrics))
        self.loggers.log_metrics(group, batches, metrics)
        if time.monotonic() - self._flushed >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.store is not None and self._rows:
            self.store.report_metric_rows(self.run.run_id, self._rows)
        self._rows, self._flushed = [], time.monotonic()

    def truncate(self, rows: int) -> None:
        """Drop the rows past the first `rows` (those after the checkpoint resumed from)."""
        if self.store is not None:
            self.store.truncate_metrics(self.run.run_id, rows)

    def open_loggers(self, hparams: Any) -> None:
        """Rank 0's loggers start from the rows the store kept (a resume's, up to its
        checkpoint), so a step logged after the checkpoint before a kill is not there twice."""
        run = self.run
        if self.store is None or not self.loggers:
            return
        history = self.store.metrics([run.run_id])
        self.loggers.open(LoggedRun(run.run_id, run.name, "train"), history, hparams)

    def completed(self, counts: dict[str, Any]) -> None:
        if self.store is not None:
            self.flush()
            self.store.finish_run(self.run.run_id, "completed", counts)

    def stopped(self) -> None:
        if self.store is not None:
            self.flush()
            self.store.set_status(self.run.run_id, "stopped")

    def keep(self) -> None:
        """A refused resume leaves the run as it was (its status, counts and error)."""
        if self.store is None or self.run.previous_status is None:
            return
        try:
            self.store.set_status(self.run.run_id, self.run.previous_status)
        except Exception:
            logger.exception("could not restore the status of run %s", self.run.run_id)

    def failed(self, exc: BaseException, counts: dict[str, Any] | None) -> None:
        """`counts` None: failing before the checkpoint was loaded, the run is still where
        it was."""
        if self.store is None:
            return
        try:
            self.flush()
            if counts is None:
                counts = self.store.get_run(self.run.run_id).counts
            self.store.finish_run(self.run.run_id, "failed", counts, f"{type(exc).__name__}: {exc}")
        except Exception:
            logger.exception("could not record the failure of run %s", self.run.run_id)


def report(parts: RunParts, state: LoopState, window: Window, record: RunRecord) -> None:
    """Average the training metrics since the last report, across ranks, and record them."""
    batches = window.take()
    if not batches:
        return
    averaged = across_ranks(parts.collective, average(batches), len(batches))
    metrics = {**averaged, **reduce_wrapped(parts.collective, parts.context.reducers, True)}
    state.training = plain_metric(metrics)
    state.last_report = state.batches
    record.store_metrics("training", state.batches, state.training)
    # Determined's callbacks read the period's batch count from avg_metrics.
    parts.call("on_training_workload_end", {**averaged, "batches": len(batches)}, batches)


def counts(parts: RunParts, state: LoopState) -> dict[str, Any]:
    """The run's progress as the store shows it."""
    return {
        "batches_completed": state.batches,
        "total_batches": parts.length,
        "epochs": round(state.batches / parts.epoch_length, 3),
    }


def summary(run: RunStart, state: LoopState) -> str:
    shown = " ".join(f"{k}={v:.4g}" for k, v in state.validation.items() if isinstance(v, float))
    return f"trained run {run.run_id}: {state.batches} batches; validation {shown or '-'}"


def result(run: RunStart, state: LoopState, epoch_length: int, stopped: bool) -> TrainResult:
    return TrainResult(
        run_id=run.run_id,
        run_name=run.name,
        batches=state.batches,
        epochs=state.batches / epoch_length,
        training=dict(state.training),
        validation=dict(state.validation),
        checkpoint=state.latest_checkpoint,
        best_checkpoint=state.best_checkpoint,
        stopped=stopped,
    )
