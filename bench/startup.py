"""Start-up: what a person waits for before `graphbook run` does any work.

    python -m bench.startup [--quick] [--reps 5] [--compare /path/to/other/checkout] [--phases]
    python -m bench.startup --wheel [--reps 5]

Each command runs in a fresh process, repetitions interleaved, medians of wall-clock time:
Python itself, importing the CLI, a whole `graphbook run` of a two-node workflow whose node
file imports nothing heavy (with 0 and with 2 workers), importing torch and torchvision (what
an image node file costs before Graphbook does anything), and the image benchmark's plain
workflow on 64 images, whole, less the run's own seconds (`run_finished`): start-up plus
shutdown. `--compare` runs the same commands with another checkout first on PYTHONPATH (say,
main before a change), interleaved, so the two are compared within one run.

The shipped examples, `workflows/hello.json` and `workflows/image_classification.json` (whole
less the run's own seconds), run twice: as `graphbook run` does (it imports only the node files
the workflow uses; a node file may import torch), and importing every node file, as it
did before the node-file index (graphbook/node_index.py).

From `graphbook run` to the first item: the 64-image run's event lines are stamped as they
arrive (`--json` flushes each), which splits its wall time into PHASES: up to `run_started`
(Python, graphbook, the node file's torch and torchvision, the graph), the model built, the
first image out of the batch step, the rest of the run, and the process's end. `--phases` runs
only that, Python and the torch imports (to say how much of the first phase they are).

`--wheel` times only the imports (`python -c pass`, `import graphbook`, `import graphbook.cli`)
and `graphbook --version`, from this checkout and from a wheel of it installed in a fresh
virtual environment (bench/release.py, as the release smoke test installs it), interleaved:
what a person who installs the package waits for, against the checkout.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

from bench.common import OUT, ROOT, busy_seconds, children_seconds, machine, median, table

TINY_NODES = '''"""Two trivial nodes: the start-up benchmark's workflow."""

from graphbook import source, step


@step("Tiny/Count")
@source()
def count(ctx):
    for i in range(10):
        yield {"i": i}


@step("Tiny/Add")
def add(ctx, data):
    data["j"] = data["i"] + 1
'''
TINY = {
    "format": "graphbook.workflow",
    "version": 1,
    "nodes": [
        {"id": "c", "type": "Count", "params": {}},
        {"id": "a", "type": "Add", "params": {}},
    ],
    "edges": [{"source": "c", "output": "out", "target": "a", "input": "in"}],
}


EVERY_NODE_FILE = """
import sys
from graphbook.registry import Registry

def load_all(self, folders, names, modules=None):
    return [spec for folder in folders for spec in self.load_folder(folder)]

Registry.load_needed = load_all
from graphbook.cli import main
sys.exit(main(["run", *sys.argv[1:], "--json"]))
"""
"""`graphbook run WORKFLOW --json`, importing every node file as before the node-file index."""


def examples() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name in ("hello", "image_classification"):
        workflow = f"workflows/{name}.json"
        whole = " (whole - run)" if name != "hello" else ""
        found[f"graphbook run {name}.json{whole}"] = ["-m", "graphbook", "run", workflow, "--json"]
        found[f"{name}.json, every node file{whole}"] = ["-c", EVERY_NODE_FILE, workflow]
    return found


def commands(images_workflow: Path) -> dict[str, list[str]]:
    folder = OUT / "startup"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nodes").mkdir(exist_ok=True)
    (folder / "nodes" / "tiny.py").write_text(TINY_NODES)
    (folder / "tiny.json").write_text(json.dumps(TINY))
    tiny = ["-m", "graphbook", "run", str(folder / "tiny.json"), "--nodes", str(folder / "nodes")]
    images = ["-m", "graphbook", "run", str(images_workflow), "--workers", "2",
              "--nodes", str(ROOT / "bench" / "nodes"), "--json"]  # fmt: skip
    return {
        "python -c pass": ["-c", "pass"],
        "import graphbook": ["-c", "import graphbook"],
        "import graphbook.cli": ["-c", "import graphbook.cli"],
        "graphbook run, tiny, 0 workers": [*tiny, "--workers", "0", "--json"],
        "graphbook run, tiny, 2 workers": [*tiny, "--workers", "2", "--json"],
        "import torch": ["-c", "import torch"],
        "import torch, torchvision": ["-c", "import torch, torchvision"],
        "graphbook run, 64 images (whole - run)": images,
        **examples(),
    }


def timed(args: list[str], path: str) -> tuple[float, float, str]:
    """Wall-clock seconds, CPU-seconds of the process and its children (what the command
    costs, much less disturbed by others' load than its wall time), and its stdout."""
    env = {**os.environ, "PYTHONPATH": path}
    start, cpu = time.perf_counter(), children_seconds()
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    wall, cpu = time.perf_counter() - start, children_seconds() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return wall, cpu, done.stdout


def run_seconds(stdout: str) -> float:
    for line in stdout.splitlines():
        if line.startswith("{") and '"run_finished"' in line:
            return float(json.loads(line)["seconds"])
    raise RuntimeError("no run_finished event")


PHASES = (
    ("start to run_started", "Python, graphbook, the node file (torch, torchvision), the graph"),
    ("to the resource built", "the model built (run_started to its node_finished)"),
    ("to the first item out", "workers forked, the first batch decoded and run"),
    ("to run_finished", "the other 32 images"),
    ("to the process's end", "closing the pool, Python's exit"),
)
"""Where the wall time of `graphbook run` on the 64-image workflow goes, in event order."""


def phased(workflow: Path, path: str) -> list[tuple[float, float]]:
    """(wall seconds, CPU seconds) of each of PHASES: `graphbook run --json`, each event line
    stamped on arrival with the CPU time of the process and its live workers so far (the CPU
    is much less disturbed by others' load than the wall time)."""
    command = [sys.executable, "-m", "graphbook", "run", str(workflow), "--workers", "2",
               "--nodes", str(ROOT / "bench" / "nodes"), "--json"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": path}
    before = children_seconds()
    stamps = [(time.perf_counter(), 0.0)]
    with subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        tree = psutil.Process(child.pid)
        for line in child.stdout:
            event = json.loads(line)
            kind, node = event.get("type"), event.get("node_id")
            first_out = kind == "node_output" and node == "classify" and len(stamps) == 3
            if (
                (kind == "run_started" and len(stamps) == 1)
                or (kind == "node_finished" and node == "model")
                or first_out
                or kind == "run_finished"
            ):
                stamps.append((time.perf_counter(), _tree_cpu(tree)))
    stamps.append((time.perf_counter(), children_seconds() - before))
    if child.returncode != 0 or len(stamps) != len(PHASES) + 1:
        raise RuntimeError(f"graphbook run exited {child.returncode}, {len(stamps)} stamps")
    return [(b[0] - a[0], b[1] - a[1]) for a, b in itertools.pairwise(stamps)]


def _tree_cpu(process: psutil.Process) -> float:
    total = 0.0
    for each in (process, *process.children(recursive=True)):
        with contextlib.suppress(psutil.Error):
            times = each.cpu_times()
            total += times.user + times.system
    return total


def print_phases(phases: dict[str, list[list[tuple[float, float]]]]) -> None:
    labels = list(phases)
    header = ["phase", "what"]
    for label in labels:
        header += [f"{label}: wall ms", "CPU ms"]
    if len(labels) == 2:
        header += ["wall this / other", "CPU this / other"]
    rows = []
    for n, (name, what) in enumerate(PHASES):
        walls = [median([rep[n][0] for rep in phases[label]]) for label in labels]
        cpus = [median([rep[n][1] for rep in phases[label]]) for label in labels]
        rows.append([name, what, *_cells(walls, cpus)])
    walls = [median([sum(p[0] for p in rep) for rep in phases[label]]) for label in labels]
    cpus = [median([sum(p[1] for p in rep) for rep in phases[label]]) for label in labels]
    rows.append(["whole command", "", *_cells(walls, cpus)])
    print(table(header, rows))


def _cells(walls: list[float], cpus: list[float]) -> list[str]:
    cells = []
    for wall, cpu in zip(walls, cpus, strict=True):
        cells += [f"{wall * 1e3:,.0f}", f"{cpu * 1e3:,.0f}"]
    if len(walls) == 2:
        cells += [f"{walls[1] / walls[0]:.3f}", f"{cpus[1] / max(cpus[0], 1e-9):.3f}"]
    return cells


WHEEL_COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "import graphbook": ["-c", "import graphbook"],
    "import graphbook.cli": ["-c", "import graphbook.cli"],
    "graphbook --version": ["-m", "graphbook", "--version"],
}


def compare_wheel(reps: int) -> None:
    """WHEEL_COMMANDS from this checkout and from its wheel installed in a fresh venv."""
    from bench.release import build_wheel, fresh_venv

    folder = OUT / "startup-wheel"
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "elsewhere").mkdir(parents=True)
    python = fresh_venv(build_wheel(folder / "wheel"), folder / "venv")
    plain = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    contenders = {
        "this checkout": (sys.executable, ROOT, {**plain, "PYTHONPATH": str(ROOT)}),
        "the wheel, installed": (str(python), folder / "elsewhere", plain),
    }
    print(f"import times, {machine()}, {reps} rep(s)", flush=True)
    walls: dict[tuple[str, str], list[float]] = {}
    for _ in range(reps):
        for name, args in WHEEL_COMMANDS.items():
            for label, (interpreter, cwd, env) in contenders.items():
                start = time.perf_counter()
                subprocess.run([interpreter, *args], cwd=cwd, env=env, check=True,
                               capture_output=True)  # fmt: skip
                walls.setdefault((name, label), []).append(time.perf_counter() - start)
    rows = []
    for name in WHEEL_COMMANDS:
        checkout, wheel = (median(walls[name, label]) for label in contenders)
        rows.append([name, f"{checkout * 1e3:,.0f}", f"{wheel * 1e3:,.0f}",
                     f"{wheel / checkout:.2f}"])  # fmt: skip
    print(table(["command", "checkout: median ms", "wheel: median ms", "wheel / checkout"], rows))


def main(argv: Sequence[str] | None = None) -> None:
    from bench.images import OUT as IMAGES_OUT
    from bench.images import _workflow, image_folder

    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 repetitions")
    parser.add_argument("--reps", type=int, help="repetitions (default 5, quick 2)")
    parser.add_argument("--compare", type=Path, help="another checkout, run interleaved")
    parser.add_argument(
        "--phases", action="store_true", help="only Python, torch and the 64-image run's phases"
    )
    parser.add_argument("--wheel", action="store_true", help="imports: checkout against wheel")
    args = parser.parse_args(argv)
    reps = args.reps or (2 if args.quick else 5)
    if args.wheel:
        compare_wheel(reps)
        return
    out = IMAGES_OUT / "top5-startup.jsonl"
    workflow = _workflow("mobilenet_v3_small", image_folder(64), out, "plain")
    checkouts = {"this checkout": str(ROOT)}
    if args.compare is not None:
        checkouts = {str(args.compare): str(args.compare.resolve()), **checkouts}
    print(f"start-up, {machine()}, {reps} rep(s)", flush=True)
    walls: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    busy, start = busy_seconds(), time.perf_counter()
    every = commands(workflow)
    if args.phases:
        every = {k: v for k, v in every.items() if k.startswith(("python", "import torch"))}
    phases: dict[str, list[list[tuple[float, float]]]] = {}
    for _ in range(reps):
        for label, path in checkouts.items():
            phases.setdefault(label, []).append(phased(workflow, path))
        for name, command in every.items():
            for label, path in checkouts.items():
                wall, cpu, stdout = timed(command, path)
                if name.endswith("(whole - run)"):
                    wall -= run_seconds(stdout)
                walls.setdefault((name, label), []).append(wall)
                cpus.setdefault((name, label), []).append(cpu)
    load = busy_seconds() - busy
    elapsed = time.perf_counter() - start
    rows = [[name, label, f"{median(values) * 1e3:,.0f}", f"{min(values) * 1e3:,.0f}",
             f"{median(cpus[name, label]) * 1e3:,.0f}"]
            for (name, label), values in walls.items()]  # fmt: skip
    header = ["command", "checkout", "median ms", "min ms", "CPU ms (whole command)"]
    print(table(header, rows))
    print_phases(phases)
    print(f"machine busy (all processes, this benchmark included): {load / elapsed:.2f} cores")


if __name__ == "__main__":
    main()
