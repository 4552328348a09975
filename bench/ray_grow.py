"""A slow load on Ray: the pool's actors fixed at 1, grown from 1 as work waits (`--ray-actors
1:MAX`), and fixed at MAX from the start.

    python -m bench.ray_grow [--items 200] [--load-ms 50] [--most 6] [--reps 2]

The load sleeps (as one that waits on remote storage does), so actors help however few cores
the machine has. Each contender runs in its own process on a local Ray of `--most` + 2 logical
CPUs (each actor reserves 1: the load actors up to the maximum, and the dump actor, fit);
repetitions interleaved. Its time runs from making the pool (the actors' start included, as a
`graphbook run` pays it) to the run's end; the pool's own note says how far it grew.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections.abc import Sequence
from typing import Any

from bench.common import machine, median, python, report, result_of, spread, table

CONTENDERS = ("fixed1", "grow", "fixedmax")


def contender(name: str, items: int, load_ms: float, most: int) -> dict[str, Any]:
    """Run the workflow once on a new local Ray; the seconds it took and the pool's note."""
    from graphbook import Workflow, batch, param, run_workflow, source, step
    from graphbook.engine.ray.connection import connect
    from graphbook.engine.ray.pool import RayPool
    from graphbook.engine.ray.sizing import Limits
    from graphbook.events import Event, NodeLog

    def load(i: int) -> int:
        time.sleep(load_ms / 1000)
        return i

    @step("Bench/Count")
    @source()
    @param("n", "int", default=8)
    def count(ctx: Any) -> Any:
        for i in range(ctx.n):
            yield {"items": [i]}

    @step("Bench/SlowLoad")
    @batch(8, "items", load_fn=load)
    def slow(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
        for value, d in zip(outputs, data, strict=True):
            d["value"] = value

    connect(num_cpus=most + 2)
    wf = Workflow()
    wf.connect(wf.add(count, n=items), wf.add(slow, id="sink"))
    sizing: dict[str, Any] = {"grow": {"actors": Limits(1, most)}, "fixed1": {"workers": 1}}
    events: list[Event] = []
    start = time.perf_counter()
    with RayPool(**sizing.get(name, {"workers": most})) as pool:
        result = run_workflow(wf, pool=pool, collect=True, sink=events.append)
    seconds = time.perf_counter() - start
    assert result.ok and len(result.output("sink")) == items, result.errors
    notes = [e.message for e in events if isinstance(e, NodeLog) and "load actors" in e.message]
    return {"seconds": seconds, "note": str(notes[0]) if notes else ""}


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.contender:
        report(contender(args.contender, args.items, args.load_ms, args.most))
        return
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in CONTENDERS}
    for _ in range(args.reps):
        for name in CONTENDERS:
            command = python("bench.ray_grow", "--contender", name, *passed(args))
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            figures = result_of(done.stdout)
            if not figures:
                raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
            runs[name].append(figures)
    print(f"{machine()}; {args.items} items, a {args.load_ms:g} ms load, max {args.most}\n")
    names = {"fixed1": "1 actor", "grow": f"1:{args.most}, grown", "fixedmax": f"{args.most}"}
    rows = []
    for name in CONTENDERS:
        seconds = [r["seconds"] for r in runs[name]]
        rows.append([names[name], median(seconds), spread(seconds), runs[name][-1]["note"]])
    print(table(["load actors", "seconds (median)", "range", "the pool's note (last rep)"], rows))


def passed(args: argparse.Namespace) -> list[str]:
    return ["--items", str(args.items), "--load-ms", str(args.load_ms), "--most", str(args.most)]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.ray_grow", description=__doc__)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--load-ms", type=float, default=50.0)
    parser.add_argument("--most", type=int, default=6)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--contender", choices=CONTENDERS, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    main()
