"""RunControl: how another thread stops, pauses, resumes and steps a running graph.

The executor checks it between units of work; a paused run blocks on a condition (it never
spins), and `wake()` lets the scheduler sleep until something it waits for (an answer to a
prompt) arrives.

A step runs one unit of work of one node, then pauses: a dict through a plain step, one value
from a source, one batch (`on_item_batch`) of a batch step, one answered prompt. Stepping a
node runs that node and what feeds it until the node's unit ends; a step of no node in
particular steps the node the executor picks (`aim`): the one furthest downstream with work.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from graphbook.events import PauseReason


@dataclass(frozen=True)
class PauseState:
    reason: PauseReason
    node_id: str | None = None


class RunControl:
    """Stop, pause, resume and step one run; every method is safe from any thread."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._stop = False
        self._pause: PauseState | None = None
        self._stepping = False
        self._step_node: str | None = None
        self._woken = False

    # -- asked by other threads -------------------------------------------------------------
    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()

    def pause(self) -> None:
        with self._cond:
            if self._pause is None:
                self._pause = PauseState("pause")
            self._cond.notify_all()

    def resume(self) -> None:
        """Run on to the end (and leave step mode)."""
        with self._cond:
            self._pause = None
            self._stepping = False
            self._cond.notify_all()

    def step(self, node_id: str | None = None) -> None:
        """Run on until `node_id` finishes one unit of work, then pause; with None, the
        executor picks the node (`aim`)."""
        with self._cond:
            self._pause = None
            self._stepping = True
            self._step_node = node_id
            self._cond.notify_all()

    def wake(self) -> None:
        """Something the scheduler may be waiting for has happened."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    # -- read by the executor ---------------------------------------------------------------
    @property
    def stopping(self) -> bool:
        return self._stop

    @property
    def paused(self) -> PauseState | None:
        return self._pause

    @property
    def stepping(self) -> bool:
        return self._stepping

    @property
    def step_node(self) -> str | None:
        """The node the current step runs until, once known."""
        return self._step_node

    def aim(self, node_id: str, instead_of: str | None = None) -> None:
        """The executor picked the node the current step runs, as the step asked for none
        (`instead_of` None) or for one that does not run (reused from the cache)."""
        with self._cond:
            if self._stepping and self._step_node == instead_of:
                self._step_node = node_id

    def unit_done(self, node_id: str) -> bool:
        """A node finished one unit of work; True if it must yield now because the step ended."""
        if not self._stepping:  # the common case, read without the lock
            return False
        with self._cond:
            if not self._stepping or self._step_node != node_id:
                return False
            self._stepping = False
            self._pause = PauseState("step", node_id)
            return True

    def wait_while_paused(self) -> None:
        """Block until resumed, stepped or stopped."""
        with self._cond:
            while self._pause is not None and not self._stop:
                self._cond.wait()

    def idle(self, timeout: float) -> None:
        """Sleep until `wake()`, a control request, or `timeout`."""
        with self._cond:
            if not self._woken and not self._stop and self._pause is None:
                self._cond.wait(timeout)
            self._woken = False


def interrupt(thread: threading.Thread) -> bool:
    """Raise KeyboardInterrupt in `thread` at its next Python instruction (a run stuck in node
    code that ignores `stop`); the executor ends such a run as stopped. True if delivered."""
    if thread.ident is None or not thread.is_alive():
        return False
    import ctypes

    delivered = ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread.ident), ctypes.py_object(KeyboardInterrupt)
    )
    return int(delivered) == 1
