"""Resume in the hard cases: a dataset that augments with its own unseeded generator,
a model whose shapes changed, gradients accumulated over batches when the checkpoint is taken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

import graphbook.det as det
import graphbook.det.pytorch  # noqa: F401
import graphbook.trainer as gt
from graphbook.store import Store

from .trials import Line, LineTrial


class Augmented(Line):
    """Line, jittered by a generator of its own that nobody seeds (a common way to augment)."""

    def __init__(self, count: int = 12) -> None:
        super().__init__(count)
        self.rng = np.random.default_rng()

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        x, y = super().__getitem__(index)
        return x + float(self.rng.normal()) * 0.01, y


class Crash(LineTrial):
    crash_at = 4

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        if batch_idx == self.crash_at:
            raise RuntimeError("boom")
        return super().train_batch(batch, epoch_idx, batch_idx)


def fit(trial_cls: type[Any], dataset: Any, **options: Any) -> Any:
    context = det.pytorch.init(hparams={"lr": 0.1}, seed=1, run_name="hard")
    trial = context.build_trial(trial_cls)
    return context.train(
        trial,
        det.pytorch.DataLoader(dataset, batch_size=4, shuffle=True),
        det.pytorch.DataLoader(Line(), batch_size=4),
        max_length=det.Epochs(2),
        min_checkpoint_period=det.Batches(2),
        progress=False,
        **options,
    )


def test_a_dataset_augmenting_with_its_own_generator_resumes(home: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        fit(Crash, Augmented())
    (run,) = Store().list_runs("train")
    result = fit(LineTrial, Augmented())  # a new unseeded generator: the same data
    assert result.run_id == run.id and result.batches == 6
    assert Store().get_run(run.id).status == "completed"


def test_changed_data_is_refused_naming_what_changed(home: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        fit(Crash, Augmented())
    with pytest.raises(gt.TrainingResumeError, match=r"train_data had 12 items, now 16"):
        fit(LineTrial, Augmented(16))
    shifted = Augmented()
    shifted.x = shifted.x + 1
    with pytest.raises(gt.TrainingResumeError, match=r"train_data's data differs in \.x\b"):
        fit(LineTrial, shifted)
    (run,) = Store().list_runs("train")
    assert run.status == "failed" and run.counts["batches_completed"] == 4


class Wide(LineTrial):
    width = 8

    def __init__(self, context: Any) -> None:
        self.context = context
        self.model = context.wrap_model(
            nn.Sequential(nn.Linear(1, self.width), nn.ReLU(), nn.Linear(self.width, 1))
        )
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(), lr=0.05))

    def build_callbacks(self) -> dict[str, Any]:
        return {}


class WideCrash(Wide):
    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        if batch_idx == 3:
            raise RuntimeError("boom")
        return super().train_batch(batch, epoch_idx, batch_idx)


class Wider(Wide):
    width = 16


def test_a_changed_model_is_refused_naming_its_shapes_and_the_record_stays_true(
    home: Path,
) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        fit(WideCrash, Line())
    (run,) = Store().list_runs("train")
    assert (run.status, run.counts["batches_completed"]) == ("failed", 3)
    with pytest.raises(gt.TrainingResumeError) as refused:
        fit(Wider, Line())
    message = str(refused.value)
    assert "the model's 0.weight was [8, 1], now [16, 1]" in message
    assert "train_data" not in message and "start_over=True" in message
    after = Store().get_run(run.id)
    assert (after.status, after.counts, after.error) == (run.status, run.counts, run.error)
    assert fit(Wide, Line()).run_id == run.id  # the same model resumes it
