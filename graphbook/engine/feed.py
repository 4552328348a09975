"""Feeding a GPU: CPU batches reach a CUDA model through pinned memory, copied on a side stream.

A copy from ordinary (pageable) memory to the GPU blocks the caller until it is done, and the
driver stages it through a pinned buffer of its own. Here a batch is staged once into one of a
few pinned buffers kept for reuse (`PinnedRing`), copied with `non_blocking` on a stream of its
own (`DeviceFeed`), and the model's stream waits for that copy on the GPU, not the CPU: the
caller goes on (stacking, decoding, queueing the forward pass) while the copy runs, and a copy
overlaps whatever the GPU is still computing. `prefetch` keeps the next batches copied while
the current one runs. What is in flight is bounded: a pinned buffer is reused only once the
copy out of it has finished, so at most `IN_FLIGHT` batches are on their way to the device.

`feed_on_device(model)` does this for a CUDA model resource (graphbook/engine/devices.py): a
CPU tensor handed to it as its first argument goes through the feed; a tensor already on the
device is used as it is. The model stays the same object, as with CPU slices.

Tested here without a GPU through the seams (`pin=False`, events as plain objects); the CUDA
paths run in tests/engine/test_feed.py only where CUDA is present.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

import torch

LOGGER = logging.getLogger(__name__)
MARK = "_graphbook_feed"
IN_FLIGHT = 2
"""Pinned buffers, so batches on their way to the device: one copying while the model runs on
the one before it is enough to hide the copy; more only holds memory."""


class Done(Protocol):
    """What a ring waits on before reusing a buffer: a CUDA event, or anything like one."""

    def synchronize(self) -> None: ...


class PinnedRing:
    """`slots` host buffers used in turn; a buffer grows to the largest batch staged in it and
    is reused only after the copy out of it has finished."""

    def __init__(self, slots: int = IN_FLIGHT, pin: bool = True) -> None:
        if slots < 1:
            raise ValueError(f"a pinned ring needs 1 slot or more, got {slots}")
        self.pin = pin
        self._buffers: list[torch.Tensor | None] = [None] * slots
        self._pending: list[Done | None] = [None] * slots
        self._next = 0
        self.waits = 0
        """Times staging had to wait for an earlier copy (the ring was full)."""

    @property
    def slots(self) -> int:
        return len(self._buffers)

    def stage(self, batch: torch.Tensor | Iterable[torch.Tensor]) -> tuple[torch.Tensor, int]:
        """Copy `batch` (a tensor, or tensors to stack) into the next buffer; returns the
        staged tensor, a view of that buffer, and the slot to `release` once it is copied."""
        slot = self._next
        self._next = (slot + 1) % self.slots
        pending = self._pending[slot]
        if pending is not None:  # bounded in flight: the copy from `slots` batches ago
            self.waits += 1
            pending.synchronize()
            self._pending[slot] = None
        parts = [batch] if isinstance(batch, torch.Tensor) else list(batch)
        if not parts:
            raise ValueError("cannot stage an empty batch")
        first = parts[0]
        shape = first.shape if isinstance(batch, torch.Tensor) else (len(parts), *first.shape)
        view = self._buffer(slot, shape, first.dtype)
        if isinstance(batch, torch.Tensor):
            view.copy_(batch)
        else:
            torch.stack(parts, out=view)  # decoded items straight into pinned memory
        return view, slot

    def release(self, slot: int, done: Done) -> None:
        """The copy out of `slot` was queued; `done` tells when it has finished."""
        self._pending[slot] = done

    def _buffer(self, slot: int, shape: Any, dtype: torch.dtype) -> torch.Tensor:
        size = 1
        for n in shape:
            size *= int(n)
        buffer = self._buffers[slot]
        if buffer is None or buffer.dtype != dtype or buffer.numel() < size:
            buffer = torch.empty(size, dtype=dtype, pin_memory=self.pin)
            self._buffers[slot] = buffer
        return buffer[:size].view(shape)


class DeviceFeed:
    """Copies CPU batches to one CUDA device on a side stream, through a `PinnedRing`."""

    def __init__(self, device: torch.device | str, slots: int = IN_FLIGHT) -> None:
        self.device = torch.device(device)
        if self.device.type != "cuda":
            raise ValueError(f"a device feed copies to a CUDA device, not {self.device}")
        self.ring = PinnedRing(slots)
        self.stream = torch.cuda.Stream(self.device)  # type: ignore[no-untyped-call]

    def to_device(self, batch: torch.Tensor | Iterable[torch.Tensor]) -> torch.Tensor:
        """`batch` on the device, its copy queued on the side stream; the current stream
        waits for it on the GPU (the caller does not)."""
        host, slot = self.ring.stage(batch)
        with torch.cuda.stream(self.stream):
            moved = host.to(self.device, non_blocking=True)
            copied = torch.cuda.Event()  # type: ignore[no-untyped-call]
            copied.record(self.stream)
        self.ring.release(slot, copied)
        current = torch.cuda.current_stream(self.device)
        current.wait_event(copied)
        moved.record_stream(current)  # its memory is not reused until the current stream's work
        return moved


def prefetch(
    batches: Iterable[Any], move: Callable[[Any], Any], ahead: int = IN_FLIGHT - 1
) -> Iterator[Any]:
    """`move(batch)` for each batch, `ahead` batches before they are needed: the next batch's
    copy is queued before the current one is handed out, so it overlaps the current forward."""
    if ahead < 0:
        raise ValueError(f"ahead is 0 or more, got {ahead}")
    queued: deque[Any] = deque()
    for batch in batches:
        queued.append(move(batch))
        if len(queued) > ahead:
            yield queued.popleft()
    while queued:
        yield queued.popleft()


def feed_on_device(model: torch.nn.Module, slots: int = IN_FLIGHT) -> torch.nn.Module:
    """Make a CUDA model take CPU batches through a `DeviceFeed`; returns the same model."""
    if MARK in model.__dict__:
        return model
    fed = Fed(model.forward, next(model.parameters()).device, slots)
    try:
        model.forward = fed
    except (AttributeError, RuntimeError, TypeError) as exc:  # a TorchScript module, say
        LOGGER.info("%s is not fed through pinned memory: %s", type(model).__name__, exc)
        return model
    model.__dict__[MARK] = fed
    return model


# NOTE [ One thread feeds the GPU ]
# What the thread that feeds a GPU does on the CPU is copying: stacking a batch of decoded items,
# staging it in pinned memory. torch would spread each copy over one intra-op thread per core,
# and each copy then waits for the slowest of them, on cores the worker pool keeps busy
# decoding: on a 16-core H200 machine with 15 workers, `graphbook run` stayed at ~600 images/s
# (0.39x DataLoader with pin_memory) whatever the workers; a 19 MB stack took 0.1-0.5 s under
# load against ~25 ms on one thread. So the first batch fed to a GPU sets this thread to one
# intra-op thread, as the CPU slices do before they start (slices.py).


class Fed:
    """The replacement `forward`: a CPU first argument goes through the feed first. The feed
    (a stream, pinned buffers) is made on the first such call, and not pickled."""

    def __init__(
        self, forward: Callable[..., Any], device: torch.device, slots: int = IN_FLIGHT
    ) -> None:
        self.forward = forward
        self.device = device
        self.slots = slots
        self.feed: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        first = args[0] if args else None
        if isinstance(first, torch.Tensor) and first.device.type == "cpu":
            if self.feed is None:
                torch.set_num_threads(1)  # NOTE [ One thread feeds the GPU ]
                self.feed = DeviceFeed(self.device, self.slots)
            args = (self.feed.to_device(first), *args[1:])
        return self.forward(*args, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        return {"forward": self.forward, "device": self.device, "slots": self.slots}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["forward"], state["device"], state["slots"])  # type: ignore[misc]
