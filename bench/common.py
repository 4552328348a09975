"""What the benchmarks share: running a contender in its own process, peak memory of a process
tree, medians and tables."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench"
CORES = os.cpu_count() or 1
RESULT = "BENCH-RESULT "
"""A contender prints its figures as one JSON line after this tag."""


@dataclass(frozen=True)
class Measured:
    """What a contender printed, how long its whole process took, and its tree's peak memory."""

    figures: dict[str, Any]
    wall: float
    peak_mb: float
    stdout: str
    others: float
    """Cores' worth of CPU that other processes of the machine used meanwhile (with steal)."""
    peak_segments: int = 0
    """With `memory`: the most shared memory segments of Graphbook's pools alive at once."""


class TreeMemory:
    """Samples the memory of a process and all its descendants in a thread; keeps the peak.

    PSS (each shared page split between the processes that map it) when it can be read,
    else RSS: summing RSS would count the pages a forked worker shares with its parent twice.
    """

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.peak_segments = 0
        """Shared memory segments named by Graphbook's pools, at most at once. Workers lend
        theirs: a decoded image keeps its segment's name while the parent holds it, so this
        counts every decoded image alive (in flight, waiting, in the batch being run) and the
        spare segments workers keep to write again."""
        self.cpu_seconds = 0.0
        """CPU time the sampling itself took (not the measured process's: not others')."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mb(self) -> float:
        return self.peak / 2**20

    def _sample(self) -> None:
        start = time.thread_time()
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_bytes(self.pid))
            self.peak_segments = max(self.peak_segments, segments_alive())
            self._stop.wait(self.interval)
        self.cpu_seconds = time.thread_time() - start


def segments_alive() -> int:
    try:
        return sum(1 for name in os.listdir("/dev/shm") if name.startswith("graphbook_"))
    except OSError:
        return 0


def tree_bytes(pid: int) -> int:
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    return sum(_process_bytes(p) for p in processes)


def _process_bytes(process: psutil.Process) -> int:
    try:
        info = process.memory_full_info()
        return int(getattr(info, "pss", info.rss))
    except psutil.Error:
        return 0


def run_measured(
    command: Sequence[str],
    timeout: float = 900,
    memory: bool = False,
    env: dict[str, str] | None = None,
) -> Measured:
    """Run `command` from the repository root; return the figures it printed after `RESULT`
    (or `{}`), its wall time, how busy the other processes of the machine kept it meanwhile,
    and with `memory`, the peak memory of its process tree (else NaN). `env` adds to the
    environment the command inherits.

    Sampling memory is not free (reading every process's smaps 20 times a second took about a
    quarter of a core here), so only the memory benchmark does it: elsewhere it would compete
    with the contender it measures, and count as others' load."""
    start, busy, own = time.perf_counter(), busy_seconds(), children_seconds()
    with subprocess.Popen(
        list(command),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    ) as process:
        sampler = TreeMemory(process.pid) if memory else contextlib.nullcontext()
        with sampler:
            stdout, stderr = process.communicate(timeout=timeout)
    wall = time.perf_counter() - start
    sampling = sampler.cpu_seconds if isinstance(sampler, TreeMemory) else 0.0
    own_busy = children_seconds() - own + sampling
    others = max(0.0, (busy_seconds() - busy) - own_busy) / wall
    if process.returncode != 0:
        said = stderr.strip() or stdout  # `--json` runs say their errors on stdout
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}:\n{said[-3000:]}")
    peak = sampler.peak_mb if isinstance(sampler, TreeMemory) else float("nan")
    segments = sampler.peak_segments if isinstance(sampler, TreeMemory) else 0
    return Measured(result_of(stdout), wall, peak, stdout, others, segments)


def busy_seconds() -> float:
    """CPU-seconds the whole machine has been busy (or stolen by the hypervisor) since boot."""
    times = psutil.cpu_times()
    return float(
        sum(getattr(times, n, 0.0) for n in ("user", "nice", "system", "irq", "softirq", "steal"))
    )


def children_seconds() -> float:
    """CPU-seconds of this process's children that ended, and of their children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def result_of(stdout: str) -> dict[str, Any]:
    for line in stdout.splitlines():
        if line.startswith(RESULT):
            figures: dict[str, Any] = json.loads(line[len(RESULT) :])
            return figures
    return {}


def report(figures: dict[str, Any]) -> None:
    """Print a contender's figures for `run_measured` to read."""
    print(RESULT + json.dumps(figures), flush=True)


def python(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: Sequence[float]) -> str:
    return f"{min(values):,.1f}..{max(values):,.1f}" if values else ""


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table, so that the output can be pasted into bench/README.md."""
    cells = [[str(c) for c in header], *[[_cell(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


def machine() -> str:
    import torch

    return (
        f"{time.strftime('%Y-%m-%d')}, {CORES} cores, "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB, "
        f"Python {sys.version.split()[0]}, torch {torch.__version__}"
    )
