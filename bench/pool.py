"""Worker-pool overhead and scaling: a batch step whose `load_fn` runs in 1, 2 and as many
workers as the machine has cores.

    python -m bench.pool [--quick] [--items 4000] [--work-ms 2.0] [--reps 3]

Two loads per item: `spin` burns `work-ms` of CPU (a stand-in for decoding), `nothing` returns
its item (what the pool itself costs per item: pickling, the queue, the result pipe, the
batch bookkeeping). Graphbook runs in this process (`run_workflow`, a source of dicts
`{"x": i}` -> a batch step of 32 with the load in the pool). For `spin`, the ideal is
min(workers, cores) / work items per second: a ratio near 1 means the pool adds little and
throughput grows with workers until the cores run out. For `nothing`, the figure is the
pool's own cost in µs per item, with the parent's CPU per item beside it. Repetitions are
interleaved; the machine is shared, so read ratios within one run, with the load beside them.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Sequence
from typing import Any

from bench.common import CORES, busy_seconds, children_seconds, machine, median, table
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


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.pool", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ITEMS} items, 1 rep")
    parser.add_argument("--items", type=int, help=f"items per run (default {ITEMS})")
    parser.add_argument("--work-ms", type=float, default=WORK_MS, help="CPU ms per item")
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    args = parser.parse_args(argv)
    count = args.items or (QUICK_ITEMS if args.quick else ITEMS)
    reps = args.reps or (1 if args.quick else 3)
    seconds = args.work_ms / 1e3
    counts = sorted({1, 2, CORES})
    print(f"worker pool, {machine()}, {count} items, {args.work_ms} ms of CPU each", flush=True)
    figures: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    for _ in range(reps):
        for workers in counts:
            for load in ("spin", "nothing"):
                found = run(load, count, seconds, workers)
                figures.setdefault((load, workers), []).append(found)
    rows = []
    for (load, workers), values in figures.items():
        rate = median([v[0] for v in values])
        ideal = min(workers, CORES) / seconds if load == "spin" else float("nan")
        per_item = (
            min(workers, CORES) * 1e6 / rate - args.work_ms * 1e3 if load == "spin" else 1e6 / rate
        )
        rows.append([load, workers, f"{rate:,.0f}", rate / ideal if load == "spin" else "",
                     f"{per_item:,.1f}", f"{median([v[1] for v in values]):,.1f}",
                     median([v[2] for v in values])])  # fmt: skip
    header = ["load_fn", "workers", "items/s", "/ ideal", "µs of pool per item (wall x busy)",
              "parent CPU µs per item", "others' load (cores)"]  # fmt: skip
    print(table(header, rows))


if __name__ == "__main__":
    main()
