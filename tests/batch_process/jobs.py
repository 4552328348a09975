"""A small batch job the tests run in-process, as a script and under torchrun.

    python tests/batch_process/jobs.py --items 23 --batch-size 2 --interval 3 --run-name NAME

Every batch's items (their dataset indices) are doubled and written, with the batch's indices,
to a file through upload_path() at each checkpoint; a reducer sums the items, a plain-function
reducer collects them in order, and every batch reports one metric. `--fault WHERE:N` makes the
process hurt itself at a chosen point, to test stopping and resuming:

    kill-batch:G      SIGKILL while processing global batch G (before the batch is buffered)
    term-batch:G      SIGTERM to itself while processing global batch G
    int-batch:G       SIGINT (Ctrl-C) to itself while processing global batch G
    term-parent:G     SIGTERM to the parent (torchrun) while processing global batch G
    kill-flush:N      SIGKILL in the N-th on_checkpoint_start, after writing its file
    kill-commit:N     SIGKILL in the N-th commit, after the files moved, before the store row
    kill-committed:N  SIGKILL in the N-th commit, after the store row, before the rename
    kill-finish:0     SIGKILL in on_finish, after it reported its metrics
    raise-batch:G     raise RuntimeError while processing global batch G

`--fault-rank R` limits the fault to rank R (default: every rank).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import Dataset, IterableDataset

from graphbook.batch_process import MetricReducer, TorchBatchProcessor, torch_batch_process
from graphbook.batch_process.context import TorchBatchProcessorContext
from graphbook.loggers import CSVLogger
from graphbook.store import CheckpointCommit, Store

FAULT_ENV = "TEST_BATCH_FAULT"
FAULT_RANK_ENV = "TEST_BATCH_FAULT_RANK"


class Numbers(Dataset[torch.Tensor]):
    """Item i is the tensor i."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> torch.Tensor:
        if not 0 <= index < self.count:
            raise IndexError(index)
        return torch.tensor(index)


class JitteredNumbers(Numbers):
    """Item i is {"index": i, "noise": a draw}: augmented with its own unseeded generator, so no
    two reads of an item are the same, though the data is."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.rng = np.random.default_rng()

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:  # type: ignore[override]
        return {"index": super().__getitem__(index), "noise": torch.tensor(self.rng.random())}


class NumberStream(IterableDataset[torch.Tensor]):
    """The tensors 0 .. count-1, as a stream."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __iter__(self) -> Iterator[torch.Tensor]:
        return (torch.tensor(i) for i in range(self.count))


class SumReducer(MetricReducer):
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.total = 0
        self.count = 0

    def update(self, values: torch.Tensor) -> None:
        self.total += int(values.sum())
        self.count += values.numel()

    def per_slot_reduce(self) -> tuple[int, int]:
        return self.total, self.count

    def cross_slot_reduce(self, per_slot_metrics: list[Any]) -> dict[str, int]:
        return {
            "sum": sum(total for total, _ in per_slot_metrics),
            "count": sum(count for _, count in per_slot_metrics),
        }


def ordered(values: list[list[int]]) -> list[int]:
    return [v for batch in values for v in batch]


class Recorder(TorchBatchProcessor):
    def __init__(self, context: TorchBatchProcessorContext) -> None:
        self.context = context
        self.sums = context.wrap_reducer(SumReducer())
        self.order = context.wrap_reducer(ordered, name="order")
        self.rows: list[dict[str, Any]] = []
        self.flushes = 0

    def process_batch(self, batch: torch.Tensor | dict[str, torch.Tensor], batch_idx: int) -> None:
        if isinstance(batch, dict):
            batch = batch["index"]  # JitteredNumbers' noise is not part of the outcome
        index = self.context.global_batch_idx
        fault("kill-batch", index, signal.SIGKILL)
        fault("term-batch", index, signal.SIGTERM)
        fault("int-batch", index, signal.SIGINT)
        fault("term-parent", index, signal.SIGTERM, os.getppid())
        if matches("raise-batch", index):
            raise RuntimeError(f"failing on purpose at batch {index}")
        items = batch.tolist()
        self.rows.append(
            {
                "batch": index,
                "batch_idx": batch_idx,
                "rank": self.rank,
                "items": items,
                "outputs": (batch * 2).tolist(),
            }
        )
        self.sums.update(batch)
        self.order.update(items)
        self.context.report_metrics("batches", index, {"items": len(items)})

    def on_checkpoint_start(self) -> None:
        if self.rows:
            with self.context.upload_path() as path:
                name = f"batches_{self.rows[0]['batch']:05d}.json"
                (path / name).write_text(json.dumps(self.rows))
            self.rows = []
        self.flushes += 1
        fault("kill-flush", self.flushes, signal.SIGKILL)

    def on_finish(self) -> None:
        self.context.report_metrics("inference", self.rank, {"finished": 1})
        fault("kill-finish", 0, signal.SIGKILL)


def matches(where: str, value: int) -> bool:
    spec = os.environ.get(FAULT_ENV, "")
    rank = os.environ.get(FAULT_RANK_ENV)
    if rank is not None and rank != os.environ.get("RANK", "0"):
        return False
    return spec == f"{where}:{value}"


def fault(where: str, value: int, signum: int, pid: int | None = None) -> None:
    if not matches(where, value):
        return
    if pid is None:
        os.kill(os.getpid(), signum)
        return
    # Signal the parent (torchrun), then wait for the signal it forwards before going on: it
    # forwards from its monitoring loop, which on a busy machine came after the last batch.
    # The wait is in Python (the handler runs on the main thread whichever thread the kernel
    # picks), so the forwarded signal reaches this process's own handler as it would anyway.
    handler = signal.getsignal(signum) or signal.SIG_DFL
    heard: list[int] = []

    def note(got: int, frame: Any) -> None:
        heard.append(got)
        if callable(handler):
            handler(got, frame)

    signal.signal(signum, note)
    try:
        os.kill(pid, signum)
        deadline = time.monotonic() + 60
        while not heard and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        signal.signal(signum, handler)


def install_commit_faults() -> None:
    """Wrap Store.commit_checkpoint so kill-commit and kill-committed can strike."""
    original = Store.commit_checkpoint
    calls = [0]

    def commit_checkpoint(self: Store, commit: CheckpointCommit) -> None:
        calls[0] += 1
        fault("kill-commit", calls[0], signal.SIGKILL)
        original(self, commit)
        fault("kill-committed", calls[0], signal.SIGKILL)

    Store.commit_checkpoint = commit_checkpoint  # type: ignore[method-assign,assignment]


def run(args: argparse.Namespace, iterable: bool, workers: int, run_name: str) -> None:
    dataset: Any = NumberStream(args.items) if iterable else Numbers(args.items)
    if args.jitter:
        dataset = JitteredNumbers(args.items)
    torch_batch_process(
        Recorder,
        dataset,
        batch_size=args.batch_size,
        checkpoint_interval=args.interval,
        max_batches=args.max_batches,
        dataloader_kwargs={"num_workers": workers} if workers else None,
        run_name=run_name,
        loggers=[CSVLogger(args.logs)] if args.logs else None,
    )


def main(args: argparse.Namespace) -> None:
    shared = args.also_stream and int(os.environ.get("WORLD_SIZE", "1")) > 1
    if shared:
        dist.init_process_group("gloo")  # both runs use this group
    try:
        run(args, args.iterable, args.workers, args.run_name)
        if args.also_stream:
            run(args, True, 2, args.run_name + "-stream")
    finally:
        if shared:
            dist.destroy_process_group()


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser()
    parse.add_argument("--items", type=int, default=23)
    parse.add_argument("--batch-size", type=int, default=2)
    parse.add_argument("--interval", type=int, default=3)
    parse.add_argument("--max-batches", type=int, default=None)
    parse.add_argument("--workers", type=int, default=0)
    parse.add_argument("--iterable", action="store_true")
    parse.add_argument("--logs", help="a folder for a CSVLogger")
    parse.add_argument("--jitter", action="store_true", help="JitteredNumbers (augmented items)")
    parse.add_argument("--run-name", default="numbers")
    parse.add_argument(
        "--also-stream", action="store_true", help="then run NAME-stream: iterable, 2 workers"
    )
    return parse


if __name__ == "__main__":
    install_commit_faults()
    main(parser().parse_args())
