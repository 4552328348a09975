"""The Trainer API against the same training loop written by hand, and the cost of one
checkpoint.

    python -m bench.trainer [--quick] [--reps 5]

Everything runs in this one process (one process, one torch thread), repetitions interleaved.
Wall time and the process's CPU time are both measured: on a shared machine the wall times
scatter, and the CPU time shows what the API itself costs.
- shapes: ShapesNet on in-memory 64x64 images (batch 64, Adam, shuffled), one validation pass
  at the end: by hand (DataLoader, the usual loop, the mean loss every 10 batches), and through
  `context.train` checkpointing only at the end, every epoch, and every 5 batches;
- trivial: the same with a 16-16-1 MLP on 16 numbers per item, where the loop's own cost shows;
- both also through `context.train` with a CSVLogger (checkpointing at the end): the logger's
  cost beside the same run without one.
Each contender runs for 1 and for 3 epochs: the difference, per batch, is its steady throughput
(what a long run sees), and what is left of the 1-epoch run is its fixed cost per run (the
store, the final validation and checkpoint). The checkpoint cost is the extra time of "every
5 batches" over "at the end", per checkpoint (a ShapesNet checkpoint is about 0.6 MB: model,
Adam state, RNG states; fsync and a SQLite commit).
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
from graphbook.loggers import CSVLogger

BATCH = 64
SHORT, LONG = 1, 3
TRIVIAL = 32
"""Items of the trivial task per ShapesNet image (its batches are much cheaper)."""
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


def by_hand(build: Build, data: tuple[TensorDataset, TensorDataset], epochs: int) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    torch.manual_seed(0)
    model = build()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(
        data[0], batch_size=BATCH, shuffle=True, generator=torch.Generator().manual_seed(0)
    )
    losses: list[torch.Tensor] = []
    for _ in range(epochs):
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


def through_api(
    build: Build,
    data: tuple[TensorDataset, TensorDataset],
    every: Any,
    epochs: int,
    csv: bool = False,
) -> Timing:
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
            max_length=det.Epochs(epochs),
            min_checkpoint_period=every,
            checkpoint_policy="all",
            progress=False,
            loggers=[CSVLogger(os.path.join(home, "csv"))] if csv else None,
        )
        return time.perf_counter() - wall, time.process_time() - cpu


Run = Callable[[int], Timing]


def contenders(count: int) -> dict[str, Run]:
    shapes, trivial = shapes_data(count), trivial_data(count * TRIVIAL)
    return {
        "shapes: by hand": lambda e: by_hand(ShapesNet, shapes, e),
        "shapes: trainer, checkpoint at the end": lambda e: through_api(ShapesNet, shapes, None, e),
        "shapes: trainer, every epoch": lambda e: through_api(ShapesNet, shapes, det.Epochs(1), e),
        "shapes: trainer, every 5 batches": lambda e: through_api(
            ShapesNet, shapes, det.Batches(5), e
        ),
        "shapes: trainer + CSVLogger, at the end": lambda e: through_api(
            ShapesNet, shapes, None, e, csv=True
        ),
        "trivial: by hand": lambda e: by_hand(mlp, trivial, e),
        "trivial: trainer, checkpoint at the end": lambda e: through_api(mlp, trivial, None, e),
        "trivial: trainer + CSVLogger, at the end": lambda e: through_api(
            mlp, trivial, None, e, csv=True
        ),
    }


def measure(reps: int, count: int) -> dict[tuple[str, int], list[Timing]]:
    runs = contenders(count)
    for run in runs.values():  # warm-up: first-call allocations, imports
        run(SHORT)
    seconds: dict[tuple[str, int], list[Timing]] = {}
    for _ in range(reps):
        for name, run in runs.items():
            for epochs in (SHORT, LONG):
                seconds.setdefault((name, epochs), []).append(run(epochs))
    return seconds


def summarise(timings: dict[tuple[str, int], list[Timing]], count: int) -> None:
    names = list(dict.fromkeys(name for name, _ in timings))
    med = {
        key: (median([w for w, _ in v]), median([c for _, c in v])) for key, v in timings.items()
    }
    per_epoch = {n: -(-count * (TRIVIAL if n.startswith("trivial") else 1) // BATCH) for n in names}
    steady: dict[str, tuple[float, float]] = {}
    rows = []
    for name in names:
        batches = per_epoch[name] * (LONG - SHORT)
        wall = (med[(name, LONG)][0] - med[(name, SHORT)][0]) / batches
        cpu = (med[(name, LONG)][1] - med[(name, SHORT)][1]) / batches
        steady[name] = (wall, cpu)
        hand = steady[name.split(":")[0] + ": by hand"]
        fixed = med[(name, SHORT)][0] - wall * per_epoch[name] * SHORT
        rows.append(
            [
                name,
                1 / wall,
                wall * 1e3,
                cpu * 1e3,
                f"{wall / hand[0]:.3f}",
                f"{cpu / hand[1]:.3f}",
                fixed,
                spread([w for w, _ in timings[(name, LONG)]]),
            ]
        )
    header = [
        "contender",
        "batches/s",
        "ms/batch",
        "CPU ms/batch",
        "wall / by hand",
        "CPU / by hand",
        "fixed s",
        f"{LONG}-epoch wall range",
    ]
    print(table(header, rows))
    extra = per_epoch["shapes: by hand"] * LONG // 5 - 1
    ends, fives = "shapes: trainer, checkpoint at the end", "shapes: trainer, every 5 batches"
    each = med[(fives, LONG)][0] - med[(ends, LONG)][0]
    each_cpu = med[(fives, LONG)][1] - med[(ends, LONG)][1]
    print(
        f"\none ShapesNet checkpoint: {each / extra * 1e3:.1f} ms wall, "
        f"{each_cpu / extra * 1e3:.1f} ms CPU ({extra} extra checkpoints in {LONG} epochs)"
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
        f"# trainer: {machine()}; {count} images, {SHORT} and {LONG} epochs, batch {BATCH}, "
        f"1 torch thread; load average {load:.1f}"
    )
    summarise(measure(reps, count), count)


if __name__ == "__main__":
    main()
