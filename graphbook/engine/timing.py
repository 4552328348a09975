"""Where a batch step's time goes: running its batches, or waiting for their items.

A `BatchClock` adds up the seconds a batch step spent in `on_item_batch` (compute) and the
seconds it had no batch to run while items were still to come (waited for input: the workers,
or the nodes upstream, were slower than the model). When the batches run on a CUDA device, the
device's own busy time comes from CUDA events recorded around each batch on the current stream,
so "the GPU was idle 38 % of the run" is measured, not guessed. The figures travel as
`BatchTiming` on the node's progress and finish events; with a `Tracer`, each batch and each
wait is also a span of the run's trace.
"""

from __future__ import annotations

import sys
from collections import deque
from typing import Any

from graphbook.engine.trace import Tracer, now
from graphbook.events import BatchTiming


class BatchClock:
    """The compute and wait seconds of one batch step, as it runs."""

    def __init__(self, row: str, tracer: Tracer | None = None) -> None:
        self.row = row
        self.tracer = tracer
        self.batches = 0
        self.compute = 0.0
        self.waited = 0.0
        self.starved: float | None = None
        """Since when the step has had no batch to run while items were still to come."""
        self._begun = 0.0
        self._device = DeviceClock.here()

    def starve(self) -> None:
        """The step has nothing to run and items are still to come: it waits from now on."""
        if self.starved is None:
            self.starved = now()

    def fed(self, at: float | None = None) -> None:
        """The wait (if any) is over."""
        if self.starved is None:
            return
        at = now() if at is None else at
        self.waited += at - self.starved
        if self.tracer is not None:
            self.tracer.span("waiting for input", "wait", self.row, self.starved, at)
        self.starved = None

    def begin(self) -> None:
        """A batch starts running."""
        self._begun = now()
        self.fed(self._begun)
        if self._device is not None:
            self._device.begin()

    def end(self, size: int, stacked: bool) -> None:
        """The batch ran (`size` items; `stacked`: it came as one slab)."""
        done = now()
        self.compute += done - self._begun
        self.batches += 1
        if self._device is not None:
            self._device.end()
        if self.tracer is not None:
            name = f"batch {self.batches}"
            self.tracer.span(name, "batch", self.row, self._begun, done, items=size, slab=stacked)

    def timing(self) -> BatchTiming | None:
        """The figures so far; None before the first batch."""
        if not self.batches:
            return None
        waited = self.waited + (now() - self.starved if self.starved is not None else 0.0)
        device = self._device
        busy = device.busy() if device is not None else None
        name = device.name if device is not None else ""
        return BatchTiming(self.batches, self.compute, waited, name, busy)


class DeviceClock:
    """A CUDA device's busy seconds over a step's batches: an event recorded on the current
    stream as each batch starts and one as it ends (the batch's work queued between them), read
    once the device has passed them, so timing never waits for the device."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.name = f"cuda:{torch.cuda.current_device()}"
        self._open: Any = None
        self._pending: deque[tuple[Any, Any]] = deque()
        self._busy = 0.0

    @classmethod
    def here(cls) -> DeviceClock | None:
        """A clock for this process's current CUDA device, if torch has started CUDA (a model
        resource moved there does); None otherwise, without importing torch."""
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_initialized():
            return None
        return cls(torch)

    def begin(self) -> None:
        self._open = self._event()

    def end(self) -> None:
        if self._open is not None:
            self._pending.append((self._open, self._event()))
            self._open = None

    def busy(self) -> float:
        """Seconds between each batch's events that the device has passed so far."""
        while self._pending and self._pending[0][1].query():
            start, end = self._pending.popleft()
            self._busy += start.elapsed_time(end) / 1e3
        return self._busy

    def _event(self) -> Any:
        event = self.torch.cuda.Event(enable_timing=True)
        event.record()
        return event
