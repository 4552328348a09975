"""Whether the editor stays responsive while a large run streams: `graphbook serve` in its own
process, the built web app (`npm run build`) in headless Chromium (playwright-core,
/usr/bin/chromium, 1440x900, the console panel open), driven by bench/frames_page.mjs.

    python -m bench.frames [--quick] [--dicts N] [--idle S]

The workflow is hello's Greetings yielding N dicts (default 1,000,000) into Shout, which logs
every one of them: the page gets progress, previews and as many log lines as the server lets
through (200 a second per node). The page records the gap between animation frames
(`requestAnimationFrame`) and the long tasks the browser reports (PerformanceObserver), first
for S seconds of the same page with nothing running (the contender: what this machine and
headless Chromium give at rest), then from the click on Run to the run's end. Printed: frames,
the median, p99 and longest gap, the frames over 100 ms, the long tasks; and the run's ratio to
the idle page. Target (issue #12): no frame over 100 ms while the run streams.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import OUT, ROOT, machine, table
from bench.preview import start_server

SLOW_FRAME_MS = 100.0


def workflow(dicts: int) -> dict[str, Any]:
    return {
        "format": "graphbook.workflow",
        "version": 1,
        "nodes": [
            {"id": "greetings", "type": "Greetings", "params": {"count": dicts}},
            {"id": "shout", "type": "Shout", "params": {}, "position": {"x": 320, "y": 0}},
        ],
        "edges": [{"source": "greetings", "output": "out", "target": "shout", "input": "in"}],
    }


def figures(name: str, measured: dict[str, Any]) -> list[Any]:
    gaps = sorted(float(g) for g in measured["gaps"])
    long = [float(t) for t in measured["long"]]
    if not gaps:
        return [name, 0, "—", "—", "—", 0, len(long), max(long, default=0.0), measured["seconds"]]
    return [
        name,
        len(gaps),
        gaps[len(gaps) // 2],
        gaps[min(len(gaps) - 1, int(0.99 * len(gaps)))],
        gaps[-1],
        sum(1 for g in gaps if g > SLOW_FRAME_MS),
        len(long),
        max(long, default=0.0),
        measured["seconds"],
    ]


def prepare(folder: Path, dicts: int) -> None:
    for sub in ("workflows", "nodes", "data"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "custom_nodes" / "hello.py", folder / "nodes" / "hello.py")
    (folder / "workflows" / "frames.json").write_text(json.dumps(workflow(dicts)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.frames", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="100,000 dicts instead of 1,000,000")
    parser.add_argument("--dicts", type=int, help="dicts Greetings yields")
    parser.add_argument("--idle", type=float, default=3.0, help="seconds of the page at rest")
    args = parser.parse_args(argv)
    dicts = args.dicts or (100_000 if args.quick else 1_000_000)
    if not (ROOT / "graphbook" / "webapp" / "index.html").exists():
        raise SystemExit("the web app is not built: run `npm run build` first")
    folder = OUT / "frames"
    shutil.rmtree(folder, ignore_errors=True)
    prepare(folder, dicts)
    load = os.getloadavg()[0]
    print(f"frames while a run streams, {machine()}, load {load:.1f}, {dicts:,} dicts", flush=True)
    server, url = start_server(folder)
    try:
        command = ["node", str(ROOT / "bench" / "frames_page.mjs"), url, "frames.json"]
        command += [str(args.idle), "900"]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1000)
    finally:
        server.terminate()
        server.wait(10)
    if done.returncode != 0:
        raise SystemExit(f"the page driver failed:\n{done.stdout}\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    idle = figures("page at rest", result["idle"])
    running = figures(f"run of {dicts:,} dicts", result["running"])
    header = ["while", "frames", "median ms", "p99 ms", "max ms", "> 100 ms"]
    header += ["long tasks", "longest task ms", "seconds"]
    print(table(header, [idle, running]))
    if isinstance(idle[3], float) and isinstance(running[3], float) and idle[3] > 0:
        print(f"p99 frame gap, run / at rest: {running[3] / idle[3]:.2f}")
    print(f"the run as the page shows it at its end: {result['shown']}")
    late = [f"{at / 1000:.1f} s" for at in result["running"].get("longAt", [])]
    more = f" and {len(late) - 20} more" if len(late) > 20 else ""
    print(f"long tasks began at (from the click on Run): {', '.join(late[:20]) or 'none'}{more}")


if __name__ == "__main__":
    main()
