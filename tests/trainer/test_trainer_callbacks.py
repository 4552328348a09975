"""What callbacks written for Determined and Lightning habits expect (issue 28): the batch count
in `avg_metrics`, an early stop asked for from `on_validation_end`, EarlyStopping."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import graphbook.det as det
import graphbook.det.pytorch  # noqa: F401
from graphbook.store import Store

from .trials import LineTrial, loaders


def train(trial_cls: type[Any], name: str = "cb", **options: Any) -> tuple[Any, Any]:
    context = det.pytorch.init(hparams={"lr": 0.1}, seed=1, run_name=name)
    trial = context.build_trial(trial_cls)
    defaults: dict[str, Any] = {"max_length": det.Batches(7), "progress": False}
    return trial, context.train(trial, *loaders(), **{**defaults, **options})


class Counts(det.pytorch.PyTorchCallback):
    def __init__(self) -> None:
        self.batches: list[int] = []

    def on_training_workload_end(self, avg: dict[str, Any], batches: list[Any]) -> None:
        self.batches.append(avg["batches"])


class Counted(LineTrial):
    def build_callbacks(self) -> dict[str, det.pytorch.PyTorchCallback]:
        self.counts = Counts()
        return {"counts": self.counts}


def test_avg_metrics_count_the_batches_as_determined_does(home: Path) -> None:
    trial, result = train(Counted, reporting_period=det.Batches(4))
    assert trial.counts.batches == [4, 3]
    rows = Store().metrics([result.run_id], "training")
    assert all("batches" not in row.metrics for row in rows)  # not a curve of its own


class StopOnValidation(det.pytorch.PyTorchCallback):
    def __init__(self, context: Any) -> None:
        self.context = context

    def on_validation_end(self, metrics: dict[str, Any]) -> None:
        self.context.set_stop_requested(True)


class StoppedByCallback(LineTrial):
    def build_callbacks(self) -> dict[str, det.pytorch.PyTorchCallback]:
        return {"recorder": self.recorder, "stop": StopOnValidation(self.context)}


def test_a_stop_asked_for_on_validation_end_stops_at_once(home: Path) -> None:
    _, result = train(
        StoppedByCallback, min_validation_period=det.Batches(2), max_length=det.Batches(10)
    )
    assert result.stopped and result.batches == 2
    store = Store()
    assert [m.steps_completed for m in store.metrics([result.run_id], "validation")] == [2]
    assert [c.steps_completed for c in store.checkpoints(result.run_id)] == [2]
    assert store.get_run(result.run_id).status == "completed"
