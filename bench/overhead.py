"""Engine overhead: 10 trivial steps, each adding a key to a dict, against a generator chain.

    python -m bench.overhead [--quick] [--items 100000] [--reps 3]

Both run in this process, repetitions interleaved; Graphbook runs in-process (`run_workflow`,
zero workers), so only the engine's per-dict work is measured, not start-up. Ratios are
taken within a repetition; the machine is shared, so CPU time per dict is the steadier figure.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from bench.common import machine, median, spread, table
from graphbook import Workflow, param, run_workflow, source, step

STEPS = 10
ITEMS = 100_000
QUICK_ITEMS = 20_000


@step("Bench/Numbers")
@source()
@param("count", "int", default=ITEMS)
def numbers(ctx: Any) -> Iterator[dict[str, int]]:
    """Yields `count` dicts `{"n": 0}`, `{"n": 1}`, ..."""
    for n in range(ctx.count):
        yield {"n": n}


@step("Bench/AddKey")
@param("key", "string", default="k")
def add_key(ctx: Any, data: dict[str, Any]) -> None:
    """Adds `key` to the dict."""
    data[ctx.key] = True


def workflow(items: int) -> Workflow:
    flow = Workflow("10 steps, each adding a key to every dict")
    previous = flow.add(numbers, id="numbers", count=items)
    for n in range(STEPS):
        current = flow.add(add_key, id=f"step{n}", key=f"k{n}")
        flow.connect(previous, current)
        previous = current
    return flow


def graphbook(items: int) -> Rates:
    """Dicts per second through the engine, in-process, zero workers."""
    flow = workflow(items)
    with Clock() as clock:
        result = run_workflow(flow)
    if not result.ok or result.counts[f"step{STEPS - 1}"]["out"] != items:
        raise RuntimeError(f"the run did not complete: {result.status} {result.counts}")
    return clock.rates(items)


@dataclass(frozen=True)
class Rates:
    wall: float
    """Dicts per second of wall-clock time."""
    cpu: float
    """Dicts per CPU-second of this process: what the work costs, whatever else the machine
    runs meanwhile (both contenders are single-threaded)."""


class Clock:
    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu

    def rates(self, items: int) -> Rates:
        return Rates(items / self.wall, items / self.cpu)


def generators(items: int) -> Rates:
    """Items per second through a chain of 10 generators doing the same."""

    def source(count: int) -> Iterator[dict[str, Any]]:
        for n in range(count):
            yield {"n": n}

    def add(key: str, dicts: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for data in dicts:
            data[key] = True
            yield data

    with Clock() as clock:
        chain = source(items)
        for n in range(STEPS):
            chain = add(f"k{n}", chain)
        count = sum(1 for _ in chain)
    if count != items:
        raise RuntimeError(f"the chain gave {count} dicts for {items}")
    return clock.rates(items)


def measure(items: int, reps: int) -> dict[str, list[Rates]]:
    contenders: dict[str, Callable[[int], Rates]] = {
        "generator chain": generators,
        "Graphbook": graphbook,
    }
    rates: dict[str, list[Rates]] = {name: [] for name in contenders}
    for _ in range(reps):
        for name, contender in contenders.items():
            gc.collect()
            rates[name].append(contender(items))
    return rates


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ITEMS:,} dicts, 1 rep")
    parser.add_argument("--items", type=int, help=f"dicts per run (default {ITEMS:,})")
    parser.add_argument("--reps", type=int, help="repetitions (default 5, quick 2)")
    args = parser.parse_args(argv)
    items = args.items or (QUICK_ITEMS if args.quick else ITEMS)
    reps = args.reps or (2 if args.quick else 5)
    print(f"engine overhead, {machine()}, {items:,} dicts, {reps} rep(s)", flush=True)
    rates = measure(items, reps)
    print(table(HEADER, rows(rates)))


HEADER = ["contender", "dicts/s (median)", "min..max", "/ generators", "dicts per CPU-s",
          "us CPU per dict-step", "/ generators (CPU)"]  # fmt: skip


def rows(rates: dict[str, list[Rates]]) -> list[list[Any]]:
    plain = rates["generator chain"]
    found = []
    for name, values in rates.items():
        wall, cpu = [r.wall for r in values], [r.cpu for r in values]
        found.append([
            name, f"{median(wall):,.0f}", spread(wall),
            median([r.wall / p.wall for r, p in zip(values, plain, strict=True)]),
            f"{median(cpu):,.0f}", f"{1e6 / median(cpu) / STEPS:.3f}",
            median([r.cpu / p.cpu for r, p in zip(values, plain, strict=True)]),
        ])  # fmt: skip
    return found


if __name__ == "__main__":
    main()
