"""What callbacks written for Determined and Lightning habits expect: the batch count
in `avg_metrics`, an early stop asked for from `on_validation_end`, EarlyStopping, a profiler
trace, the deterministic switch and bf16 autocast on the CPU."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

import graphbook.det as det
import graphbook.det.pytorch  # noqa: F401
import graphbook.trainer as gt
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


class Patient(LineTrial):
    """Validation loss over a fixed model: no improvement after the first validation."""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.early = gt.EarlyStopping(context, monitor="loss", patience=2)

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        x, y = batch
        return torch.nn.functional.mse_loss(self.model(x), y).detach()  # learns nothing

    def build_callbacks(self) -> dict[str, det.pytorch.PyTorchCallback]:
        return {"early": self.early}


def test_early_stopping_stops_after_patience_validations_without_improvement(
    home: Path,
) -> None:
    trial, result = train(Patient, min_validation_period=det.Batches(1), max_length=det.Epochs(5))
    assert result.batches == 3 and result.stopped and trial.early.stopped_at == 3
    assert trial.early.waited == 2
    checkpoint = Store().checkpoints(result.run_id)[-1]
    state = torch.load(Path(checkpoint.path) / "state.pt", weights_only=False)
    assert state["callbacks"]["early"]["waited"] == 2  # kept for a resume
    with pytest.raises(gt.TrainerError, match="patience must be >= 1"):
        gt.EarlyStopping(trial.context, patience=0)


def test_profiling_writes_a_chrome_trace_of_a_few_batches(home: Path) -> None:
    _, result = train(LineTrial, profiling_enabled=True)
    (trace,) = (home / "train" / result.run_id / "profile").glob("rank0.*.pt.trace.json")
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("name", "").startswith("ProfilerStep#") for e in events)


def test_deterministic_switch(home: Path) -> None:
    try:
        det.pytorch.init(deterministic=True)
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(False)


class Bf16(LineTrial):
    def __init__(self, context: Any) -> None:
        context.experimental.use_amp(dtype=torch.bfloat16)
        super().__init__(context)

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        assert self.model(batch[0]).dtype == torch.bfloat16
        return super().train_batch(batch, epoch_idx, batch_idx)


def test_bf16_autocast_on_the_cpu(home: Path) -> None:
    trial, result = train(Bf16, max_length=det.Batches(3))
    assert result.batches == 3 and trial.model.weight.dtype == torch.float32
