"""ShapesNet trained through the Trainer API: a PyTorchTrial over generated shape images (random
JPEG quality as augmentation), validated on held-out images, the best checkpoint registered as
a model version that the image workflow's TrainedModel node can load.

    python -m graphbook.examples.train_shapes --register shapes-trained
    graphbook runs --kind train; graphbook metrics RUN_ID

The net pools its last features by their maximum and standardises each image first
(`ShapesNet("max", standardise=True)`): with the shipped net's mean pooling the same 282
batches end near 75 % (docs/trainer.md has the measurements).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

import graphbook.det as det
from graphbook.batch_process import client
from graphbook.examples.shapes import HOLDOUT_SEED_OFFSET, ShapesNet, _make_tensors
from graphbook.trainer import PyTorchTrialContext, TrainResult

RUN_NAME = "examples/train_shapes"


class ShapesTrial(det.pytorch.PyTorchTrial):
    def __init__(self, context: PyTorchTrialContext) -> None:
        self.context = context
        hparams = context.hparams
        self.model = context.wrap_model(
            ShapesNet(hparams.get("pool", "avg"), standardise=hparams.get("standardise", False))
        )
        self.opt = context.wrap_optimizer(
            torch.optim.Adam(self.model.parameters(), lr=context.hparams["learning_rate"])
        )
        context.wrap_lr_scheduler(
            torch.optim.lr_scheduler.CosineAnnealingLR(self.opt, T_max=context.hparams["epochs"]),
            det.pytorch.LRScheduler.StepMode.STEP_EVERY_EPOCH,
        )

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> dict[str, Any]:
        images, labels = batch
        loss = nn.functional.cross_entropy(self.model(images), labels)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return {"loss": loss}

    def evaluate_batch(self, batch: Any) -> dict[str, Any]:
        images, labels = batch
        logits = self.model(images)
        return {
            "validation_loss": nn.functional.cross_entropy(logits, labels),
            "accuracy": (logits.argmax(1) == labels).float().mean(),
        }


def datasets(count: int, seed: int) -> tuple[Any, Any]:
    train = torch.utils.data.TensorDataset(*_make_tensors(count, seed, augment=True))
    holdout = max(count // 5, 120)
    val = torch.utils.data.TensorDataset(
        *_make_tensors(holdout, seed + HOLDOUT_SEED_OFFSET, augment=False)
    )
    return train, val


EPOCHS = 6
COUNT = 3000


def train(
    epochs: int = EPOCHS,
    count: int = COUNT,
    seed: int = 0,
    batch_size: int = 64,
    start_over: bool = False,
) -> TrainResult:
    hparams = {
        "learning_rate": 3e-3,
        "epochs": epochs,
        "global_batch_size": batch_size,
        "pool": "max",
        "standardise": True,
    }
    context = det.pytorch.init(hparams=hparams, seed=seed, run_name=RUN_NAME, start_over=start_over)
    train_set, val_set = datasets(count, seed)
    size = context.distributed.shard_batch_size(batch_size)
    trial = context.build_trial(ShapesTrial)
    return context.train(
        trial,
        det.pytorch.DataLoader(train_set, batch_size=size, shuffle=True),
        det.pytorch.DataLoader(val_set, batch_size=size),
        min_validation_period=det.Epochs(1),
        min_checkpoint_period=det.Epochs(1),
        max_length=det.Epochs(epochs),
        searcher_metric="validation_loss",
    )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("--count", type=int, default=COUNT, help="training images")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--register", metavar="MODEL", help="register the best checkpoint as MODEL")
    p.add_argument("--start-over", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    started = time.perf_counter()
    result = train(args.epochs, args.count, args.seed, start_over=args.start_over)
    elapsed = time.perf_counter() - started
    best = result.best_checkpoint or result.checkpoint
    accuracy = float(result.validation["accuracy"])
    print(
        f"run {result.run_id}: held-out accuracy {accuracy:.4f} after {result.epochs:g} "
        f"epochs ({elapsed:.0f} s); best checkpoint {best}{_accuracy_of(best, accuracy)}"
    )
    if args.register and best is not None:
        version = client.create_model(args.register).register_version(best)
        print(f"registered {best} as model {args.register!r} version {version.version}")
    return 0


def _accuracy_of(checkpoint: str | None, final: float) -> str:
    """The best checkpoint's own held-out accuracy, when it is not the final one."""
    if checkpoint is None:
        return ""
    validation = client.get_checkpoint(checkpoint).metadata.get("validation") or {}
    accuracy = validation.get("accuracy", final)
    return "" if accuracy == final else f" (held-out accuracy {accuracy:.4f})"


if __name__ == "__main__":
    sys.exit(main())
