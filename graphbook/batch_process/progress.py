"""What the chief (rank 0) shows of a batch run on stderr; other ranks stay quiet.

A line when the run starts or resumes ("resuming run X at batch N of M"), then progress:
batches done of the total, items per second and the time left. On a terminal that is a live
bar (rich), redrawn a few times a second; otherwise (a log file, a pipe, a scheduler's output)
a line at most every `LINE_EVERY` seconds and at each checkpoint. A last line says how the
attempt ended.
"""

from __future__ import annotations

import sys
import time
from typing import IO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

LINE_EVERY = 30.0
"""Seconds between progress lines when stderr is not a terminal."""


class BatchProgress:
    """Progress of one attempt of a run, shown by rank 0 only."""

    def __init__(
        self,
        run_id: str,
        start: int,
        total: int | None,
        batch_size: int,
        rank: int,
        stream: IO[str] | None = None,
        terminal: bool | None = None,
    ) -> None:
        self.run_id, self.start, self.total, self.batch_size = run_id, start, total, batch_size
        self.shown = rank == 0
        self.console = Console(
            file=stream or sys.stderr,
            force_terminal=terminal,
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        self.started = time.perf_counter()
        self.last_line = self.started
        self.done = start
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def begin(self) -> None:
        if not self.shown:
            return
        of = f"of {self.total}" if self.total is not None else "(total unknown)"
        if self.start > 0:
            self.console.print(f"resuming run {self.run_id} at batch {self.start} {of}")
        else:
            self.console.print(f"batch run {self.run_id}: {self.total or '?'} batch(es) to do")
        if self.console.is_terminal:
            self._bar = Progress(
                TextColumn("batches"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                console=self.console,
                transient=True,
            )
            self._task = self._bar.add_task("", total=self.total, completed=self.start, rate="")
            self._bar.start()

    def update(self, done: int, checkpoint: bool = False) -> None:
        """`done` batches are complete (over all ranks)."""
        self.done = done
        if not self.shown:
            return
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, rate=self.figures())
            return
        now = time.perf_counter()
        if checkpoint or now - self.last_line >= LINE_EVERY:
            self.last_line = now
            self.console.print(f"run {self.run_id}: {self.position()}, {self.figures()}")

    def end(self, outcome: str) -> None:
        if not self.shown:
            return
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        seconds = time.perf_counter() - self.started
        self.console.print(
            f"run {self.run_id} {outcome}: {self.position()} "
            f"({self.rate():,.1f} items/s over {seconds:,.1f} s)"
        )

    def position(self) -> str:
        of = f"/{self.total}" if self.total is not None else ""
        return f"batch {self.done}{of}"

    def rate(self) -> float:
        """Items per second in this attempt."""
        seconds = max(time.perf_counter() - self.started, 1e-9)
        return (self.done - self.start) * self.batch_size / seconds

    def figures(self) -> str:
        """`123.4 items/s, ETA 0:01:05` (no ETA before the first batch or without a total)."""
        text = f"{self.rate():,.1f} items/s"
        left = eta(
            self.done - self.start, time.perf_counter() - self.started, self.total, self.done
        )
        return text + (f", ETA {left}" if left is not None else "")


def eta(batches: int, seconds: float, total: int | None, done: int) -> str | None:
    """The time left at this attempt's pace, as H:MM:SS; None when it cannot be told."""
    if total is None or batches <= 0 or seconds <= 0:
        return None
    left = round(max(total - done, 0) * seconds / batches)
    return f"{left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"
