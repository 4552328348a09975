"""The pure hand-over: decoded tensors from two worker processes to batches in the parent.

    python -m bench.transport [--quick] [--items 20000] [--reps 3] [--workers 2] [--compare DIR]

Decoding and the model are taken out, so what is left is what a pipeline pays to move loaded
items from its workers to the step that batches them (issue 35). The load makes a uint8
3x224x224 tensor (a decoded, cropped image's shape: 150 KB) from its item; the batch is 32.

* **DataLoader**: a map-style dataset whose `__getitem__` is that load,
  `DataLoader(num_workers=2, batch_size=32)`; the loop takes each batch (collated in the
  workers) and does nothing more with it.
* **Graphbook, stack()**: `run_workflow` of a source of `{"i": n}` dicts -> a `@batch(32, "i",
  load_fn=...)` step whose `on_item_batch` takes `graphbook.stack(outputs)`: the batch
  as the workers laid it out, the documented stacked form.
* **Graphbook, torch.stack**: the same step written as seed 004 writes it,
  `torch.stack(images)` of the list it receives (a copy in the parent).

Each run is a fresh process, repetitions interleaved, ratios taken within a repetition; the
machine is shared, so each run also reports the CPU others used meanwhile. `--compare DIR`
runs the Graphbook contenders of another checkout too (main before a change).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT, busy_seconds, children_seconds, machine, median, table

ITEMS = 20_000
QUICK_ITEMS = 4_000
BATCH = 32
SHAPE = (3, 224, 224)


def make(item: int) -> Any:
    """The load: a uint8 3x224x224 tensor, filled with the item's number."""
    import torch

    return torch.full(SHAPE, item % 251, dtype=torch.uint8)


def dataloader(items: int, workers: int) -> int:
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Made(Dataset[Any]):
        def __len__(self) -> int:
            return items

        def __getitem__(self, index: int) -> Any:
            return make(index)

    seen = 0
    for batch in DataLoader(Made(), batch_size=BATCH, num_workers=workers):
        assert isinstance(batch, torch.Tensor)
        seen += batch.shape[0]
    return seen


def graphbook(items: int, workers: int, form: str) -> int:
    import torch

    from graphbook import Workflow, batch, run_workflow, source, stack, step

    seen = [0]

    @step("Bench/Numbers")
    @source()
    def numbers(ctx: Any) -> Iterator[dict[str, Any]]:
        for n in range(items):
            yield {"i": n}

    @step("Bench/Batch")
    @batch(BATCH, "i", load_fn=make)
    def batched(ctx: Any, outputs: list[Any], items_: list[Any], data: list[Any]) -> None:
        stacked = stack(outputs) if form == "stack" else torch.stack(outputs)
        seen[0] += stacked.shape[0]

    flow = Workflow()
    flow.connect(flow.add(numbers), flow.add(batched, id="batch"))
    result = run_workflow(flow, workers=workers)
    if not result.ok:
        raise RuntimeError(f"the run did not complete: {result.status} {result.errors[:1]}")
    return seen[0]


def run(contender: str, items: int, workers: int) -> dict[str, float]:
    """Items per second, the parent's CPU per item and others' load, for one run here."""
    import importlib

    for module in ("torch", "graphbook.engine.executor"):  # imports are not what is measured
        importlib.import_module(module)

    busy, children = busy_seconds(), children_seconds()
    wall, cpu = time.perf_counter(), time.process_time()
    if contender == "dataloader":
        seen = dataloader(items, workers)
    else:
        seen = graphbook(items, workers, contender.removeprefix("graphbook-"))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if seen != items:
        raise RuntimeError(f"{contender} saw {seen} items of {items}")
    own = cpu + children_seconds() - children
    others = max(0.0, busy_seconds() - busy - own) / wall
    return {"rate": items / wall, "parent_us": cpu / items * 1e6, "others": others}


def run_in(path: str, contender: str, items: int, workers: int) -> dict[str, float]:
    code = (
        "import json; from bench.transport import run; "
        f"print(json.dumps(run({contender!r}, {items}, {workers})))"
    )
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=path, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{path}: {contender}: {done.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


CONTENDERS = ("dataloader", "graphbook-stack", "graphbook-torchstack")
HEADER = ["contender", "checkout", "items/s", "/ DataLoader", "parent CPU µs per item",
          "others' load (cores)"]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.transport", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ITEMS} items, 1 rep")
    parser.add_argument("--items", type=int, help=f"items per run (default {ITEMS})")
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--compare", type=Path, help="another checkout's Graphbook, interleaved")
    args = parser.parse_args(argv)
    items = args.items or (QUICK_ITEMS if args.quick else ITEMS)
    reps = args.reps or (1 if args.quick else 3)
    runs = [(c, "this checkout", str(ROOT)) for c in CONTENDERS]
    if args.compare is not None:
        other = str(args.compare.resolve())
        runs += [(c, str(args.compare), other) for c in CONTENDERS if c != "dataloader"]
    print(f"transport, {machine()}, {items} items, {args.workers} workers, batch {BATCH}")
    found: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(reps):
        for contender, label, path in runs:
            found.setdefault((contender, label), []).append(
                run_in(path, contender, items, args.workers)
            )
    print(table(HEADER, rows(found, reps)))


def rows(found: dict[tuple[str, str], list[dict[str, float]]], reps: int) -> list[list[Any]]:
    base = found[("dataloader", "this checkout")]
    out = []
    for (contender, label), values in found.items():
        ratios = [values[r]["rate"] / base[r]["rate"] for r in range(reps)]
        out.append([contender, label, f"{median([v['rate'] for v in values]):,.0f}",
                    f"{median(ratios):.2f}x", f"{median([v['parent_us'] for v in values]):.1f}",
                    f"{median([v['others'] for v in values]):.2f}"])  # fmt: skip
    return out


if __name__ == "__main__":
    main()
