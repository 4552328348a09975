"""Stage actors on a two-node cluster: the model on replicas on both nodes against one, and
the driver's CPU and the bytes it reads back per image with stage actors against without.

    python -m bench.ray_stages [--images 256] [--reps 2] [--model mobilenet_v3_small] [--warm]

Builds the two-node cluster of tests/ray_cluster/cluster_procs.py (node 2 in its own mount
namespace, 1 CPU each) and runs the image pipeline of bench/images.py (decode, batch 32, a
torchvision model with random weights on the CPU, top-5 JSON lines written on the driver's
node) through `run_workflow` on it three ways, each in a driver process of its own,
repetitions interleaved:

- `off`: `--ray-stages off`, the model on the driver (every decoded image comes back to it);
- `one`: stage actors, `--ray-replicas 1` (one replica of the model);
- `all`: stage actors, the default (a replica on each node).

Each reports the run's seconds (stage actors start inside the run: they import torch and load
the model; with `--warm` the run measured is a pool's second, whose stage actors are up), its
steady rate (images/s between the classifier's first and last progress), the driver process's
CPU seconds (its own, Ray's threads in it included) and the bytes of outcomes it read back
(`RayPool.timings.received`), per image.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import OUT, ROOT, machine, median, python, report, run_measured, table
from bench.images import NODES, _lines, _workflow, image_folder

CONTENDERS = ("off", "one", "all")
NAMES = {
    "off": "stages off: the model on the driver",
    "one": "stage actors, --ray-replicas 1",
    "all": "stage actors, a replica per node (default)",
}
IMAGES = 256


def contender(
    name: str, address: str, model: str, folder: Path, out: Path, warm: bool
) -> dict[str, Any]:
    """One run of the image pipeline on the cluster at `address`, measured in this driver;
    `warm`: after a first run on the same pool (as a server's runs share theirs)."""
    import PIL.Image  # noqa: F401  (what the node files import: actors preload it)
    import torch  # noqa: F401
    import torchvision  # noqa: F401

    from graphbook import run_workflow
    from graphbook.engine.ray.pool import RayPool
    from graphbook.events import Event, NodeProgress

    workflow = _workflow(model, folder, out, "decorated")
    stages = "off" if name == "off" else "on"
    progress: list[tuple[float, int]] = []

    def sink(event: Event) -> None:
        if isinstance(event, NodeProgress) and event.node_id == "classify":
            progress.append((time.perf_counter(), sum(event.counts.values())))

    with RayPool(address, workers=2, stages=stages, replicas=1 if name == "one" else 0) as pool:
        pool.wait_ready()
        if warm:  # a run before: its stage actors stay up for the measured one
            run_workflow(workflow, nodes=[NODES], pool=pool)
            progress.clear()
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        read = pool.timings.received  # the warm-up run's are not this run's
        result = run_workflow(workflow, nodes=[NODES], pool=pool, sink=sink)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        received = pool.timings.received - read
    if not result.ok:
        raise RuntimeError(f"the {name} run did not complete: {result.errors[:1]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"seconds": seconds, "cpu": cpu, "received": received, "steady": steady(progress)}


def steady(progress: list[tuple[float, int]]) -> float:
    """Images/s from the classifier's first batch out to its last."""
    started = [(t, n) for t, n in progress if n > 0]
    if len(started) < 2:
        return float("nan")
    (t0, n0), (t1, n1) = started[0], started[-1]
    return (n1 - n0) / max(t1 - t0, 1e-9)


def repetition(
    env: dict[str, str], address: str, model: str, folder: Path, images: int, warm: bool
) -> dict[str, dict[str, Any]]:
    figures = {}
    for name in CONTENDERS:
        out = OUT / f"ray-stages-{name}.jsonl"
        command = python("bench.ray_stages", "--contender", name, "--address", address)
        command += ["--model", model, "--folder", str(folder), "--out", str(out)]
        command += ["--warm"] if warm else []
        measured = run_measured(command, env=env)
        if _lines(out) != images:
            raise RuntimeError(f"{name} wrote {_lines(out)} lines for {images} images")
        figures[name] = {**measured.figures, "others": measured.others}
    return figures


def summary(images: int, reps: list[dict[str, dict[str, Any]]]) -> str:
    rows = []
    for name in CONTENDERS:
        runs = [rep[name] for rep in reps]
        rows.append(
            [
                NAMES[name],
                median([images / r["seconds"] for r in runs]),
                median([r["steady"] for r in runs]),
                median([1e3 * r["cpu"] / images for r in runs]),
                median([r["received"] / images / 1e3 for r in runs]),
            ]
        )
    header = ["run", "images/s (whole run)", "images/s (steady)", "driver CPU ms/image"]
    lines = [table([*header, "KB read by the driver/image"], rows)]
    replicas = median([rep["all"]["steady"] / rep["one"]["steady"] for rep in reps])
    cpu = median([rep["off"]["cpu"] / rep["all"]["cpu"] for rep in reps])
    lines.append(
        f"\nreplicas on both nodes against one (steady images/s, within a rep): {replicas:.2f}x"
        f"\nthe driver's CPU per image, stages off against on (default): {cpu:.1f}x"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.contender is not None:
        figures = contender(
            args.contender, args.address, args.model, args.folder, args.out, args.warm
        )
        report(figures)
        return
    sys.path.insert(0, str(ROOT / "tests" / "ray_cluster"))
    from cluster_procs import start

    OUT.mkdir(parents=True, exist_ok=True)
    folder = image_folder(args.images)
    print(f"stage actors on a two-node cluster, {args.model}, {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="gb-stages-") as private:
        cluster = start(Path(private))
        try:
            reps = []
            for n in range(args.reps):
                rep = repetition(
                    cluster.env, cluster.address, args.model, folder, args.images, args.warm
                )
                reps.append(rep)
                said = ", ".join(f"{k} {v['steady']:.1f}" for k, v in rep.items())
                print(f"  rep {n + 1}/{args.reps}: steady images/s {said}", flush=True)
                print("  " + json.dumps(rep), flush=True)
        finally:
            cluster.stop()
    print(summary(args.images, reps))


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.ray_stages", description=__doc__)
    parser.add_argument("--model", default="mobilenet_v3_small")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--images", type=int, default=IMAGES)
    parser.add_argument(
        "--warm",
        action="store_true",
        help="measure each contender's second run on its pool (stage actors up already)",
    )
    parser.add_argument("--contender", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    main()
