"""The processor's `self.profiler`: `with self.profiler as p: ...; p.step()` times the block and
counts steps; after `context.set_profiler(...)` it also drives a `torch.profiler.profile`."""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any

import torch.profiler


class BatchProfiler:
    """Times the code run inside it. Its summary is reported as the "profiler" metrics group
    when the run completes (if the processor used it)."""

    def __init__(self) -> None:
        self.blocks = 0
        self.steps = 0
        self.seconds = 0.0
        self.longest = 0.0
        self._entered: float | None = None
        self._torch: torch.profiler.profile | None = None
        self._torch_running = False

    def use_torch_profiler(self, profile: torch.profiler.profile) -> None:
        """Start `profile` at the first block, step it with `step()`, stop it at the end."""
        self.close()
        self._torch = profile

    def __enter__(self) -> BatchProfiler:
        if self._torch is not None and not self._torch_running:
            self._torch.start()
            self._torch_running = True
        self._entered = time.perf_counter()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._entered is None:
            return
        elapsed = time.perf_counter() - self._entered
        self._entered = None
        self.blocks += 1
        self.seconds += elapsed
        self.longest = max(self.longest, elapsed)

    def step(self) -> None:
        """Mark the end of one step (one batch's work)."""
        self.steps += 1
        if self._torch is not None and self._torch_running:
            self._torch.step()

    def close(self) -> None:
        """Stop the torch profiler, which writes its trace."""
        if self._torch is not None and self._torch_running:
            self._torch.stop()
            self._torch_running = False

    def summary(self) -> dict[str, Any] | None:
        """Blocks, steps and seconds spent inside the profiler; None if it was never used."""
        if self.blocks == 0:
            return None
        return {
            "blocks": self.blocks,
            "steps": self.steps,
            "seconds": self.seconds,
            "seconds_per_block": self.seconds / self.blocks,
            "longest_block_seconds": self.longest,
        }
