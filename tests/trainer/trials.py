"""Tiny trials for the trainer tests."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

import graphbook.det as det
import graphbook.det.pytorch  # noqa: F401


class Line(torch.utils.data.Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """y = 2x + 1 on `count` points."""

    def __init__(self, count: int = 12) -> None:
        self.x = torch.linspace(-1, 1, count).unsqueeze(1)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[index], 2 * self.x[index] + 1


class Recorder(det.pytorch.PyTorchCallback):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_training_epoch_start(self, epoch_idx: int) -> None:
        self.events.append(("epoch_start", epoch_idx))

    def on_training_epoch_end(self, epoch_idx: int) -> None:
        self.events.append(("epoch_end", epoch_idx))

    def on_validation_end(self, metrics: dict[str, Any]) -> None:
        self.events.append(("validated", None))

    def on_checkpoint_upload_end(self, uuid: str) -> None:
        self.events.append(("checkpoint", uuid.rsplit("-", 1)[1]))

    def on_training_workload_end(self, avg: dict[str, Any], batches: list[Any]) -> None:
        self.events.append(("report", len(batches)))


class LineTrial(det.pytorch.PyTorchTrial):
    def __init__(self, context: Any, wrap_optimizer: bool = True) -> None:
        self.context = context
        self.model = context.wrap_model(nn.Linear(1, 1))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=context.hparams.get("lr", 0.1))
        if wrap_optimizer:
            context.wrap_optimizer(self.opt)
        self.recorder = Recorder()

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        x, y = batch
        loss = nn.functional.mse_loss(self.model(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return loss

    def evaluate_batch(self, batch: Any) -> dict[str, Any]:
        x, y = batch
        return {"loss": nn.functional.mse_loss(self.model(x), y), "count": len(x)}

    def build_callbacks(self) -> dict[str, det.pytorch.PyTorchCallback]:
        return {"recorder": self.recorder}

    def events(self, kind: str) -> list[Any]:
        return [value for name, value in self.recorder.events if name == kind]


def loaders(batch_size: int = 4, count: int = 12) -> tuple[Any, Any]:
    return (
        det.pytorch.DataLoader(Line(count), batch_size=batch_size, shuffle=True),
        det.pytorch.DataLoader(Line(count), batch_size=batch_size),
    )
