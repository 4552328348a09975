"""Feeding a GPU: CPU batches reach a CUDA model through pinned memory, copied on a side stream,
the next batches copied while the current one computes.

A copy from ordinary (pageable) memory to the GPU blocks the caller until it is done, and the
driver stages it through a pinned buffer of its own. Here a batch is staged once into one of a
few pinned buffers kept for reuse (`PinnedRing`), copied with `non_blocking` on a stream of its
own (`DeviceFeed`), and the model's stream waits for that copy on the GPU, not the CPU: the
caller goes on (stacking, decoding, queueing the forward pass) while the copy runs, and a copy
overlaps whatever the GPU is still computing. What is in flight is bounded: a pinned buffer is
reused only once the copy out of it has finished, so at most `IN_FLIGHT` batches are on their
way to the device.

Two batches ahead: a batch step that moved its batch to a device (through `to_device`, or a
model resource's forward) has its next batches sent to that device before it runs the current
one (`DeviceFeed.ahead`, called by the batch runner with each coming batch's stacked form, a
view of the slab the workers wrote): their copies are queued before the current batch's work
waits for its results, so they overlap its compute. The batch handed to `to_device` when its
turn comes is the one already on the device. A batch sent ahead and not asked for (the step
stacked another tensor) is forgotten once its turn has passed (`forget`).

Each process has one feed per device (`feed_for`), shared by every model on it and by
`to_device`. The CUDA calls sit behind a `Copier`; tests drive the ring and the look-ahead on
the CPU with a copier of their own, and the CUDA paths run in tests/engine/test_feed.py only
where CUDA is present.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # torch is imported where a batch goes to a device, not with the engine
    import torch

LOGGER = logging.getLogger(__name__)
MARK = "_graphbook_feed"
IN_FLIGHT = 3
"""Pinned buffers, so batches on their way to the device: the one the model runs on and two
ahead of it. More only holds memory."""


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
        import torch

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
        import torch

        size = 1
        for n in shape:
            size *= int(n)
        buffer = self._buffers[slot]
        if buffer is None or buffer.dtype != dtype or buffer.numel() < size:
            buffer = torch.empty(size, dtype=dtype, pin_memory=self.pin)
            self._buffers[slot] = buffer
        return buffer[:size].view(shape)


class Copier(Protocol):
    """The device's side of a feed: queue a copy of a staged (pinned) batch, and make the
    stream that will use it wait for that copy."""

    def copy(self, host: torch.Tensor) -> tuple[torch.Tensor, Done]:
        """The batch on the device (its copy queued), and what tells when the copy is done."""
        ...

    def hand_out(self, moved: torch.Tensor, done: Done) -> None:
        """The current stream is about to use `moved`: it waits for its copy, on the device."""
        ...


class CudaCopier:
    """Copies on a CUDA stream of its own, non-blocking; the current stream waits for each
    copy by an event, on the GPU, not the CPU."""

    def __init__(self, device: torch.device) -> None:
        import torch

        self.device = device
        self.stream = torch.cuda.Stream(device)  # type: ignore[no-untyped-call]

    def copy(self, host: torch.Tensor) -> tuple[torch.Tensor, Done]:
        import torch

        with torch.cuda.stream(self.stream):
            moved = host.to(self.device, non_blocking=True)
            copied = torch.cuda.Event()  # type: ignore[no-untyped-call]
            copied.record(self.stream)
        return moved, copied

    def hand_out(self, moved: torch.Tensor, done: Done) -> None:
        import torch

        current = torch.cuda.current_stream(self.device)
        current.wait_event(done)  # type: ignore[arg-type]
        moved.record_stream(current)  # its memory is not reused until the current stream's work


Key = tuple[int, tuple[int, ...], tuple[int, ...], Any]


def key_of(batch: torch.Tensor) -> Key:
    """Which CPU batch a tensor is: its memory, shape, strides and dtype."""
    return batch.data_ptr(), tuple(batch.shape), batch.stride(), batch.dtype


class DeviceFeed:
    """Copies CPU batches to one device through a `PinnedRing` and a `Copier`; batches sent
    `ahead` wait on the device for their turn."""

    def __init__(
        self,
        device: torch.device | str,
        slots: int = IN_FLIGHT,
        copier: Copier | None = None,
        pin: bool = True,
    ) -> None:
        import torch

        self.device = torch.device(device)
        if copier is None and self.device.type != "cuda":
            raise ValueError(f"a device feed copies to a CUDA device, not {self.device}")
        self.ring = PinnedRing(slots, pin=pin)
        self.copier: Copier = copier if copier is not None else CudaCopier(self.device)
        self._ahead: dict[Key, tuple[torch.Tensor, Done]] = {}
        self.hits = 0
        """Batches handed out that had been sent ahead."""

    def to_device(self, batch: torch.Tensor | Iterable[torch.Tensor]) -> torch.Tensor:
        """`batch` on the device: the copy sent ahead for it, else one queued now on the side
        stream; the current stream waits for it on the GPU (the caller does not)."""
        import torch

        sent = self._ahead.pop(key_of(batch), None) if isinstance(batch, torch.Tensor) else None
        if sent is not None:
            self.hits += 1
            moved, done = sent
        else:
            moved, done = self._copy(batch)
        self.copier.hand_out(moved, done)
        return moved

    def ahead(self, batch: torch.Tensor) -> None:
        """Queue `batch`'s copy now, to be handed out by `to_device` when its turn comes."""
        key = key_of(batch)
        if key not in self._ahead:
            self._ahead[key] = self._copy(batch)
            while len(self._ahead) > self.ring.slots:  # a safety net: turns passed drop them
                self._ahead.pop(next(iter(self._ahead)))

    def forget(self, batch: torch.Tensor) -> None:
        """`batch`'s turn has passed: a copy sent ahead and not asked for is dropped."""
        self._ahead.pop(key_of(batch), None)

    def _copy(self, batch: torch.Tensor | Iterable[torch.Tensor]) -> tuple[torch.Tensor, Done]:
        host, slot = self.ring.stage(batch)
        moved, done = self.copier.copy(host)
        self.ring.release(slot, done)
        return moved, done


_feeds: dict[torch.device, DeviceFeed] = {}
_feeds_lock = threading.Lock()
_fed: Feeding | None = None


class Feeding:
    """The devices batches were moved to while a batch step's batch ran (`feeding`)."""

    def __init__(self) -> None:
        self.devices: set[torch.device] = set()


def feed_for(device: torch.device | str) -> DeviceFeed:
    """This process's feed for a CUDA device, made on first use (its first CPU batch sets the
    thread to one intra-op thread: NOTE [ One thread feeds the GPU ])."""
    import torch

    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    with _feeds_lock:
        feed = _feeds.get(device)
        if feed is None:
            torch.set_num_threads(1)  # NOTE [ One thread feeds the GPU ]
            feed = _feeds[device] = DeviceFeed(device)
        return feed


def to_device(batch: torch.Tensor, device: torch.device | str) -> torch.Tensor:
    """`batch` (a CPU tensor) on `device`: on a CUDA device through the process's feed (pinned
    memory, a side stream, the copy sent ahead by the batch runner when there was one); on
    another device, `batch.to(device)`. What a library step calls to move its stacked batch."""
    import torch

    device = torch.device(device)
    if device.type != "cuda" or batch.device.type != "cpu":
        return batch.to(device)
    feed = feed_for(device)
    if _fed is not None:
        _fed.devices.add(feed.device)
    return feed.to_device(batch)


@contextlib.contextmanager
def feeding() -> Iterator[Feeding]:
    """Notes the devices batches are moved to (`to_device`, a fed model) within the block:
    the batch runner learns where to send a step's next batches ahead."""
    global _fed
    previous, _fed = _fed, Feeding()
    try:
        yield _fed
    finally:
        _fed = previous


def send_ahead(devices: Iterable[torch.device], batches: Iterable[torch.Tensor]) -> None:
    """Queue each coming batch's copy to each device the step fed (the batch runner)."""
    for device in devices:
        feed = _feeds.get(device)
        if feed is not None:
            for batch in batches:
                feed.ahead(batch)


def passed(devices: Iterable[torch.device], batch: torch.Tensor) -> None:
    """A batch's turn has passed: what was sent ahead for it and not used is dropped."""
    for device in devices:
        feed = _feeds.get(device)
        if feed is not None:
            feed.forget(batch)


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
    """Make a CUDA model take CPU batches through its device's feed; returns the same model."""
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
    """The replacement `forward`: a CPU first argument goes through the feed first (the
    device's shared feed, made on the first such call; not pickled)."""

    def __init__(
        self, forward: Callable[..., Any], device: torch.device, slots: int = IN_FLIGHT
    ) -> None:
        self.forward = forward
        self.device = device
        self.slots = slots
        self.feed: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import torch

        first = args[0] if args else None
        if isinstance(first, torch.Tensor) and first.device.type == "cpu":
            if self.feed is None:
                self.feed = feed_for(self.device)
            if _fed is not None:
                _fed.devices.add(self.feed.device)
            args = (self.feed.to_device(first), *args[1:])
        return self.forward(*args, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        return {"forward": self.forward, "device": self.device, "slots": self.slots}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["forward"], state["device"], state["slots"])  # type: ignore[misc]
