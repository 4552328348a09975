"""The image pipeline on Ray: Graphbook's Ray backend (1 and 2 actors per kind) against the local
backend (2 worker processes) and against the same pipeline written by hand with Ray Data.

    python -m bench.ray [--quick] [--model mobilenet_v3_small] [--images N] [--reps 3]
    python -m bench.ray --cli [--images 64] [--reps 3] [--address HOST:PORT]

`--cli` measures something else: a small `graphbook run` end to end, locally and on a cluster
whose actors are warm (bench/ray_cli.py).

Needs `pip install 'graphbook[bench]'` (Ray and Ray Data's pyarrow). Each contender runs in its
own process, repetitions interleaved; each reports the run's own time (Ray's start-up, 2-4 s
here, is not in it: it is paid once per cluster, not per run) and, for the Ray backend, where
the driver's time went. Ratios are taken within a repetition: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from bench.common import (
    CORES,
    OUT,
    busy_seconds,
    machine,
    median,
    python,
    report,
    run_measured,
    spread,
    table,
)
from bench.images import BATCH, NODES, _check, _lines, _workflow, image_folder

CONTENDERS = ("limit", "local", "ray1", "ray2", "raydata")
NAMES = {
    "local": "Graphbook, local (2 worker processes)",
    "ray1": "Graphbook on Ray, 1 actor per kind",
    "ray2": "Graphbook on Ray, 2 actors per kind",
    "raydata": "Ray Data by hand (map + map_batches actor)",
}
IMAGES, QUICK_IMAGES = 1000, 256
ROLES = ("driver", "workers", "raylet", "gcs", "ray services")
"""Where a contender's CPU goes: its own process (scheduler, model, Ray's client threads), the
processes that run load and dump functions (worker processes, Ray actors, Ray Data's workers),
Ray's per-node daemon (with the object store), its control store, and its other processes
(dashboard, log monitor, agents, and the idle workers it starts ahead of tasks)."""


_RAY = importlib.util.find_spec("ray")
RAY_HOME = os.path.dirname(_RAY.origin or "") + os.sep if _RAY else "//"
"""Ray's own folder: its daemons run Python files from there."""


def role(process: psutil.Process, driver: int) -> str:
    if process.pid == driver:
        return "driver"
    name = process.name()
    if name == "raylet":
        return "raylet"
    if name == "gcs_server":
        return "gcs"
    command = process.cmdline()
    title = command[0] if command else name
    if title.startswith("ray::"):  # Ray's worker processes name themselves so
        idle = title.startswith("ray::IDLE")  # started by Ray for tasks to come, not ours
        return "ray services" if idle or title.endswith("Agent") else "workers"
    if any(part.startswith(RAY_HOME) for part in command):
        return "ray services"  # the dashboard, the log monitor, the autoscaler's monitor
    return "workers"


def cpu_by_role() -> collections.Counter[str]:
    """CPU-seconds so far of this process and all its descendants, by role."""
    me = psutil.Process()
    seconds: collections.Counter[str] = collections.Counter()
    for process in [me, *me.children(recursive=True)]:
        try:
            times = process.cpu_times()
            seconds[role(process, me.pid)] += times.user + times.system
        except psutil.Error:  # ended meanwhile
            continue
    return seconds


@contextmanager
def accounted(figures: dict[str, Any]) -> Iterator[None]:
    """Time the block; add its seconds, the CPU-seconds of each role of this process tree
    (`cpu_<role>`) and the cores the rest of the machine used meanwhile (`others`)."""
    before, busy, start = cpu_by_role(), busy_seconds(), time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    after, busy = cpu_by_role(), busy_seconds() - busy
    figures["seconds"] = seconds
    for name in ROLES:
        figures[f"cpu_{name}"] = max(0.0, after[name] - before[name])
    ours = sum(figures[f"cpu_{name}"] for name in ROLES)
    figures["others"] = max(0.0, busy - ours) / seconds


# -- the contenders, each in its own process --------------------------------------------------
def graphbook(model: str, folder: Path, out: Path, backend: str) -> dict[str, Any]:
    """The decorated image workflow (bench/workflows/images.json) through `run_workflow`."""
    # What the node files import, imported before the pool starts, as the CLI does (it loads
    # the node files first): actors preload these, and do not import them on their first task.
    import PIL.Image  # noqa: F401
    import torch  # noqa: F401
    import torchvision  # noqa: F401

    from graphbook import run_workflow
    from graphbook.engine.pool import Pool
    from graphbook.engine.processes import ProcessPool

    workflow = _workflow(model, folder, out, "decorated")
    start = time.perf_counter()
    pool: Pool
    if backend == "local":
        pool = ProcessPool(2)
    else:
        from graphbook.engine.ray.pool import RayPool

        pool = RayPool(None, workers=int(backend[-1]), num_cpus=CORES)
        pool.wait_ready()  # a pool's actors start once; a server's runs all share them
    started = time.perf_counter() - start
    try:
        figures: dict[str, Any] = {"start": started}
        with accounted(figures):
            result = run_workflow(workflow, nodes=[NODES], pool=pool)
        if not result.ok:
            raise RuntimeError(f"the run did not complete: {result.errors[:1]}")
        timings = getattr(pool, "timings", None)
        if timings is not None:
            figures.update(vars(timings))
        return figures
    finally:
        pool.close()


def raydata(model_name: str, folder: Path, out: Path) -> dict[str, Any]:
    """The pipeline as the Ray Data docs write batch inference: decode with `map` (tasks), the
    model in a `map_batches` actor (batch 32, one actor), lines written by the driver."""
    import numpy as np
    import ray
    import torch

    from bench.nodes.images import build_model, json_lines, load_image, top5

    start = time.perf_counter()
    ray.init(num_cpus=CORES, include_dashboard=False, logging_level="ERROR")
    started = time.perf_counter() - start

    class Infer:
        def __init__(self) -> None:
            self.model = build_model(model_name)

        def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
            images = torch.from_numpy(np.stack(batch["image"]))
            classes, scores = top5(self.model, images)
            return {"path": batch["path"], "top5": np.array(classes), "scores": np.array(scores)}

    def decode(row: dict[str, Any]) -> dict[str, Any]:
        return {"path": row["item"], "image": load_image(row["item"]).numpy()}

    paths = sorted(str(p) for p in folder.glob("*.jpg"))
    figures: dict[str, Any] = {"start": started}
    with accounted(figures):
        ds = ray.data.from_items(paths).map(decode)
        ds = ds.map_batches(Infer, batch_size=BATCH, concurrency=1)
        with out.open("w", encoding="utf-8") as file:
            for batch in ds.iter_batches(batch_size=None):
                top, scores = batch["top5"].tolist(), batch["scores"].tolist()
                file.write(json_lines(list(batch["path"]), top, scores))
    ray.shutdown()
    return figures


# -- the harness --------------------------------------------------------------------------------
def repetition(model: str, folder: Path, images: int) -> tuple[float, dict[str, dict[str, Any]]]:
    samples = str(min(images, 256))
    command = python("bench.images", "--contender", "limit", "--model", model)
    limit = run_measured([*command, "--folder", str(folder), "--samples", samples]).figures["ips"]
    figures: dict[str, dict[str, Any]] = {}
    for name in NAMES:
        out = OUT / f"top5-ray-{name}-{model}.jsonl"
        command = python("bench.ray", "--contender", name, "--model", model)
        measured = run_measured([*command, "--folder", str(folder), "--out", str(out)])
        _check(_lines(out), images, NAMES[name])
        _check_predictions(out, images, NAMES[name])
        figures[name] = {"others": measured.others, **measured.figures}
        figures[name]["ips"] = images / measured.figures["seconds"]
    return limit, figures


def _check_predictions(out: Path, images: int, who: str) -> None:
    """Each image once, each with five classes: a count of lines alone passed a run whose
    every line was the same (or an error's)."""
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    paths = {row.get("path") for row in rows}
    if len(paths) != images or any(len(row.get("top5") or []) != 5 for row in rows):
        raise RuntimeError(f"{who} wrote {len(paths)} distinct images of {images}, or lines "
                           f"without a top-5: see {out}")  # fmt: skip


def summary(images: int, reps: list[tuple[float, dict[str, dict[str, Any]]]]) -> str:
    header = ["contender", "images/s (median)", "min..max", "/ local", "/ limit",
              "overhead ms/image vs local", "start s", "others' load (cores)"]  # fmt: skip
    rows = []
    for name, title in NAMES.items():
        rates = [figures[name]["ips"] for _, figures in reps]
        local = [figures["local"]["ips"] for _, figures in reps]
        rows.append([
            title, median(rates), spread(rates),
            median([r / b for r, b in zip(rates, local, strict=True)]),
            median([figures[name]["ips"] / limit for limit, figures in reps]),
            median([1e3 / r - 1e3 / b for r, b in zip(rates, local, strict=True)]),
            median([figures[name]["start"] for _, figures in reps]),
            median([figures[name]["others"] for _, figures in reps]),
        ])  # fmt: skip
    where = ["contender", "tasks", "calls", "sending µs/task", "receiving µs/task",
             "driver blocked, s of the run", "run s"]  # fmt: skip
    spent = []
    for name in ("ray1", "ray2"):
        runs = [figures[name] for _, figures in reps]
        spent.append([
            NAMES[name], median([r["tasks"] for r in runs]), median([r["calls"] for r in runs]),
            median([1e6 * r["sending"] / r["tasks"] for r in runs]),
            median([1e6 * r["receiving"] / r["tasks"] for r in runs]),
            median([r["waiting"] for r in runs]), median([r["seconds"] for r in runs]),
        ])  # fmt: skip
    limits = ", ".join(f"{limit:.1f}" for limit, _ in reps)
    return (
        f"{images} images; the limit (decode + model CPU time over {CORES} cores): {limits} "
        f"images/s\n\n{table(header, rows)}\n\nWhere the CPU went, ms per image (medians; "
        f"the load slows every process alike, so compare within a row and down a column):\n\n"
        f"{cpu_table(images, reps)}\n\nWhere the Ray driver's time went "
        f"(a task is one load or dump call):\n\n{table(where, spent)}"
    )


def cpu_table(images: int, reps: list[tuple[float, dict[str, dict[str, Any]]]]) -> str:
    header = ["contender", *ROLES, "all", "/ local"]
    rows = []
    for name, title in NAMES.items():
        runs = [figures[name] for _, figures in reps]
        per_role = [median([1e3 * r[f"cpu_{role}"] / images for r in runs]) for role in ROLES]

        def total(figures: dict[str, Any]) -> float:
            return sum(figures[f"cpu_{role}"] for role in ROLES)

        local = [total(figures["local"]) for _, figures in reps]
        ratio = median([total(r) / b for r, b in zip(runs, local, strict=True)])
        rows.append([title, *per_role, median([1e3 * total(r) / images for r in runs]), ratio])
    return table(header, rows)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.contender is not None:
        run_contender(args)
        return
    if args.cli:
        from bench import ray_cli

        ray_cli.main(args.model, args.images, args.reps, args.address)
        return
    OUT.mkdir(parents=True, exist_ok=True)
    images = args.images or (QUICK_IMAGES if args.quick else IMAGES)
    count = args.reps or (1 if args.quick else 3)
    print(f"image pipeline on Ray, {args.model}, {machine()}, {count} rep(s)", flush=True)
    folder = image_folder(images)
    reps = []
    for n in range(count):
        limit, figures = repetition(args.model, folder, images)
        reps.append((limit, figures))
        rates = ", ".join(f"{k} {v['ips']:.1f}" for k, v in figures.items())
        load = max(v["others"] for v in figures.values())
        print(f"  rep {n + 1}/{count}: limit {limit:.1f}, {rates} images/s; "
              f"others' load up to {load:.2f} cores", flush=True)  # fmt: skip
    print(summary(images, reps))


def run_contender(args: argparse.Namespace) -> None:
    if args.contender == "raydata":
        report(raydata(args.model, args.folder, args.out))
    else:
        report(graphbook(args.model, args.folder, args.out, args.contender))


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.ray", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer images, one repetition")
    parser.add_argument("--model", default="mobilenet_v3_small")
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    parser.add_argument("--images", type=int, help=f"images per run (default {IMAGES})")
    parser.add_argument(
        "--cli", action="store_true", help="a small graphbook run, warm cluster against local"
    )
    parser.add_argument(
        "--address", help="with --cli, a Ray cluster's address (default: start one here)"
    )
    parser.add_argument("--contender", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    main()
