"""A training script whose batches take a while (0.2 s each), checkpointing after every one:
time for a test to interrupt a search in the middle of a trial."""

from __future__ import annotations

import time
from typing import Any

import torch
from torch import nn

import graphbook.det as det

Item = tuple[torch.Tensor, torch.Tensor]


class Ones(torch.utils.data.Dataset[Item]):
    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> Item:
        return torch.ones(1), torch.ones(1)


class SlowTrial(det.pytorch.PyTorchTrial):
    def __init__(self, context: Any) -> None:
        self.context = context
        self.model = context.wrap_model(nn.Linear(1, 1))
        self.opt = context.wrap_optimizer(
            torch.optim.SGD(self.model.parameters(), lr=context.hparams["learning_rate"])
        )

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> dict[str, Any]:
        time.sleep(0.2)
        data, labels = batch
        loss = nn.functional.mse_loss(self.model(data), labels)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss}

    def evaluate_batch(self, batch: Any) -> dict[str, Any]:
        data, labels = batch
        return {"loss": nn.functional.mse_loss(self.model(data), labels)}


if __name__ == "__main__":
    context = det.pytorch.init()
    trial = context.build_trial(SlowTrial)
    context.train(
        trial,
        det.pytorch.DataLoader(Ones(), batch_size=4),
        det.pytorch.DataLoader(Ones(), batch_size=4),
        min_checkpoint_period=det.Batches(1),
        max_length=det.Batches(8),
    )
