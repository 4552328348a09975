"""Callbacks people reach for, ready to use: `EarlyStopping` (Lightning's, as a
PyTorchCallback whose state is checkpointed, so a resumed run keeps counting)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from graphbook.trainer.errors import TrainerError
from graphbook.trainer.trial import PyTorchCallback

if TYPE_CHECKING:
    from graphbook.trainer.context import PyTorchTrialContext


class EarlyStopping(PyTorchCallback):
    """Stop training once the validation metric `monitor` has not improved by more than
    `min_delta` for `patience` validations in a row (`mode` "min": smaller is better, "max":
    larger). The run stops at that validation, checkpoints and completes.

        def build_callbacks(self):
            return {"early_stop": gt.EarlyStopping(self.context, monitor="loss", patience=3)}
    """

    def __init__(
        self,
        context: PyTorchTrialContext,
        monitor: str = "validation_loss",
        mode: Literal["min", "max"] = "min",
        patience: int = 3,
        min_delta: float = 0.0,
    ) -> None:
        if mode not in ("min", "max"):
            raise TrainerError(f"EarlyStopping: mode must be 'min' or 'max', got {mode!r}")
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise TrainerError(f"EarlyStopping: patience must be >= 1, got {patience!r}")
        if not isinstance(min_delta, int | float) or min_delta < 0:
            raise TrainerError(f"EarlyStopping: min_delta must be >= 0, got {min_delta!r}")
        self.context = context
        self.monitor = monitor
        self.mode = mode
        self.patience = patience
        self.min_delta = float(min_delta)
        self.best: float | None = None
        self.waited = 0
        self.stopped_at: int | None = None
        """The batch count at which it asked to stop (None: it has not)."""

    def on_validation_end(self, metrics: dict[str, Any]) -> None:
        if self.monitor not in metrics:
            raise TrainerError(
                f"EarlyStopping monitors {self.monitor!r}, which is not among the validation "
                f"metrics ({', '.join(sorted(metrics)) or 'none'})"
            )
        value = float(metrics[self.monitor])
        if self._improved(value):
            self.best, self.waited = value, 0
            return
        self.waited += 1
        if self.waited >= self.patience:
            self.stopped_at = self.context.current_train_batch() + 1
            self.context.set_stop_requested(True)

    def _improved(self, value: float) -> bool:
        if math.isnan(value):
            return False
        if self.best is None:
            return True
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def state_dict(self) -> dict[str, Any]:
        return {"best": self.best, "waited": self.waited, "stopped_at": self.stopped_at}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.best = state_dict["best"]
        self.waited = state_dict["waited"]
        self.stopped_at = state_dict.get("stopped_at")
