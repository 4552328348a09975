"""SIGTERM and SIGINT during a run (batch or training): the first one asks the run to stop
after the current batch (it checkpoints, then exits with status 75); repeats are ignored,
because launchers and terminals often deliver the same stop twice (torchrun forwards what the
process group already got). SIGKILL stops at once, and is safe: the next attempt resumes from
the last checkpoint."""

from __future__ import annotations

import logging
import signal
import subprocess
import threading
from collections.abc import Iterable
from types import FrameType, TracebackType
from typing import Any

logger = logging.getLogger(__name__)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignals:
    """While active (in the main thread), records the first stop signal instead of dying."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}
        self._passed_on = False

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def pass_on(self, processes: Iterable[subprocess.Popen[Any]]) -> bool:
        """Send the signal caught, once, to `processes` (child processes that stop cleanly
        on it); True once a signal was caught."""
        if self.signum is not None and not self._passed_on:
            self._passed_on = True
            for process in processes:
                process.send_signal(self.signum)
        return self.signum is not None

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is not threading.main_thread():
            logger.info("not in the main thread: SIGTERM/SIGINT will not stop the run cleanly")
            return self
        for signum in STOP_SIGNALS:
            previous = signal.getsignal(signum)
            if previous is signal.SIG_IGN:  # started with nohup or `&`: not ours to handle
                continue
            self._previous[signum] = signal.SIG_DFL if previous is None else previous
            signal.signal(signum, self._handle)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            logger.warning(
                "got %s: finishing the current batch, then checkpointing and stopping",
                signal.Signals(signum).name,
            )
        else:
            logger.warning("already stopping; send SIGKILL to stop at once (safe to resume)")
