"""Worker-pool overhead and scaling: a batch step whose `load_fn` runs in 1, 2 and as many
workers as the machine has cores.

    python -m bench.pool [--quick] [--items 4000] [--work-ms 2.0] [--reps 3] [--compare DIR]

Two loads per item: `spin` burns `work-ms` of CPU (a stand-in for decoding), `nothing` returns
its item (what the pool itself costs per item: pickling, the queue, the result pipe, the
batch bookkeeping). Graphbook runs in this process (`run_workflow`, a source of dicts
`{"x": i}` -> a batch step of 32 with the load in the pool). For `spin`, the ideal is
min(workers, cores) / work items per second: a ratio near 1 means the pool adds little and
throughput grows with workers until the cores run out; *for the CPU left* takes the cores
others' processes left (min(workers, cores - others' load) / work), as the shared machine
rarely leaves all of them. For `nothing`, the figure is the
pool's own cost in µs per item, with the parent's CPU per item beside it. Repetitions are
interleaved, each run in a fresh process; the machine is shared, so read ratios within one
run, with the load beside them. `--compare DIR` runs the same with another checkout (main
before a change), interleaved, and prints this checkout's figures over the other's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.common import CORES, ROOT, busy_seconds, children_seconds, machine, median, table
from graphbook import Workflow, batch, param, run_workflow, source, step

ITEMS = 4000
QUICK_ITEMS = 1000
WORK_MS = 2.0


def spin(item: tuple[int, float]) -> int:
    """Burn `seconds` of this process's CPU, then return the number."""
    number, seconds = item
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return number


def nothing(item: tuple[int, float]) -> int:
    return item[0]


@step("Bench/Items")
@source()
@param("count", "int", default=ITEMS)
@param("seconds", "number", default=0.0)
def items(ctx: Any) -> Iterator[dict[str, Any]]:
    for n in range(ctx.count):
        yield {"x": [(n, ctx.seconds)]}


@step("Bench/Spin")
@batch(32, "x", load_fn=spin)
def spun(ctx: Any, outputs: list[int], items: list[Any], data: list[Any]) -> None:
    for value, d in zip(outputs, data, strict=True):
        d["y"] = value


@step("Bench/Nothing")
@batch(32, "x", load_fn=nothing)
def nothing_step(ctx: Any, outputs: list[int], items: list[Any], data: list[Any]) -> None:
    for value, d in zip(outputs, data, strict=True):
        d["y"] = value


def run(load: str, count: int, seconds: float, workers: int) -> tuple[float, float, float]:
    """Items per second, parent CPU µs per item, and others' load (cores) for one run."""
    flow = Workflow()
    node = flow.add(spun if load == "spin" else nothing_step, id="batch")
    flow.connect(flow.add(items, count=count, seconds=seconds), node)
    busy, children = busy_seconds(), children_seconds()
    wall, cpu = time.perf_counter(), time.process_time()
    result = run_workflow(flow, workers=workers)  # closes its pool: the workers are reaped
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if not result.ok or result.counts["batch"]["out"] != count:
        raise RuntimeError(f"the run did not complete: {result.status} {result.counts}")
    own = cpu + children_seconds() - children
    others = max(0.0, busy_seconds() - busy - own) / wall
    return count / wall, cpu / count * 1e6, others


def run_in(path: str, load: str, count: int, seconds: float, workers: int) -> Figures:
    """`run` in a fresh process with the checkout at `path` first on its path."""
    code = (
        "import json, sys; from bench.pool import run; "
        f"print(json.dumps(run({load!r}, {count}, {seconds}, {workers})))"
    )
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=path, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"{path}: {load} with {workers} workers: {done.stderr[-2000:]}")
    rate, cpu, others = json.loads(done.stdout.splitlines()[-1])
    return float(rate), float(cpu), float(others)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.pool", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ITEMS} items, 1 rep")
    parser.add_argument("--items", type=int, help=f"items per run (default {ITEMS})")
    parser.add_argument("--work-ms", type=float, default=WORK_MS, help="CPU ms per item")
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    parser.add_argument("--compare", type=Path, help="another checkout, run interleaved")
    args = parser.parse_args(argv)
    count = args.items or (QUICK_ITEMS if args.quick else ITEMS)
    reps = args.reps or (1 if args.quick else 3)
    seconds = args.work_ms / 1e3
    counts = sorted({1, 2, CORES})
    checkouts = {"this checkout": str(ROOT)}
    if args.compare is not None:
        checkouts = {str(args.compare): str(args.compare.resolve()), **checkouts}
    print(f"worker pool, {machine()}, {count} items, {args.work_ms} ms of CPU each", flush=True)
    figures: dict[tuple[str, int, str], list[Figures]] = {}
    for _ in range(reps):
        for workers in counts:
            for load in ("spin", "nothing"):
                for label, path in checkouts.items():
                    found = run_in(path, load, count, seconds, workers)
                    figures.setdefault((load, workers, label), []).append(found)
    print(table(HEADER, [row(key, values, args.work_ms) for key, values in figures.items()]))
    for label in checkouts:
        print(scaling(figures, label, counts))
    if args.compare is not None:
        print(comparison(figures, counts, list(checkouts)))


Figures = tuple[float, float, float]
"""Items per second, parent CPU µs per item, others' load (cores)."""
HEADER = ["load_fn", "workers", "checkout", "items/s", "/ ideal", "/ ideal for the CPU left",
          "µs of pool per item (wall x busy)", "parent CPU µs per item",
          "others' load (cores)"]  # fmt: skip


def row(key: tuple[str, int, str], values: list[Figures], work_ms: float) -> list[Any]:
    load, workers, label = key
    rate = median([v[0] for v in values])
    busy = min(workers, CORES)
    ideal = busy / (work_ms / 1e3)
    per_item = busy * 1e6 / rate - work_ms * 1e3 if load == "spin" else 1e6 / rate
    others = median([v[2] for v in values])
    left = max(min(workers, CORES - others), 1e-9) / (work_ms / 1e3)
    spin = load == "spin"
    return [load, workers, label, f"{rate:,.0f}", rate / ideal if spin else "",
            rate / left if spin else "", f"{per_item:,.1f}",
            f"{median([v[1] for v in values]):,.1f}", others]  # fmt: skip


def scaling(
    figures: dict[tuple[str, int, str], list[Figures]], label: str, counts: list[int]
) -> str:
    """Does throughput grow with workers until the cores run out? Said in one line, against
    the cores and against the CPU others' processes left."""
    rates = {w: median([v[0] for v in figures[("spin", w, label)]]) for w in counts}
    left = {
        w: max(min(w, CORES - median([v[2] for v in figures[("spin", w, label)]])), 1e-9)
        for w in counts
    }
    steps = ", ".join(
        f"{w}: x{rates[w] / rates[1]:.2f} (ideal x{min(w, CORES)}, "
        f"for the CPU left x{left[w] / left[1]:.2f})"
        for w in counts
    )
    grows = all(rates[b] > rates[a] * 1.1 for a, b in itertools.pairwise(counts) if b <= CORES)
    keeps = all(rates[w] / rates[1] >= 0.8 * left[w] / left[1] for w in counts)
    return (
        f"{label}: spin items/s against 1 worker, {steps}; grows until the cores: {grows}; "
        f"within 80 % of what the CPU left allows: {keeps}"
    )


def comparison(
    figures: dict[tuple[str, int, str], list[Figures]], counts: list[int], labels: list[str]
) -> str:
    """This checkout against the other, per row, within the same run."""
    before, after = labels
    lines = ["| load_fn | workers | items/s after / before | parent CPU per item after / before |",
             "|---|---|---|---|"]  # fmt: skip
    for workers in counts:
        for load in ("spin", "nothing"):
            old, new = figures[(load, workers, before)], figures[(load, workers, after)]
            rate = median([v[0] for v in new]) / median([v[0] for v in old])
            cpu = median([v[1] for v in new]) / median([v[1] for v in old])
            lines.append(f"| {load} | {workers} | {rate:.3f} | {cpu:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
