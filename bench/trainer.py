"""The Trainer API against the same training loop written by hand, and the cost of one
checkpoint.

    python -m bench.trainer [--quick] [--reps 5]

Everything runs in this one process (one process, one torch thread), repetitions interleaved.
Wall time and the process's CPU time are both measured: on a shared machine the wall times
scatter, and the CPU time shows what the API itself costs.
- shapes: ShapesNet on in-memory 64x64 images (batch 64, Adam, shuffled), one validation pass
  at the end: by hand (DataLoader, the usual loop, the mean loss every 10 batches), and through
  `context.train` checkpointing only at the end, every epoch, and every 5 batches;
- trivial: the same with a 16-16-1 MLP on 16 numbers per item, where the loop's own cost shows.
The checkpoint cost is the extra time of "every 5 batches" over "at the end", per checkpoint
(a ShapesNet checkpoint is ≈ 0.6 MB: model, Adam state, RNG states; fsync and a SQLite commit).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import graphbook.det as det
from bench.common import machine, median, spread, table
from graphbook.examples.shapes import ShapesNet

BATCH = 64
EPOCHS = 2
Timing = tuple[float, float]
"""Wall seconds, CPU seconds."""
Build = Callable[[], nn.Module]


def shapes_data(count: int) -> tuple[TensorDataset, TensorDataset]:
    g = torch.Generator().manual_seed(0)
    train = TensorDataset(
        torch.rand(count, 3, 64, 64, generator=g), torch.randint(0, 3, (count,), generator=g)
    )
    val = TensorDataset(
        torch.rand(BATCH, 3, 64, 64, generator=g), torch.randint(0, 3, (BATCH,), generator=g)
    )
    return train, val


def trivial_data(count: int) -> tuple[TensorDataset, TensorDataset]:
    g = torch.Generator().manual_seed(0)
    train = TensorDataset(
        torch.randn(count, 16, generator=g), torch.randint(0, 2, (count,), generator=g)
    )
    return train, TensorDataset(train.tensors[0][:BATCH], train.tensors[1][:BATCH])


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))


def by_hand(build: Build, data: tuple[TensorDataset, TensorDataset]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    torch.manual_seed(0)
    model = build()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(
        data[0], batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0)
    )
    losses: list[torch.Tensor] = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            torch.autograd.backward(loss)
            optimizer.step()
            losses.append(loss.detach())
            if len(losses) == 10:
                logging.debug("loss %f", float(torch.stack(losses).mean()))
                losses = []
    model.eval()
    with torch.no_grad():
        for x, y in DataLoader(data[1], batch_size=BATCH):
            logging.debug("val %f", float(nn.functional.cross_entropy(model(x), y)))
    return time.perf_counter() - wall, time.process_time() - cpu


class Trial(det.pytorch.PyTorchTrial):
    build: Build

    def __init__(self, context: Any) -> None:
        self.context = context
        self.model = context.wrap_model(type(self).build())
        self.opt = context.wrap_optimizer(torch.optim.Adam(self.model.parameters(), lr=1e-3))

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        x, y = batch
        loss = nn.functional.cross_entropy(self.model(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(self.opt)
        return loss

    def evaluate_batch(self, batch: Any) -> Any:
        x, y = batch
        return nn.functional.cross_entropy(self.model(x), y)


def through_api(build: Build, data: tuple[TensorDataset, TensorDataset], every: Any) -> Timing:
    Trial.build = staticmethod(build)
    with tempfile.TemporaryDirectory() as home:
        os.environ["GRAPHBOOK_HOME"] = home
        wall, cpu = time.perf_counter(), time.process_time()
        context = det.pytorch.init(seed=0, run_name="bench")
        trial = context.build_trial(Trial)
        context.train(
            trial,
            det.pytorch.DataLoader(data[0], batch_size=BATCH, shuffle=True),
            det.pytorch.DataLoader(data[1], batch_size=BATCH),
            max_length=det.Epochs(EPOCHS),
            min_checkpoint_period=every,
            checkpoint_policy="all",
            progress=False,
        )
        return time.perf_counter() - wall, time.process_time() - cpu


def contenders(count: int) -> dict[str, Callable[[], Timing]]:
    shapes, trivial = shapes_data(count), trivial_data(count * 8)
    return {
        "shapes: by hand": lambda: by_hand(ShapesNet, shapes),
        "shapes: trainer, checkpoint at the end": lambda: through_api(ShapesNet, shapes, None),
        "shapes: trainer, every epoch": lambda: through_api(ShapesNet, shapes, det.Epochs(1)),
        "shapes: trainer, every 5 batches": lambda: through_api(ShapesNet, shapes, det.Batches(5)),
        "trivial: by hand": lambda: by_hand(mlp, trivial),
        "trivial: trainer, checkpoint at the end": lambda: through_api(mlp, trivial, None),
    }


def measure(reps: int, count: int) -> dict[str, list[Timing]]:
    runs = contenders(count)
    for run in runs.values():  # warm-up: first-call allocations, imports
        run()
    seconds: dict[str, list[Timing]] = {}
    for _ in range(reps):
        for name, run in runs.items():
            seconds.setdefault(name, []).append(run())
    return seconds


def summarise(timings: dict[str, list[Timing]], count: int) -> None:
    wall = {name: [w for w, _ in values] for name, values in timings.items()}
    cpu = {name: [c for _, c in values] for name, values in timings.items()}
    hand = {
        kind: (median(wall[f"{kind}: by hand"]), median(cpu[f"{kind}: by hand"]))
        for kind in ("shapes", "trivial")
    }
    rows = []
    for name in timings:
        kind = name.split(":")[0]
        batches = EPOCHS * -(-count * (8 if kind == "trivial" else 1) // BATCH)
        rows.append(
            [
                name,
                median(wall[name]),
                spread(wall[name]),
                batches / median(wall[name]),
                median(cpu[name]),
                f"{median(wall[name]) / hand[kind][0]:.3f}",
                f"{median(cpu[name]) / hand[kind][1]:.3f}",
            ]
        )
    header = [
        "contender",
        "wall s",
        "wall range",
        "batches/s",
        "CPU s",
        "wall / by hand",
        "CPU / by hand",
    ]
    print(table(header, rows))
    batches = EPOCHS * -(-count // BATCH)
    extra = batches // 5 - 1
    each = median(wall["shapes: trainer, every 5 batches"]) - median(
        wall["shapes: trainer, checkpoint at the end"]
    )
    each_cpu = median(cpu["shapes: trainer, every 5 batches"]) - median(
        cpu["shapes: trainer, checkpoint at the end"]
    )
    print(
        f"\none ShapesNet checkpoint: {each / extra * 1e3:.1f} ms wall, "
        f"{each_cpu / extra * 1e3:.1f} ms CPU ({extra} extra checkpoints)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer images and repetitions")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    count, reps = (640, 2) if args.quick else (1280, args.reps)
    load = os.getloadavg()[0]
    print(
        f"# trainer: {machine()}; {count} images x {EPOCHS} epochs, batch {BATCH}, "
        f"1 torch thread; load average {load:.1f}"
    )
    summarise(measure(reps, count), count)


if __name__ == "__main__":
    main()
