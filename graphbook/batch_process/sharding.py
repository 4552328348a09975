"""Which batches each rank processes, and the DataLoader that reads them.

Global batch `g` holds the dataset's items `[g * batch_size, (g + 1) * batch_size)` in the
dataset's own order (index order, or iteration order for an iterable dataset). A run keeps one
number of progress, the count of global batches committed (`start`): the batches left are dealt
round-robin, so rank `r`'s `k`-th batch of this attempt is global batch `start + k * size + r`.
Whatever the number of ranks, every batch goes to exactly one of them; on the last step the
ranks past the remainder get no batch and only take part in the step's agreement.
"""

from __future__ import annotations

import math
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from torch.utils.data import DataLoader, IterableDataset, Sampler, get_worker_info
from torch.utils.data.dataloader import default_collate

Batch = tuple[int, Any]
"""A global batch index and the batch itself."""


@dataclass(frozen=True)
class Shard:
    """One rank's part of one attempt."""

    start: int
    """Global batches committed before this attempt."""
    total: int | None
    """Global batches the run ends at; None: when an iterable dataset runs out."""
    rank: int
    size: int
    batch_size: int
    drop_last: bool

    def global_batches(self) -> range:
        """This rank's global batches (only when `total` is known)."""
        if self.total is None:
            raise ValueError("an iterable dataset's batches are known only as it is read")
        return range(self.start + self.rank, self.total, self.size)

    def owns(self, index: int) -> bool:
        return index >= self.start and (index - self.start) % self.size == self.rank


def batch_count(length: int, batch_size: int, drop_last: bool) -> int:
    """Global batches in a map-style dataset of `length` items."""
    return length // batch_size if drop_last else math.ceil(length / batch_size)


def steps_left(start: int, total: int, size: int) -> int:
    """Steps every rank takes to finish batches `[start, total)` with `size` ranks."""
    return math.ceil(max(total - start, 0) / size)


def map_batches(
    dataset: Any, shard: Shard, length: int, loader_kwargs: dict[str, Any]
) -> Iterator[Batch]:
    """This rank's batches of a map-style dataset, read by a DataLoader."""
    sampler = RankBatchSampler(shard, length)
    loader = DataLoader(dataset, batch_sampler=sampler, **quiet_workers(loader_kwargs))
    return zip(shard.global_batches(), loader, strict=False)


def iterable_batches(dataset: Any, shard: Shard, loader_kwargs: dict[str, Any]) -> Iterator[Batch]:
    """This rank's batches of an iterable dataset, read by a DataLoader (each of its worker
    processes keeps every W-th of the rank's batches, so none is read twice)."""
    kwargs = quiet_workers(loader_kwargs)
    collate = kwargs.pop("collate_fn", None) or default_collate
    source = RankIterable(dataset, shard, collate)
    return iter(DataLoader(source, batch_size=None, collate_fn=_keep, **kwargs))


class RankBatchSampler(Sampler[list[int]]):
    """The item indices of each of one rank's global batches."""

    def __init__(self, shard: Shard, length: int) -> None:
        self.shard = shard
        self.length = length

    def __iter__(self) -> Iterator[list[int]]:
        size = self.shard.batch_size
        for index in self.shard.global_batches():
            yield list(range(index * size, min((index + 1) * size, self.length)))

    def __len__(self) -> int:
        return len(self.shard.global_batches())


class RankIterable(IterableDataset[Batch]):
    """Groups an iterable dataset's items into global batches and yields `(index, batch)` for
    this rank's batches (and, inside a DataLoader worker, for that worker's share of them)."""

    def __init__(self, dataset: Iterable[Any], shard: Shard, collate: Callable[[Any], Any]) -> None:
        self.dataset = dataset
        self.shard = shard
        self.collate = collate

    def __iter__(self) -> Iterator[Batch]:
        worker = get_worker_info()
        workers, worker_id = (1, 0) if worker is None else (worker.num_workers, worker.id)
        shard = self.shard
        for index, items in enumerate(_chunks(self.dataset, shard.batch_size)):
            if shard.total is not None and index >= shard.total:
                return
            if shard.drop_last and len(items) < shard.batch_size:
                return
            if shard.owns(index) and ((index - shard.start) // shard.size) % workers == worker_id:
                yield index, self.collate(items)


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _keep(batch: Any) -> Any:
    return batch


def quiet_workers(loader_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The kwargs with a worker_init_fn that makes DataLoader workers ignore SIGINT and SIGTERM:
    Ctrl-C reaches the whole process group, and the main process decides when to stop."""
    kwargs = dict(loader_kwargs)
    if kwargs.get("num_workers", 0):
        kwargs["worker_init_fn"] = QuietWorkerInit(kwargs.get("worker_init_fn"))
    return kwargs


class QuietWorkerInit:
    """A picklable worker_init_fn: ignore stop signals, then run the user's own init."""

    def __init__(self, user_init: Callable[[int], None] | None) -> None:
        self.user_init = user_init

    def __call__(self, worker_id: int) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if self.user_init is not None:
            self.user_init(worker_id)
