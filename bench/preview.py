"""Time from an output to its preview in the browser: `graphbook serve` in its own process, a
websocket client in this one (what the browser receives, without drawing it).

    python -m bench.preview [--quick] [--dicts N] [--interval S]

A source node yields `{"t": time.time(), ...}` every `interval` seconds (longer than the
server's one preview per output per second, so every dict is previewed) and a step passes it
on. For each `node_output` message the client receives, the latency is its arrival time minus
the dict's `t` (one machine, one clock): the engine handing the dict on, making the preview,
the server's event queue, encoding, the websocket and decoding in the client. Target: < 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import OUT, ROOT, machine, median, table

NODES = '''"""Nodes of the preview benchmark."""

import time

from graphbook import param, source, step


@step("Bench/Stamped")
@source()
@param("n", "int", default=20)
@param("interval", "number", default=1.1)
def stamped(ctx):
    """Yields n dicts, one every `interval` seconds, each stamped with the time it was made."""
    for i in range(ctx.n):
        time.sleep(ctx.interval)
        yield {"n": i, "t": time.time(), "payload": list(range(16))}


@step("Bench/Pass")
def pass_on(ctx, data):
    data["seen"] = True
'''


def workflow(dicts: int, interval: float) -> dict[str, Any]:
    return {
        "format": "graphbook.workflow",
        "version": 1,
        "nodes": [
            {"id": "src", "type": "Stamped", "params": {"n": dicts, "interval": interval}},
            {"id": "pass", "type": "Pass", "params": {}},
        ],
        "edges": [{"source": "src", "output": "out", "target": "pass", "input": "in"}],
    }


def start_server(folder: Path) -> tuple[subprocess.Popen[str], str]:
    """`graphbook serve --port 0` on 127.0.0.1; returns the process and its URL."""
    command = [sys.executable, "-m", "graphbook", "serve", "--port", "0", "--no-watch",
               "--workflows", str(folder / "workflows"), "--nodes", str(folder / "nodes"),
               "--data", str(folder / "data")]  # fmt: skip
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"}
    )
    assert server.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if found:
            return server, found.group(0)
        if not line and server.poll() is not None:
            break
    server.kill()
    raise RuntimeError("graphbook serve did not say where it listens within 60 s")


async def measure(url: str, dicts: int) -> dict[str, list[float]]:
    import aiohttp

    latencies: dict[str, list[float]] = {"src": [], "pass": []}
    async with aiohttp.ClientSession() as session, session.ws_connect(f"{url}ws") as ws:
        await ws.send_json({"type": "run", "workflow": "preview.json", "ref": "1"})
        async for message in ws:
            arrived = time.time()
            event = json.loads(message.data)
            if event["type"] == "node_output" and isinstance(event.get("preview"), dict):
                stamp = event["preview"].get("t")
                if isinstance(stamp, float):
                    latencies[event["node_id"]].append((arrived - stamp) * 1e3)
            elif event["type"] == "error":
                raise RuntimeError(f"the server refused the run: {event}")
            elif event["type"] == "run_finished":
                break
    return latencies


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.preview", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="8 dicts instead of 30")
    parser.add_argument("--dicts", type=int, help="dicts the source yields (default 30)")
    parser.add_argument("--interval", type=float, default=1.05, help="seconds between dicts")
    args = parser.parse_args(argv)
    dicts = args.dicts or (8 if args.quick else 30)
    folder = OUT / "preview"
    for sub in ("workflows", "nodes", "data"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "nodes" / "stamped.py").write_text(NODES)
    doc = workflow(dicts, args.interval)
    (folder / "workflows" / "preview.json").write_text(json.dumps(doc))
    print(f"preview latency, {machine()}, {dicts} dicts", flush=True)
    server, url = start_server(folder)
    try:
        latencies = asyncio.run(measure(url, dicts))
    finally:
        server.terminate()
        server.wait(10)
    rows = [
        [node, len(values), median(values), _pct(values, 0.9), max(values, default=float("nan"))]
        for node, values in latencies.items()
    ]
    print(table(["node", "previews", "median ms", "p90 ms", "max ms"], rows))


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


if __name__ == "__main__":
    main()
