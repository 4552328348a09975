"""A training script for the resume tests: a shuffled loader, random augmentation (python,
numpy and torch RNGs), dropout, an LR scheduler, a callback with state and a reducer; it can
kill itself (SIGKILL or SIGTERM) at named points, once each, and writes what it ended with."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

import graphbook.det as det

FAULTS = os.environ.get("FAULTS", "")  # e.g. "train:7:KILL,save:12:KILL,train:9:TERM"
MARKS = Path(os.environ.get("FAULT_MARKS", "."))


def fault(point: str, batch: int) -> None:
    if os.environ.get("RANK", "0") != "0":
        return  # under torchrun, only rank 0 misbehaves
    for spec in filter(None, FAULTS.split(",")):
        where, at, how = spec.split(":")
        mark = MARKS / f"{where}-{at}-{how}"
        if where == point and int(at) == batch and not mark.exists():
            mark.touch()
            os.kill(os.getpid(), signal.SIGKILL if how == "KILL" else signal.SIGTERM)


class Noisy(torch.utils.data.Dataset[tuple[torch.Tensor, torch.Tensor]]):
    def __init__(self, count: int = 48) -> None:
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(count, 4, generator=generator)
        self.y = (self.x.sum(1, keepdim=True) > 0).float()

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        jitter = random.random() * 0.01 + float(np.random.rand()) * 0.01
        return self.x[index] + torch.randn(4) * 0.05 + jitter, self.y[index]


class Counter(det.pytorch.PyTorchCallback):
    def __init__(self) -> None:
        self.epochs = 0

    def on_training_epoch_end(self, epoch_idx: int) -> None:
        self.epochs += 1

    def on_checkpoint_save_start(self, checkpoint: dict[str, Any]) -> None:
        fault("save", checkpoint["loop"]["batches"])

    def on_checkpoint_write_end(self, checkpoint_dir: str) -> None:
        fault("write", int(checkpoint_dir.rsplit("-", 1)[1]))

    def state_dict(self) -> dict[str, Any]:
        return {"epochs": self.epochs}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.epochs = state_dict["epochs"]


class Trial(det.pytorch.PyTorchTrial):
    def __init__(self, context: Any) -> None:
        self.context = context
        self.model = context.wrap_model(
            nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 1))
        )
        self.opt = context.wrap_optimizer(torch.optim.Adam(self.model.parameters(), lr=0.01))
        self.sched = context.wrap_lr_scheduler(
            torch.optim.lr_scheduler.StepLR(self.opt, 5, gamma=0.9),
            det.pytorch.LRScheduler.StepMode.STEP_EVERY_BATCH,
        )
        self.seen = context.wrap_reducer(lambda values: float(sum(values)), name="seen")
        self.counter = Counter()

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        fault("train", batch_idx)
        x, y = batch
        loss = nn.functional.binary_cross_entropy_with_logits(self.model(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        self.seen.update(float(x.sum()))
        return {"loss": loss}

    def evaluate_batch(self, batch: Any, batch_idx: int) -> Any:
        fault("val", self.context.current_train_batch() + 1)
        x, y = batch
        logits = self.model(x)
        accuracy = ((logits > 0).float() == y).float().mean()
        return {
            "loss": nn.functional.binary_cross_entropy_with_logits(logits, y),
            "accuracy": accuracy,
        }

    def build_callbacks(self) -> dict[str, Any]:
        return {"counter": self.counter}


def digest(model: nn.Module) -> str:
    h = hashlib.sha256()
    for key, value in sorted(model.state_dict().items()):
        h.update(key.encode())
        h.update(value.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def loggers() -> list[Any]:
    """$LOGS: a folder for a CSV, a TensorBoard and an MLflow logger (csv/, tb/, mlruns/)."""
    if not os.environ.get("LOGS"):
        return []
    from graphbook.loggers import CSVLogger, MLflowLogger, TensorBoardLogger

    logs = Path(os.environ["LOGS"])
    return [
        CSVLogger(logs / "csv"),
        TensorBoardLogger(logs / "tb"),
        MLflowLogger((logs / "mlruns").resolve().as_uri()),
    ]


if __name__ == "__main__":
    context = det.pytorch.init(
        seed=int(os.environ.get("SEED", "5")),
        aggregation_frequency=int(os.environ.get("AGGREGATE", "1")),
    )
    batch = context.distributed.shard_batch_size(int(os.environ.get("BATCH", "8")))
    train = det.pytorch.DataLoader(Noisy(), batch_size=batch, shuffle=True)
    val = det.pytorch.DataLoader(Noisy(16), batch_size=batch)
    trial = context.build_trial(Trial)
    result = context.train(
        trial,
        train,
        val,
        min_validation_period=det.Batches(int(os.environ.get("VALIDATE", "4"))),
        min_checkpoint_period=det.Batches(int(os.environ.get("CHECKPOINT", "3"))),
        max_length=det.Epochs(int(os.environ.get("EPOCHS", "4"))),
        reporting_period=det.Batches(2),
        checkpoint_policy="all",
        progress=False,
        loggers=loggers(),
    )
    if context.distributed.rank == 0:
        out = {
            "digest": digest(trial.model),
            "validation": result.validation,
            "training": result.training,
            "epochs": trial.counter.epochs,
            "run_id": result.run_id,
            "batches": result.batches,
        }
        Path(os.environ["RESULT"]).write_text(json.dumps(out))
    sys.exit(0)
