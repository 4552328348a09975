"""A small `graphbook run` end to end: locally, and on a Ray cluster whose actors are warm (kept
by the run before: `--ray-keep`) or cold (new node code: fresh actors that import torch).

    python -m bench.ray --cli [--images 64] [--reps 3] [--address HOST:PORT]

Each contender is the whole command as a user types it (Python's start, imports, joining Ray,
the run, the exit), timed by the wall clock, repetitions interleaved: local (2 worker
processes), warm (the cluster's actors attached), cold (`--ray-keep 0` after a change to the
nodes folder, so no actor runs its code yet). Ratios are taken within a repetition: the
machine is shared and noisy. Without `--address`, a one-node cluster (`ray start --head`, 2
CPUs) is started on this machine and stopped (by its process group, never `ray stop`) at the
end.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.common import OUT, ROOT, machine, median, python, run_measured, spread, table
from bench.images import NODES, _lines, _workflow, image_folder

CLI_IMAGES = 64
WORKERS = 2
CONTENDERS = ("local", "warm", "cold")
NAMES = {
    "local": "graphbook run, local (2 worker processes)",
    "warm": "graphbook run --ray ADDRESS, warm actors attached",
    "cold": "graphbook run --ray ADDRESS, new node code (fresh actors)",
}
START = 240.0
"""Seconds a head node may take to start on a loaded machine."""


def env() -> dict[str, str]:
    """What every process gets: this checkout first, Ray's token authentication as a cluster
    has it by default."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {"PYTHONPATH": path, "RAY_AUTH_MODE": "token", "RAY_raylet_start_wait_time_s": "240"}


@contextlib.contextmanager
def cluster(address: str | None) -> Iterator[str]:
    """The cluster's address: the one given, or a head started here until the end."""
    if address is not None:
        yield address
        return
    folder = Path(tempfile.mkdtemp(prefix="gb-bench-ray-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ray = str(Path(sys.executable).with_name("ray"))
    command = [ray, "start", "--head", f"--port={port}", f"--temp-dir={folder}", "--block"]
    command += ["--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats"]
    log = folder / "start.log"
    head = subprocess.Popen(
        command,
        env={**os.environ, **env()},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + START
        while "Ray runtime started" not in log.read_text():
            if head.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the head did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)
        head.wait(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)


def project(model: str, images: int) -> tuple[Path, Path, Path]:
    """The workflow, a copy of the benchmark's nodes folder (changed for each cold run) and
    where the predictions go."""
    folder = OUT / "ray-cli"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(NODES, folder / "nodes", ignore=shutil.ignore_patterns("__pycache__"))
    out = folder / "top5.jsonl"
    return _workflow(model, image_folder(images), out, "decorated"), folder / "nodes", out


def run(workflow: Path, nodes: Path, out: Path, images: int, *more: str) -> tuple[float, str]:
    """One `graphbook run` end to end: its wall seconds and what it said."""
    out.unlink(missing_ok=True)
    command = python("graphbook", "run", str(workflow), "--nodes", str(nodes), "--quiet")
    measured = run_measured([*command, "--workers", str(WORKERS), *more], env=env())
    lines = _lines(out) if out.exists() else 0
    if lines != images:
        raise RuntimeError(f"{' '.join(more) or 'local'}: {lines} predictions for {images} images")
    return measured.wall, measured.stdout


def main(model: str, images: int | None, reps: int | None, address: str | None) -> None:
    images = images or CLI_IMAGES
    count = reps or 3
    print(f"a small graphbook run, {images} images, {machine()}, {count} rep(s)", flush=True)
    workflow, nodes, out = project(model, images)
    with cluster(address) as where:
        ray = ["--ray", where]
        first, _ = run(workflow, nodes, out, images, *ray)  # keeps its actors for the reps
        print(f"  first run on the cluster (its actors start): {first:.1f} s", flush=True)
        times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
        for n in range(count):
            times["local"].append(run(workflow, nodes, out, images)[0])
            times["warm"].append(run(workflow, nodes, out, images, *ray)[0])
            (nodes / "changed.py").write_text(f"REVISION = {n}\n")  # new code: new namespace
            times["cold"].append(run(workflow, nodes, out, images, *ray, "--ray-keep", "0")[0])
            (nodes / "changed.py").unlink()  # the warm actors' code again
            said = ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items())
            print(f"  rep {n + 1}/{count}: {said}", flush=True)
        run(workflow, nodes, out, images, *ray, "--ray-keep", "0")  # ends the kept actors
    print(summary(times))


def summary(times: dict[str, list[float]]) -> str:
    header = ["", "seconds (median)", "range", "x local (median of ratios)"]
    rows = []
    for name in CONTENDERS:
        ratios = [t / local for t, local in zip(times[name], times["local"], strict=True)]
        rows.append([NAMES[name], median(times[name]), spread(times[name]), median(ratios)])
    return table(header, rows)


if __name__ == "__main__":
    main("mobilenet_v3_small", None, None, None)
