"""Running a workflow here, shown in the terminal: what `graphbook run` and a 0.13 script's
`g.run()` share. The run goes through `run_workflow` (node files the registry lacks loaded
once, the target checked by the executor); prompts are asked in the terminal; Ctrl-C or
SIGTERM stops it cleanly."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from types import FrameType
from typing import Any

from graphbook.cli.asking import prompter_for
from graphbook.cli.consoles import FAILED, OK, error_console, output_console
from graphbook.cli.metrics import RunRecording
from graphbook.cli.terminal import JsonSink, TerminalSink
from graphbook.engine.executor import RunControl, RunResult, run_workflow
from graphbook.engine.pool import Pool
from graphbook.registry import Registry
from graphbook.run_request import RunRequest
from graphbook.workflow import Workflow

Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers


def run_here(
    workflow: Workflow,
    request: RunRequest,
    pool: Pool,
    sink: JsonSink | TerminalSink,
    *,
    registry: Registry | None = None,
    loggers: Sequence[tuple[str, str]] = (),
    trace: Path | None = None,
) -> tuple[RunResult, int]:
    """Run `workflow` as `request` asks (its `workflow` the name in the run store) on `pool`
    with its events to `sink` (both closed at the end), its metrics recorded and written
    through `loggers` (KIND, DEST); the result and the exit code a shell sees (0 ok, 1 a node
    failed, 128 + the signal when stopped)."""
    control = RunControl()
    prompter = prompter_for(sink, output_console(), error_console())
    recording = RunRecording(sink, loggers, request.workflow)
    with closing(pool), closing(sink), closing(recording), StopOnSignal(control) as stopper:
        result = run_workflow(
            workflow,
            registry=registry,
            sink=recording,
            control=control,
            pool=pool,
            prompter=prompter,
            trace=trace,
            request=request,
        )
    return result, exit_code(result, stopper)


def exit_code(result: RunResult, stopper: StopOnSignal) -> int:
    if result.status == "stopped":
        return stopper.exit_code()
    return OK if result.ok else FAILED


class StopOnSignal:
    """While active, Ctrl-C (SIGINT) or SIGTERM stops the run: it sets `control` and interrupts
    whatever node code is running, which the executor turns into a stopped run that still calls
    every node's `on_end`. A second signal interrupts that clean-up too."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, control: RunControl) -> None:
        self.control = control
        self.signum: int | None = None
        self._previous: dict[int, Handler] = {}

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                previous = signal.getsignal(signum)
                if previous is not signal.SIG_IGN:  # ignored (nohup, `&`): not ours to handle
                    self._previous[signum] = signal.SIG_DFL if previous is None else previous
                    signal.signal(signum, self._stop)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            self.control.stop()
        raise KeyboardInterrupt

    def exit_code(self) -> int:
        """128 + the signal's number, as shells report it: 130 for Ctrl-C, 143 for SIGTERM."""
        return 128 + (self.signum or signal.SIGINT)
