"""What one attempt at training is made of, shared by the loop and its collaborators (validation,
saving, the run's record): the trial and its context, the process's place among the ranks, the
settings, the callbacks, the display; and the state a checkpoint saves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from graphbook.durable.distributed import Collective
from graphbook.loggers.base import MetricLogger
from graphbook.trainer.checkpoints import Retention
from graphbook.trainer.context import PyTorchTrialContext, Session
from graphbook.trainer.progress import Display
from graphbook.trainer.trial import PyTorchCallback, PyTorchTrial
from graphbook.trainer.units import TrainUnit


@dataclass(frozen=True)
class FitSettings:
    max_length: TrainUnit
    validation_period: TrainUnit | None
    checkpoint_period: TrainUnit | None
    reporting_period: TrainUnit
    retention: Retention
    step_zero_validation: bool = False
    test_mode: bool = False
    progress: bool = True
    profile: bool = False
    loggers: tuple[MetricLogger, ...] = ()


@dataclass
class LoopState:
    """Where the run is; saved in every checkpoint."""

    batches: int = 0
    last_report: int = 0
    last_validation: int = -1
    last_checkpoint: int = -1
    best_value: float | None = None
    best_checkpoint: str | None = None
    latest_checkpoint: str | None = None
    training: dict[str, Any] = field(default_factory=dict)
    validation: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RankState:
    """What each process adds to a checkpoint."""

    rng: dict[str, Any]
    reducers: dict[str, Any]
    window: list[dict[str, Any]]
    grads: list[list[torch.Tensor | None]] | None = None
    """Gradients accumulated and not yet stepped on (aggregation_frequency > 1, or a trial
    that steps every few batches itself): each model's, by parameter; None when there are
    none. Each process's own: under DDP they are exchanged only at the step."""


@dataclass(frozen=True)
class RunParts:
    """One process's attempt: what every collaborator of the loop reads."""

    trial: PyTorchTrial
    context: PyTorchTrialContext
    collective: Collective
    settings: FitSettings
    callbacks: dict[str, PyTorchCallback]
    display: Display
    epoch_length: int
    length: int
    """Batches to train in all (1 in test mode)."""

    @property
    def session(self) -> Session:
        return self.context._session

    @property
    def rank(self) -> int:
        return self.collective.rank

    def call(self, hook: str, *args: Any) -> None:
        """Call `hook` on every callback, in order."""
        for callback in self.callbacks.values():
            getattr(callback, hook)(*args)
