"""torch_batch_process against the same loop written by hand with a DataLoader, and the cost of
one checkpoint.

    python -m bench.batch_process [--quick] [--reps 5]

Everything runs in this one process (one rank, one torch thread), repetitions interleaved.
Both wall time and the process's CPU time are measured: on a shared machine the wall times
scatter, and the CPU time is what shows what the API itself costs.
- inference: ShapesNet over in-memory 64x64 images, batch 64, predictions written to a file:
  by hand (DataLoader loop, one file at the end) and through torch_batch_process with no
  checkpoint until the end, with the default checkpoint_interval (5) and with 1;
- overhead: the same two loops with trivial work per batch (a sum), which shows what the API
  itself costs per batch, and what one checkpoint costs (commit of a small file, a reducer's
  state, a metrics row; fsync included).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

from bench.common import machine, median, spread, table
from graphbook.batch_process import MetricReducer, TorchBatchProcessor, torch_batch_process
from graphbook.batch_process.context import TorchBatchProcessorContext
from graphbook.examples.shapes import ShapesNet, load_model

BATCH = 64
NEVER = 10**9
Work = Callable[[torch.Tensor], torch.Tensor]


def images(count: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    return TensorDataset(torch.rand(count, 3, 64, 64, generator=generator))


class Count(MetricReducer):
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.count = 0

    def per_slot_reduce(self) -> int:
        return self.count

    def cross_slot_reduce(self, per_slot_metrics: list[int]) -> int:
        return sum(per_slot_metrics)


class Bench(TorchBatchProcessor):
    work: Work

    def __init__(self, context: TorchBatchProcessorContext) -> None:
        self.context = context
        self.count = context.wrap_reducer(Count(), name="count")
        self.rows: list[list[int]] = []

    def process_batch(self, batch: Any, batch_idx: int) -> None:
        with torch.inference_mode():
            self.rows.append(type(self).work(batch[0]).tolist())
        self.count.count += len(batch[0])

    def on_checkpoint_start(self) -> None:
        if self.rows:
            with self.context.upload_path() as folder:
                (folder / f"rows_{self.context.global_batch_idx}.json").write_text(
                    json.dumps(self.rows)
                )
            self.rows = []


Timing = tuple[float, float]
"""Wall seconds, CPU seconds."""


def by_hand(dataset: TensorDataset, work: Work, out: Path) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    rows = []
    with torch.inference_mode():
        for (batch,) in DataLoader(dataset, batch_size=BATCH):
            rows.append(work(batch).tolist())
    (out / "rows.json").write_text(json.dumps(rows))
    return time.perf_counter() - wall, time.process_time() - cpu


def through_api(dataset: TensorDataset, work: Work, interval: int) -> Timing:
    Bench.work = staticmethod(work)  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as home:
        os.environ["GRAPHBOOK_HOME"] = home
        wall, cpu = time.perf_counter(), time.process_time()
        torch_batch_process(Bench, dataset, batch_size=BATCH, checkpoint_interval=interval)
        return time.perf_counter() - wall, time.process_time() - cpu


def contenders(model: ShapesNet, out: Path) -> dict[str, Callable[[TensorDataset], Timing]]:
    def classify(batch: torch.Tensor) -> torch.Tensor:
        return model(batch).argmax(1)

    def trivial(batch: torch.Tensor) -> torch.Tensor:
        return batch.sum((1, 2, 3))

    return {
        "infer: by hand": lambda d: by_hand(d, classify, out),
        "infer: api, no checkpoint": lambda d: through_api(d, classify, NEVER),
        "infer: api, checkpoint every 5": lambda d: through_api(d, classify, 5),
        "infer: api, checkpoint every 1": lambda d: through_api(d, classify, 1),
        "trivial: by hand": lambda d: by_hand(d, trivial, out),
        "trivial: api, no checkpoint": lambda d: through_api(d, trivial, NEVER),
        "trivial: api, checkpoint every 1": lambda d: through_api(d, trivial, 1),
    }


def measure(reps: int, count: int) -> dict[str, list[Timing]]:
    dataset = images(count)
    seconds: dict[str, list[Timing]] = {}
    with tempfile.TemporaryDirectory() as out:
        runs = contenders(load_model(), Path(out))
        for run in runs.values():  # warm-up: first-call allocations, imports
            run(dataset)
        for _ in range(reps):
            for name, run in runs.items():
                seconds.setdefault(name, []).append(run(dataset))
    return seconds


def summarise(timings: dict[str, list[Timing]], count: int) -> None:
    wall = {name: [w for w, _ in values] for name, values in timings.items()}
    cpu = {name: [c for _, c in values] for name, values in timings.items()}
    hand = {kind: median(cpu[f"{kind}: by hand"]) for kind in ("infer", "trivial")}
    rows = [
        [
            name,
            median(wall[name]),
            spread(wall[name]),
            count / median(wall[name]),
            median(cpu[name]),
            f"{(median(cpu[name]) / hand[name.split(':')[0]] - 1) * 100:+.1f} %",
        ]
        for name in timings
    ]
    header = ["contender", "wall s", "wall range", "images/s", "CPU s", "CPU vs by hand"]
    print(table(header, rows))
    batches = -(-count // BATCH)
    api = median(cpu["trivial: api, no checkpoint"])
    print(
        f"\nAPI CPU cost (trivial work): {(api - hand['trivial']) * 1e3:.1f} ms per call, "
        f"{(api - hand['trivial']) / batches * 1e3:.2f} ms per batch if spread over {batches}"
    )
    each = median(wall["trivial: api, checkpoint every 1"]) - median(
        wall["trivial: api, no checkpoint"]
    )
    each_cpu = median(cpu["trivial: api, checkpoint every 1"]) - api
    print(
        f"one checkpoint (a file, reducer state, metrics; fsync): {each / (batches - 1) * 1e3:.1f}"
        f" ms wall, {each_cpu / (batches - 1) * 1e3:.1f} ms CPU"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer images and repetitions")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(1)
    count, reps = (512, 2) if args.quick else (2048, args.reps)
    print(f"# batch processing: {machine()}; {count} images, batch {BATCH}, 1 torch thread")
    summarise(measure(reps, count), count)


if __name__ == "__main__":
    main()
