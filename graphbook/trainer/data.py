"""Training and validation data: `DataLoader`, a drop-in for torch's over map-style datasets,
and the batches each process reads in each epoch, so that a run can start at any batch of any
epoch and read exactly what an uninterrupted run would have read there.

Epoch `e` reads the dataset in a fixed order (a permutation drawn from the run's seed and `e`
when shuffling). Step `s` of it takes the next `batch_size * world size` items; process `r`
gets its slice `[r * batch_size, (r + 1) * batch_size)` of them. A last, shorter step (kept
unless `drop_last`) is dealt round-robin, padded from the start of the order if it has fewer
items than processes, so that no process ever waits without a batch.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import torch
from torch.utils.data import DataLoader as TorchLoader
from torch.utils.data import RandomSampler, SequentialSampler

from graphbook.durable.devices import loader_kwargs_for
from graphbook.trainer.errors import TrainerError

TorchData = Union[dict[str, torch.Tensor], Sequence[torch.Tensor], torch.Tensor]  # noqa: UP007
"""What a batch is: a tensor, a sequence of tensors or a dict of them."""

CPU = torch.device("cpu")
_PASSED_ON = (
    "num_workers",
    "collate_fn",
    "pin_memory",
    "timeout",
    "worker_init_fn",
    "prefetch_factor",
    "persistent_workers",
    "multiprocessing_context",
)


class DataLoader:
    """Like `torch.utils.data.DataLoader` over a map-style dataset (the same arguments), but
    read by the trainer: sharded over processes, shuffled reproducibly from the run's seed, and
    resumable at any batch. `sampler` and `batch_sampler` are refused (the trainer deals the
    batches); iterating it directly reads it once, like a torch DataLoader."""

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool = False,
        sampler: Any = None,
        batch_sampler: Any = None,
        drop_last: bool = False,
        **kwargs: Any,
    ) -> None:
        if sampler is not None or batch_sampler is not None:
            raise TrainerError(
                "DataLoader: sampler and batch_sampler are not supported: the trainer deals "
                "batches to processes and resumes them itself; use shuffle=True or order the "
                "dataset yourself"
            )
        unknown = sorted(set(kwargs) - {*_PASSED_ON, "generator"})
        if unknown:
            raise TrainerError(f"DataLoader: unknown argument(s) {', '.join(unknown)}")
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TrainerError(
                f"DataLoader needs a map-style dataset (with __len__ and __getitem__), got "
                f"{type(dataset).__name__}"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise TrainerError(
                f"DataLoader: batch_size must be a positive whole number, got {batch_size!r}"
            )
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.loader_kwargs = {k: v for k, v in kwargs.items() if k in _PASSED_ON}

    def __len__(self) -> int:
        return steps_per_epoch(len(self.dataset), self.batch_size, 1, self.drop_last)

    def __iter__(self) -> Iterator[Any]:
        loader = TorchLoader(
            self.dataset,
            batch_size=self.batch_size,
            shuffle=self.shuffle,
            drop_last=self.drop_last,
            **self.loader_kwargs,
        )
        return iter(loader)


def as_loader(data: Any, name: str) -> DataLoader:
    """Training or validation data as a `DataLoader`: ours, or a torch DataLoader over a
    map-style dataset with its default or random sampler."""
    if isinstance(data, DataLoader):
        return data
    if isinstance(data, TorchLoader):
        return _from_torch(data, name)
    raise TrainerError(
        f"{name} must be a det.pytorch.DataLoader (or a torch DataLoader over a map-style "
        f"dataset), got {type(data).__name__}"
    )


def _from_torch(loader: TorchLoader[Any], name: str) -> DataLoader:
    if not isinstance(loader.sampler, RandomSampler | SequentialSampler):
        raise TrainerError(
            f"{name}: a torch DataLoader with a custom sampler cannot be resumed exactly; "
            "pass a det.pytorch.DataLoader (shuffle=True for random order)"
        )
    kwargs = {
        "num_workers": loader.num_workers,
        "collate_fn": loader.collate_fn,
        "pin_memory": loader.pin_memory,
        "worker_init_fn": loader.worker_init_fn,
    }
    return DataLoader(
        loader.dataset,
        batch_size=loader.batch_size,
        shuffle=isinstance(loader.sampler, RandomSampler),
        drop_last=loader.drop_last,
        **kwargs,
    )


def steps_per_epoch(length: int, batch_size: int, world_size: int, drop_last: bool) -> int:
    per_step = batch_size * world_size
    return length // per_step if drop_last else math.ceil(length / per_step)


@dataclass(frozen=True)
class Shard:
    """How one process reads a loader: its rank among `world_size`, and the run's seed."""

    rank: int
    world_size: int
    seed: int


class Reader:
    """One process's view of a `DataLoader` in a run."""

    def __init__(self, loader: DataLoader, shard: Shard, device: torch.device = CPU) -> None:
        self.loader = loader
        self.shard = shard
        self.device = device
        """Where the batches go: on CUDA they are read into pinned memory by default."""
        self.length = len(loader.dataset)
        self.steps = steps_per_epoch(
            self.length, loader.batch_size, shard.world_size, loader.drop_last
        )
        if self.steps == 0:
            raise TrainerError(
                f"the data has {self.length} item(s): not one batch of {loader.batch_size} "
                f"per process for {shard.world_size} process(es); use a smaller batch_size or "
                "drop_last=False"
            )

    def order(self, epoch: int, shuffle: bool) -> list[int]:
        if not shuffle:
            return list(range(self.length))
        generator = torch.Generator().manual_seed(_mix(self.shard.seed, epoch))
        order: list[int] = torch.randperm(self.length, generator=generator).tolist()
        return order

    def batches(self, epoch: int, shuffle: bool) -> list[list[int]]:
        """This process's item indices for each step of `epoch`."""
        order, size = self.order(epoch, shuffle), self.loader.batch_size
        world, rank = self.shard.world_size, self.shard.rank
        per_step = size * world
        result = []
        for step in range(self.steps):
            chunk = order[step * per_step : (step + 1) * per_step]
            if len(chunk) == per_step:
                result.append(chunk[rank * size : (rank + 1) * size])
                continue
            chunk = chunk + order[: max(0, world - len(chunk))]
            result.append(chunk[rank::world])
        return result

    def read(self, epoch: int, start: int = 0, shuffle: bool | None = None) -> Iterator[Any]:
        """The batches of `epoch` from step `start` on."""
        shuffle = self.loader.shuffle if shuffle is None else shuffle
        batches = self.batches(epoch, shuffle)[start:]
        if not batches:
            return iter(())
        kwargs = loader_kwargs_for(self.device, self.loader.loader_kwargs)
        # Its own generator, so that making the iterator leaves the global RNG alone (torch
        # draws a base seed from it otherwise, and a resumed run would diverge).
        generator = torch.Generator().manual_seed(_mix(self.shard.seed, epoch, 7))
        loader = TorchLoader(
            self.loader.dataset, batch_sampler=batches, generator=generator, **kwargs
        )
        return iter(loader)


def _mix(*values: int) -> int:
    """A 63-bit seed from several ints (stable across runs and platforms)."""
    acc = 1469598103934665603
    for value in values:
        acc = ((acc ^ (value & 0xFFFFFFFFFFFFFFFF)) * 1099511628211) & 0x7FFFFFFFFFFFFFFF
    return acc


def first_tensor(batch: Any) -> torch.Tensor | None:
    """The first tensor in a batch (its length is the batch's size)."""
    if isinstance(batch, torch.Tensor):
        return batch
    if isinstance(batch, Mapping):
        batch = list(batch.values())
    if isinstance(batch, list | tuple):
        for item in batch:
            found = first_tensor(item)
            if found is not None:
                return found
    return None
