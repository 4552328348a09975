"""Ranks and the few collectives a run needs (batch or training): one plain process, or a
torch.distributed group (as `torchrun` starts it: gloo on CPU, nccl on GPU)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class StepFlags:
    """What all ranks agreed on after one step: did any rank ask to stop, how many had a batch."""

    stop: bool
    batches: int


class Collective(Protocol):
    """The ranks of one run and what they exchange. Every method is a collective: all ranks
    call it, in the same order."""

    rank: int
    size: int
    local_rank: int
    device: torch.device

    def broadcast(self, value: T) -> T:
        """Rank 0's `value` on every rank."""
        ...

    def gather(self, value: T) -> list[T]:
        """Every rank's `value`, in rank order, on rank 0; an empty list on the others."""
        ...

    def step_flags(self, stop: bool, has_batch: bool) -> StepFlags: ...

    def barrier(self) -> None: ...


class SingleProcess:
    """The one-process case: every collective returns at once."""

    rank = 0
    size = 1
    local_rank = 0

    def __init__(self) -> None:
        self.device = default_device(0)

    def broadcast(self, value: T) -> T:
        return value

    def gather(self, value: T) -> list[T]:
        return [value]

    def step_flags(self, stop: bool, has_batch: bool) -> StepFlags:
        return StepFlags(stop, int(has_batch))

    def barrier(self) -> None:
        pass


class TorchGroup:
    """The default torch.distributed process group."""

    def __init__(self) -> None:
        self.rank = dist.get_rank()
        self.size = dist.get_world_size()
        self.local_rank = int(os.environ.get("LOCAL_RANK", self.rank))
        self.device = default_device(self.local_rank)
        nccl = dist.get_backend() == "nccl"
        self._flags_device = self.device if nccl else torch.device("cpu")

    def broadcast(self, value: T) -> T:
        box: list[Any] = [value if self.rank == 0 else None]
        dist.broadcast_object_list(box, src=0)
        return cast(T, box[0])

    def gather(self, value: T) -> list[T]:
        box: list[Any] | None = [None] * self.size if self.rank == 0 else None
        dist.gather_object(value, box, dst=0)
        return cast(list[T], box or [])

    def step_flags(self, stop: bool, has_batch: bool) -> StepFlags:
        flags = torch.tensor([int(stop), int(has_batch)], device=self._flags_device)
        dist.all_reduce(flags)
        stops, batches = flags.tolist()
        return StepFlags(stops > 0, batches)

    def barrier(self) -> None:
        dist.barrier()


def default_device(local_rank: int) -> torch.device:
    """`cuda:<local rank>` when a GPU is visible, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda", local_rank % torch.cuda.device_count())
    return torch.device("cpu")


def launched_world_size() -> int:
    """The world size a launcher such as torchrun announced in WORLD_SIZE (1 without one)."""
    text = os.environ.get("WORLD_SIZE", "1")
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"WORLD_SIZE must be a whole number, got {text!r}") from None


@contextmanager
def open_collective() -> Iterator[Collective]:
    """The ranks of this run: an existing process group, one started from the launcher's
    environment (and destroyed on exit), or the single process."""
    if dist.is_available() and dist.is_initialized():
        yield TorchGroup()
        return
    if launched_world_size() <= 1:
        yield SingleProcess()
        return
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend)
    logger.info("joined a %s process group of %d ranks", backend, dist.get_world_size())
    try:
        yield TorchGroup()
    finally:
        dist.destroy_process_group()
