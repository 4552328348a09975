"""The watchdog of a local Ray: when the process that started it dies, even by `kill -9`, the
Ray processes it started die with it.

Ray ends its GCS server and raylet with their driver, but the raylet's agents (dashboard agent,
runtime-env agent) first try to tell the dead GCS that the raylet died, with a fixed 60 s
timeout: they were left running for a minute after every killed `graphbook run --ray`.

`watch(...)` is started by the Ray pool's `connect` as its own process (this file run by path:
it imports nothing of graphbook, so it starts in a moment), in a session of its own (Ctrl-C in
the terminal does not reach it). It learns the Ray processes as they start: the ones Ray reported,
and every process under them. When the driver is gone it kills each one still alive (the same
process: its start time is checked, so a reused pid is never hit) and exits; when Ray's
processes are all gone while the driver lives (Ray was shut down), it exits too.

    python watchdog.py DRIVER_PID RAY_PID...
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

POLL = 0.1
"""Seconds between looks at the driver."""
LEARN = 0.5
"""Seconds between looks for new Ray processes (workers, actors) while the driver lives."""


def start_time(pid: int) -> int | None:
    """The process's start time (clock ticks after boot), or None when it has ended."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):  # a zombie has ended
        return None
    return int(fields[19])


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def learn(known: dict[int, int], roots: list[int]) -> None:
    """Add the roots and every process under them that runs now to `known` (pid -> start)."""
    todo = list(roots)
    while todo:
        pid = todo.pop()
        started = start_time(pid)
        if started is None or pid == os.getpid():
            continue
        if known.setdefault(pid, started) != started:  # the pid was reused: a new process
            known[pid] = started
        todo += children(pid)


def kill_all(known: dict[int, int]) -> None:
    for pid, started in known.items():
        if start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def watch(driver: int, roots: list[int]) -> None:
    driver_start = start_time(driver)
    known: dict[int, int] = {}
    learn(known, roots)
    learned = time.monotonic()
    while True:
        if start_time(driver) != driver_start:  # ended (or gone and its pid reused)
            learn(known, list(known))  # what the last moments started
            kill_all(known)
            return
        if not any(start_time(pid) == started for pid, started in known.items()):
            return  # Ray was shut down; the driver goes on without it
        if time.monotonic() - learned > LEARN:
            learn(known, list(known))
            learned = time.monotonic()
        time.sleep(POLL)


def main(argv: list[str]) -> None:
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # it ends when its driver does, not before
    driver, *roots = (int(arg) for arg in argv)
    watch(driver, roots)


if __name__ == "__main__":
    main(sys.argv[1:])
