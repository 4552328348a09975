"""Time from an output to its preview in the browser: `graphbook serve` in its own process, a
websocket client in this one (what the browser receives, without drawing it).

    python -m bench.preview [--quick] [--dicts N] [--interval S]

A source node yields `{"t": time.time(), "image": a 224x224 image, ...}` every `interval`
seconds (longer than the server's one preview per output per second, so every dict is
previewed) and a step passes it on. For each `node_output` message the client receives, the
latency is its arrival time minus the dict's `t` (one machine, one clock): the engine handing
the dict on, making the preview, the server's event queue, encoding, the websocket and
decoding in the client. Target: < 100 ms. The client then fetches the image the preview shows,
as the browser does: `image ms` is the time from `t` to its bytes.
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

from PIL import Image

from graphbook import param, source, step


@step("Bench/Stamped")
@source()
@param("n", "int", default=20)
@param("interval", "number", default=1.1)
def stamped(ctx):
    """Yields n dicts, one every `interval` seconds, each stamped with the time it was made."""
    for i in range(ctx.n):
        time.sleep(ctx.interval)
        image = Image.new("RGB", (224, 224), (i * 7 % 256, 90, 160))
        yield {"n": i, "t": time.time(), "payload": list(range(16)), "image": image}


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


async def measure(url: str, dicts: int) -> dict[str, dict[str, list[float]]]:
    """Per node: `preview` (the node_output's arrival) and `image` (its image's bytes fetched)
    latencies, in milliseconds from the dict's stamp."""
    import aiohttp

    latencies = {node: {"preview": [], "image": []} for node in ("src", "pass")}
    async with aiohttp.ClientSession() as session, session.ws_connect(f"{url}ws") as ws:
        async with session.post(f"{url}api/runs", json={"workflow": "preview.json"}) as reply:
            if reply.status != 202:
                raise RuntimeError(f"the server refused the run: {await reply.text()}")
        async for message in ws:
            arrived = time.time()
            event = json.loads(message.data)
            if event["type"] == "node_output" and isinstance(event.get("preview"), dict):
                shown, times = event["preview"], latencies[event["node_id"]]
                stamp = shown.get("t")
                if isinstance(stamp, float):
                    times["preview"].append((arrived - stamp) * 1e3)
                    await _fetch_image(session, url, shown.get("image"), stamp, times["image"])
            elif event["type"] == "run_finished":
                break
    return latencies


async def _fetch_image(
    session: Any, url: str, image: Any, stamp: float, times: list[float]
) -> None:
    """Fetch the image a preview shows, as the browser does, and time it from `stamp`."""
    if not isinstance(image, dict) or not isinstance(image.get("url"), str):
        return
    async with session.get(url + image["url"].lstrip("/")) as reply:
        if reply.status == 200:
            await reply.read()
            times.append((time.time() - stamp) * 1e3)


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
        [node, what, len(values), median(values), _pct(values, 0.9), _max(values)]
        for node, kinds in latencies.items()
        for what, values in kinds.items()
    ]
    print(table(["node", "what", "count", "median ms", "p90 ms", "max ms"], rows))


def _max(values: list[float]) -> float:
    return max(values, default=float("nan"))


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


if __name__ == "__main__":
    main()
