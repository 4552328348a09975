"""Training progress in the terminal (rank 0): epoch, batch, rate, last loss and time left in a
rich progress bar, a line per validation (at most one a second; in a log too, where no bar is
drawn) — both off with `progress=False` — and one line when a run starts, resumes, stops or
ends."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

LINE_SECONDS = 1.0


class Display:
    def __init__(self, chief: bool, bar: bool, total: int, epoch_length: int, name: str) -> None:
        self.chief = chief
        self.enabled = chief and bar
        self.total = total
        self.epoch_length = epoch_length
        self.console = Console(stderr=True)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self.name = name
        self._shown = 0.0
        self._said = -LINE_SECONDS

    def say(self, text: str) -> None:
        if self.chief:
            self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def start(self, done: int) -> None:
        if not self.enabled or not self.console.is_terminal:
            return
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[loss]}"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            self._description(done), total=self.total, completed=done, rate="", loss=""
        )

    def advance(self, done: int, loss: Any) -> None:
        if self._progress is None or self._task is None:
            return
        now = time.monotonic()
        if now - self._shown < 0.1 and done < self.total:
            return
        self._shown = now
        task = self._progress.tasks[0]
        rate = f"{task.speed:.1f} batch/s" if task.speed else ""
        shown = f"loss {loss:.4g}" if isinstance(loss, float) else ""
        self._progress.update(
            self._task,
            completed=done,
            description=self._description(done),
            rate=rate,
            loss=shown,
        )

    def validated(self, done: int, loss: Any, metrics: dict[str, Any]) -> None:
        """A line saying where training is and what it validated at (not for the last
        validation: the end's summary says it)."""
        now = time.monotonic()
        if not self.enabled or done >= self.total or now - self._said < LINE_SECONDS:
            return
        self._said = now
        shown = " ".join(f"{k}={v:.4g}" for k, v in metrics.items() if isinstance(v, float))
        trained = f"loss {loss:.4g}; " if isinstance(loss, float) else ""
        self.say(
            f"epoch {done / self.epoch_length:.3g}, batch {done}/{self.total}: {trained}"
            f"validation {shown or '-'}"
        )

    def _description(self, done: int) -> str:
        if done == 0:
            return f"epoch 1 batch 0/{self.epoch_length}"
        epoch, batch = divmod(done - 1, self.epoch_length)  # the batch just finished
        return f"epoch {epoch + 1} batch {batch + 1}/{self.epoch_length}"

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
