"""Fault probes against a real `graphbook serve`: `python -m bench.faults [--tries N]` prints,
per category, how many probes were tried and how many the server held (it kept answering, no
500, no closed websocket, nothing lost). The next round of fault-finding starts from these
figures (issue 25).

- encoding: a lone surrogate in every client message field and in the routes' inputs
- store lock: another process holds the run store's write lock while runs go on
- finish/run: a new run sent the moment `run_finished` arrives
- stop: Stop at a random moment of runs of 1 to 10,000 nodes (never recorded `failed`)
- stop stuck: Stop of node code blocked in C or holding the GIL: the run ends `stopped` within
  STUCK_BOUND seconds, the server answers meanwhile, and the next run is taken
- large edit: an MCP edit_workflow of 4,000 then 20,000 add_node operations (over /mcp) ends
  within EDIT_BOUND seconds, /api/info answering within PROMPT meanwhile; one of more than the
  limit is refused
- stop fork: Stop of node code that forked a child which never exits (in its process group,
  or one that left it): the run ends `stopped` within STUCK_BOUND seconds, the next is taken
- node files: a server started with a node file that exits, kills itself, raises
  KeyboardInterrupt or loops at import: it serves, lists the file's failure, runs the others
- sink files: `graphbook run` killed (SIGTERM, SIGINT, SIGKILL) at a random moment: every
  sink's file is as the run before wrote it, and the next run leaves no temporary behind

It also prints the median time from starting a run to its first `node_started` (the run host
is warm, or the engine's thread starts), to compare before and after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from bench.common import ROOT

NODES = '''"""Nodes for the fault probes."""

import time
from typing import Any

from graphbook import param, source, step


@step("Probe/Count")
@source()
@param("n", "int", default=3)
def count(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"x": i}


@step("Probe/Hog")
def hog(ctx: Any, data: dict) -> None:
    sum(range(10**15))  # one C call that never gives the GIL up


@step("Probe/Blocked")
def blocked(ctx: Any, data: dict) -> None:
    import threading

    threading.Event().wait()  # blocked in C, the GIL released


@step("Probe/Fork")
@param("leave", "boolean", default=False)
def forking(ctx: Any, data: dict) -> None:
    import os
    import threading

    if os.fork() == 0:
        if ctx.leave:
            os.setsid()
        time.sleep(60)  # the probe's bound: an orphan the server failed to end goes by itself
        os._exit(0)
    threading.Event().wait()


@step("Probe/Pass")
@param("delay", "number", default=0.0)
def passing(ctx: Any, data: dict) -> None:
    if ctx.delay:
        time.sleep(ctx.delay)
'''
SERVING = re.compile(r"serving on (http://127\.0\.0\.1:\d+/)")
PROMPT = 1.0
STUCK_BOUND = 10.0
"""Seconds within which a Stop of node code that does not stop must end the run."""
EDIT_BOUND = 30.0
"""Seconds within which an edit of 20,000 operations must be applied and written."""
EDIT_SIZES = (4_000, 20_000)
"""Seconds within which the server must answer while a probe is going on."""
BAD = "\\ud800"
"""A lone surrogate as JSON writes it."""
BAD_IN_URL = "%ED%A0%80"
"""A lone surrogate as a URL carries it: percent-encoded bytes that are not UTF-8."""


@dataclass
class Tally:
    tried: int = 0
    held: int = 0
    note: str = ""

    def add(self, held: bool, why: str = "") -> None:
        self.tried += 1
        self.held += held
        if not held and not self.note:
            self.note = why


def chain(nodes: int, items: int = 3, delay: float = 0.0) -> dict[str, Any]:
    """Count -> Pass -> Pass ...: `nodes` nodes in all."""
    found = [{"id": "n0", "type": "Count", "params": {"n": items}}]
    found += [{"id": f"n{i}", "type": "Pass", "params": {"delay": delay}} for i in range(1, nodes)]
    edges = [
        {"source": f"n{i - 1}", "output": "out", "target": f"n{i}", "input": "in"}
        for i in range(1, nodes)
    ]
    return {"format": "graphbook.workflow", "version": 1, "nodes": found, "edges": edges}


@contextlib.contextmanager
def serving(
    folder: Path, files: dict[str, str] | None = None, more: tuple[str, ...] = ()
) -> Iterator[str]:
    (folder / "nodes").mkdir()
    (folder / "nodes" / "probe_nodes.py").write_text(NODES)
    for name, text in (files or {}).items():
        (folder / "nodes" / name).write_text(text)
    (folder / "workflows").mkdir()
    (folder / "workflows" / "quick.json").write_text(json.dumps(chain(2, items=1)))
    command = [sys.executable, "-m", "graphbook", "serve", "--no-watch", "--port", "0"]
    command += ["--nodes", "nodes", "--workflows", "workflows", "--data", "data", *more]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert process.stdout is not None
    found = SERVING.search(process.stdout.readline())
    try:
        if found is None:
            raise SystemExit("graphbook serve did not start")
        yield found.group(1)
    finally:
        process.send_signal(2)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:  # frozen (node code holding the GIL)
            process.kill()
            process.wait(30)


class Probe:
    def __init__(self, http: aiohttp.ClientSession, url: str) -> None:
        self.http = http
        self.url = url

    async def call(self, method: str, path: str, **kw: Any) -> tuple[int, Any]:
        async with self.http.request(method, self.url + path.lstrip("/"), **kw) as response:
            text = await response.text()
            return response.status, json.loads(text) if text.startswith(("{", "[")) else text

    async def alive(self) -> bool:
        """/api/info answers within PROMPT, and a new client gets hello and a snapshot."""
        try:
            began = time.monotonic()
            status, _ = await asyncio.wait_for(self.call("GET", "/api/info"), PROMPT * 5)
            if status != 200 or time.monotonic() - began > PROMPT:
                return False
            async with self.http.ws_connect(self.url + "ws") as ws:
                kinds = [json.loads((await ws.receive(timeout=5)).data)["type"] for _ in "ab"]
            return kinds == ["hello", "snapshot"]
        except (aiohttp.ClientError, TimeoutError, ValueError, TypeError):
            return False

    async def until(self, ws: aiohttp.ClientWebSocketResponse, kind: str, timeout: float) -> Any:
        async def wait() -> Any:
            while True:
                message = await ws.receive()
                if message.type != aiohttp.WSMsgType.TEXT:
                    raise ConnectionError(f"the websocket closed ({message.type.name})")
                data = json.loads(message.data)
                if data["type"] == kind:
                    return data

        return await asyncio.wait_for(wait(), timeout)


ENCODING_MESSAGES = [
    '{"type": "ping", "ref": "%s"}',
    '{"type": "%s"}',
    '{"type": "ping", "ref": "after", "%s": 1}',
]
"""What a websocket client sends (the websocket takes `ping`; every other type is refused)."""

ENCODING_ROUTES = [
    ("POST", "/api/runs", '{"workflow": "%s.json"}'),
    ("POST", "/api/runs", '{"workflow": "quick.json", "node": "%s", "mode": "until"}'),
    ("POST", "/api/runs", '{"workflow": "quick.json", "overrides": {"n0": {"%s": 1}}}'),
    ("POST", "/api/runs", '{"workflow": "quick.json", "inputs": {"%s": "%s"}}'),
    ("POST", "/api/jobs", '{"workflow": "quick.json", "overrides": {"n0": {"x": "%s"}}}'),
    ("POST", "/api/runs/current/%s", "{}"),
    ("POST", "/api/prompts/%s", '{"answer": "%s"}'),
    ("POST", "/api/cache/clear", '{"workflow": "quick.json", "node": "%s"}'),
    ("GET", "/api/runs/last?workflow=%s.json", None),
    ("GET", "/api/workflows/%s.json", None),
    ("PUT", "/api/settings", '{"%s": "%s"}'),
]
"""What an HTTP client sends, each with the bad string where a name or a value goes."""


async def encoding(probe: Probe, tally: Tally, tries: int) -> None:
    for i in range(tries):
        template = ENCODING_MESSAGES[i % len(ENCODING_MESSAGES)]
        text = template.replace("%s", BAD)
        try:
            async with probe.http.ws_connect(probe.url + "ws") as ws:
                await ws.send_str(text)
                await ws.send_str('{"type": "ping", "ref": "after"}')
                await probe.until(ws, "pong", 5)
            held = True
        except (ConnectionError, TimeoutError, aiohttp.ClientError):
            held = False
        tally.add(held and await probe.alive(), f"websocket message {template}")
    graph = chain(2, items=1)
    graph["nodes"][0]["label"] = "\ud800"
    headers = {"Content-Type": "application/json"}
    routes = [
        (m, path, body.replace("%s", BAD) if body else None) for m, path, body in ENCODING_ROUTES
    ]
    routes += [
        ("PUT", "/api/workflows/label.json", json.dumps(graph)),  # the surrogate as a JSON escape
        ("POST", "/api/runs", json.dumps({"workflow": "quick.json", "graph": graph})),
        ("GET", "/api/runs", None),
        ("GET", "/api/runs/current", None),
        ("GET", "/api/jobs", None),
    ]
    for method, path, data in routes:
        path = path.replace("%s", BAD_IN_URL)
        status, _ = await probe.call(method, path, data=data, headers=headers)
        await idle(probe)
        tally.add(status < 500 and await probe.alive(), f"{method} {path}: {status}")


async def idle(probe: Probe) -> None:
    for _ in range(500):
        _, current = await probe.call("GET", "/api/runs/current")
        run = current.get("run") if isinstance(current, dict) else None
        if run is None or run["status"] not in ("running", "paused"):
            return
        await asyncio.sleep(0.02)


HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
db.execute("COMMIT")
"""


async def store_lock(probe: Probe, tally: Tally, tries: int, folder: Path) -> None:
    for _ in range(tries):
        store = folder / "data" / "graphbook.sqlite"
        holder = await asyncio.create_subprocess_exec(
            sys.executable, "-c", HOLD, str(store), stdin=-1, stdout=-1
        )
        assert holder.stdout is not None and holder.stdin is not None
        await holder.stdout.readline()
        try:
            async with probe.http.ws_connect(probe.url + "ws") as ws:
                status, _ = await probe.call("POST", "/api/runs", json={"workflow": "quick.json"})
                finished = await probe.until(ws, "run_finished", 5) if status == 202 else None
                answering = await probe.alive()
        except (ConnectionError, TimeoutError):
            finished, answering = None, False
        holder.stdin.close()
        await holder.wait()
        recorded = False
        for _ in range(200):
            _, runs = await probe.call("GET", "/api/runs")
            ids = {r["run_id"]: r["status"] for r in runs.get("runs", [])}
            if finished is not None and ids.get(finished["run_id"]) == "completed":
                recorded = True
                break
            await asyncio.sleep(0.05)
        tally.add(bool(finished) and answering and recorded, "a run under a held lock")


async def finish_run(probe: Probe, tally: Tally, tries: int) -> None:
    """A new run asked for the moment a client sees the last one's run_finished is accepted."""
    async with probe.http.ws_connect(probe.url + "ws") as ws:
        for _ in range(tries):
            status, reply = await probe.call("POST", "/api/runs", json={"workflow": "quick.json"})
            why = reply.get("message", "") if isinstance(reply, dict) else reply
            tally.add(status == 202, f"{status}: {why}")
            if status == 202:
                await probe.until(ws, "run_finished", 30)
            else:
                await idle(probe)


async def stop(probe: Probe, tally: Tally, tries: int, largest: int) -> None:
    sizes = [n for n in (1, 10, 100, 1000, 10_000) if n <= largest]
    for i in range(tries):
        nodes = sizes[i % len(sizes)]
        await probe.call("PUT", "/api/workflows/big.json", json=chain(nodes, 20, 0.01))
        async with probe.http.ws_connect(probe.url + "ws") as ws:
            began = time.monotonic()
            started, _ = await probe.call("POST", "/api/runs", json={"workflow": "big.json"})
            await asyncio.sleep(random.uniform(0, 0.5))  # a random moment of the run
            await probe.call("POST", "/api/runs/current/stop")
            try:
                finished = await probe.until(ws, "run_finished", 5 + 5 * nodes / 1000)
                ended = finished["status"] != "failed"
            except (ConnectionError, TimeoutError):
                ended = False
        await idle(probe)
        status = await run_to_end(probe, "quick.json")
        took = time.monotonic() - began
        why = f"{nodes} nodes: started {started}, ended {ended}, next run {status}, {took:.1f} s"
        held = started == 202 and ended and status == 202 and await probe.alive()
        tally.add(held, why)


async def stop_stuck(probe: Probe, tally: Tally, tries: int) -> None:
    try:
        await stop_stuck_tries(probe, tally, tries)
    except (ConnectionError, TimeoutError, aiohttp.ClientError) as exc:  # the server froze
        tally.add(False, f"the server stopped answering ({type(exc).__name__})")
        tally.tried += tries - tally.tried


async def stop_stuck_tries(
    probe: Probe, tally: Tally, tries: int, kinds: tuple[str, ...] = ("Blocked", "Hog")
) -> None:
    for i in range(tries):
        kind = kinds[i % len(kinds)]
        document = chain(2, items=1)
        document["nodes"][1]["type"] = kind.split(":")[0]
        document["nodes"][1]["params"] = {"leave": True} if kind.endswith(":leave") else {}
        await probe.call("PUT", "/api/workflows/stuck.json", json=document)
        async with probe.http.ws_connect(probe.url + "ws") as ws:
            started, _ = await probe.call("POST", "/api/runs", json={"workflow": "stuck.json"})
            await probe.until(ws, "node_started", 30)  # the source, then the stuck node
            await probe.until(ws, "node_started", 30)
            answering = await probe.alive()
            began = time.monotonic()
            try:
                await asyncio.wait_for(probe.call("POST", "/api/runs/current/stop"), STUCK_BOUND)
                finished = await probe.until(ws, "run_finished", STUCK_BOUND)
                status = finished["status"]
            except (ConnectionError, TimeoutError):
                status = "not ended"
            took = time.monotonic() - began
        if status == "not ended" and not await probe.alive():  # frozen for good: stop here
            tally.add(False, f"{kind}: the server froze ({took:.1f} s)")
            tally.tried += tries - i - 1
            return
        accepted = await run_to_end(probe, "quick.json")
        why = f"{kind}: answering {answering}, {status} in {took:.1f} s, next run {accepted}"
        held = started == 202 and answering and status == "stopped" and accepted == 202
        tally.add(held, why)


async def large_edit(probe: Probe, tally: Tally, tries: int) -> None:
    """edit_workflow with thousands of operations, /api/info asked all the while."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(probe.url + "mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i in range(tries):
            size = EDIT_SIZES[i % len(EDIT_SIZES)]
            operations = [{"op": "add_node", "type": "Count"} for _ in range(size)]
            arguments = {"path": f"large{i}.json", "operations": operations, "create": True}
            began = time.monotonic()
            editing = asyncio.create_task(session.call_tool("edit_workflow", arguments))
            slowest = 0.0
            while not editing.done():
                asked = time.monotonic()
                await probe.call("GET", "/api/info")
                slowest = max(slowest, time.monotonic() - asked)
                await asyncio.sleep(0.02)
            result, took = await editing, time.monotonic() - began
            why = f"{size:,} operations: {took:.1f} s, /api/info at most {slowest:.2f} s"
            print(f"  large edit: {why}", file=sys.stderr, flush=True)
            held = not result.is_error and took < EDIT_BOUND and slowest < PROMPT
            tally.add(held, why if not result.is_error else f"{size:,}: refused")
        arguments["operations"] = [{"op": "add_node", "type": "Count"}] * 50_001
        over = await session.call_tool("edit_workflow", arguments)
        text = getattr(over.content[0], "text", "")
        tally.add(over.is_error and "at most 50,000" in text, f"over the limit: {text:.120}")


async def stop_fork(probe: Probe, tally: Tally, tries: int) -> None:
    try:
        await stop_stuck_tries(probe, tally, tries, ("Fork", "Fork:leave"))
    except (ConnectionError, TimeoutError, aiohttp.ClientError) as exc:
        tally.add(False, f"the server stopped answering ({type(exc).__name__})")
        tally.tried += tries - tally.tried


async def run_to_end(probe: Probe, workflow: str) -> int:
    """Start a run and wait for its end (it may wait for a run host that is loading, which
    /api/runs/current does not show); the status its start was answered with."""
    async with probe.http.ws_connect(probe.url + "ws") as ws:
        status, _ = await probe.call("POST", "/api/runs", json={"workflow": workflow})
        if status == 202:
            await probe.until(ws, "run_finished", 60)
    return int(status)


async def first_node(probe: Probe, tries: int) -> list[float]:
    """Seconds from POST /api/runs to the run's first node_started, per try."""
    found = []
    async with probe.http.ws_connect(probe.url + "ws") as ws:
        for _ in range(tries):
            await idle(probe)
            await probe.call("POST", "/api/cache/clear", json={"workflow": "quick.json"})
            began = time.monotonic()
            await probe.call("POST", "/api/runs", json={"workflow": "quick.json"})
            await probe.until(ws, "node_started", 30)
            found.append(time.monotonic() - began)
            await probe.until(ws, "run_finished", 30)
    return found


async def probe_all(url: str, folder: Path, tries: int, largest: int) -> dict[str, Tally]:
    names = (
        "encoding",
        "store lock",
        "finish/run",
        "stop",
        "stop stuck",
        "stop fork",
        "large edit",
    )
    tallies = {name: Tally() for name in names}
    async with aiohttp.ClientSession() as http:
        probe = Probe(http, url)
        await first_node(probe, 1)  # the first run may wait for what loads at the start
        times = sorted(await first_node(probe, tries))
        median = times[len(times) // 2] * 1000
        print(f"run to first node_started: median {median:.0f} ms of {tries}", flush=True)
        steps: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("encoding", lambda: encoding(probe, tallies["encoding"], tries)),
            ("store lock", lambda: store_lock(probe, tallies["store lock"], 2, folder)),
            ("finish/run", lambda: finish_run(probe, tallies["finish/run"], tries * 3)),
            ("stop", lambda: stop(probe, tallies["stop"], tries, largest)),
            ("stop stuck", lambda: stop_stuck(probe, tallies["stop stuck"], tries)),
            ("stop fork", lambda: stop_fork(probe, tallies["stop fork"], tries)),
            ("large edit", lambda: large_edit(probe, tallies["large edit"], min(tries, 4))),
        ]
        for name, step in steps:
            began = time.monotonic()
            await step()
            print(f"  {name}: {time.monotonic() - began:.1f} s", file=sys.stderr, flush=True)
    return tallies


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.faults")
    parser.add_argument("--tries", type=int, default=10, help="probes per category")
    parser.add_argument("--largest", type=int, default=1000, help="nodes of the largest run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder, serving(Path(folder)) as url:
        tallies = asyncio.run(probe_all(url, Path(folder), args.tries, args.largest))
    tallies["node files"] = node_files(args.tries)
    tallies["sink files"] = sink_files(args.tries)
    print("| category | tried | held | first not held |")
    print("|---|---:|---:|---|")
    for name, tally in tallies.items():
        print(f"| {name} | {tally.tried} | {tally.held} | {tally.note} |")


BAD_FILES = {
    "exits": ("import sys\nsys.exit(3)\n", "SystemExit"),
    "os_exit": ("import os\nos._exit(3)\n", "exit code 3"),
    "kills": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "SIGKILL"),
    "interrupts": ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    "loops": ("while True:\n    pass\n", "within"),
}
"""A node file that ends or freezes its import -> what its listed failure says."""


def node_files(tries: int) -> Tally:
    """A server started with one bad node file beside the probe nodes, per try."""
    tally = Tally()
    kinds = list(BAD_FILES)
    for i in range(tries):
        kind = kinds[i % len(kinds)]
        source, said = BAD_FILES[kind]
        with tempfile.TemporaryDirectory() as folder:
            bad = {f"bad_{kind}.py": source}
            try:
                with serving(Path(folder), bad, ("--import-limit", "3")) as url:
                    held, why = asyncio.run(serves_despite(url, f"bad_{kind}.py", said))
            except SystemExit as exc:
                held, why = False, str(exc)
        tally.add(held, f"{kind}: {why}")
    return tally


async def serves_despite(url: str, name: str, said: str) -> tuple[bool, str]:
    async with aiohttp.ClientSession() as http:
        probe = Probe(http, url)
        _, catalog = await probe.call("GET", "/api/catalog")
        failures = {Path(f["path"]).name: f["error"] for f in catalog.get("failures", [])}
        if said not in failures.get(name, ""):
            return False, f"not listed: {failures}"
        status = await run_to_end(probe, "quick.json")
        return status == 202 and await probe.alive(), f"next run {status}"


TRICKLE = """
import time
from graphbook import param, source, step


@step("Probe/Trickle")
@source()
@param("n", "int", default=3)
def trickle(ctx):
    for i in range(ctx.n):
        yield {"i": i, "text": "x" * 50}
        if ctx.n > 3:
            time.sleep(0.005)
"""


def sink_files(tries: int) -> Tally:
    """`graphbook run` of Trickle -> DumpJSONL, WriteCSV, WriteJSONL killed at a random moment."""
    tally = Tally()
    how = (signal.SIGTERM, signal.SIGINT, signal.SIGKILL)
    for i in range(tries):
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            kill = how[i % len(how)]
            held, why = killed_run(folder, kill, random.uniform(0.5, 2.0))
        tally.add(held, f"{kill.name}: {why}")
    return tally


def killed_run(folder: Path, kill: signal.Signals, after: float) -> tuple[bool, str]:
    (folder / "nodes").mkdir()
    (folder / "nodes" / "trickle.py").write_text(TRICKLE)
    sinks = {"dump": ("DumpJSONL", "jsonl_path", "d.jsonl"), "csv": ("WriteCSV", "path", "t.csv")}
    sinks["jsonl"] = ("WriteJSONL", "path", "t.jsonl")
    nodes = [{"id": "src", "type": "Trickle", "params": {"n": 3}}]
    nodes += [
        {"id": i, "type": kind, "params": {key: str(folder / "out" / file)}}
        for i, (kind, key, file) in sinks.items()
    ]
    edges = [{"source": "src", "output": "out", "target": i, "input": "in"} for i in sinks]
    document = {"format": "graphbook.workflow", "version": 1, "nodes": nodes, "edges": edges}
    (folder / "wf.json").write_text(json.dumps(document))
    command = [sys.executable, "-m", "graphbook", "run", "wf.json", "--nodes", "nodes", "-q"]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "GRAPHBOOK_HOME": str(folder)}

    def start(*more: str) -> subprocess.Popen[bytes]:
        quiet = subprocess.DEVNULL
        return subprocess.Popen([*command, *more], cwd=folder, env=env, stdout=quiet, stderr=quiet)

    if start().wait(120) != 0:
        return False, "the first run failed"
    files = sorted((folder / "out").glob("[!.]*"))
    before = {p.name: p.read_bytes() for p in files}
    process = start("--set", "src.n=100000")
    time.sleep(after)  # a random moment of the run
    process.send_signal(kill)
    process.wait(60)
    same = {p.name: p.read_bytes() for p in files} == before
    again = start().wait(120)
    left = [p.name for p in (folder / "out").iterdir() if p.name.endswith(".tmp")]
    return same and again == 0 and not left, f"same {same}, next run {again}, left {left}"


if __name__ == "__main__":
    main()
