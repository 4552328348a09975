"""Another process holding the run store locked (a training run, a batch job, an sqlite3
shell) delays the record of a run, never the server: HTTP and the websocket keep answering,
history reads answer at once or with a 503 saying the store is busy, and the run is recorded
once the lock is let go."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from fault_procs import Served, project, serve, wait_until, workflow

PROMPT = 1.0
"""Seconds within which the server answers while the store is locked."""
HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "EXCLUSIVE":
    db.execute("PRAGMA journal_mode=DELETE")
db.execute(f"BEGIN {sys.argv[2]}")
print("held", flush=True)
sys.stdin.read()
db.execute("COMMIT")
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = project(tmp_path_factory.mktemp("lock"))
    workflow(folder, "quick.json", "Slow", n=1)
    served = serve(folder)
    yield served
    served.stop()


@contextmanager
def held(server: Served, how: str) -> Iterator[None]:
    """The store locked by another process (`BEGIN IMMEDIATE` or `EXCLUSIVE`) until the block
    ends."""
    path = Path(server.call("GET", "/api/info")[1]["roots"]["workflows"]).parent / "data"
    command = [sys.executable, "-c", HOLD, str(path / "graphbook.sqlite"), how]
    holder = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.stdin.close()
        holder.wait(30)


async def timed(server: Served, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    began = time.monotonic()
    status, reply = await asyncio.to_thread(server.call, method, path, body)
    took = time.monotonic() - began
    assert took < PROMPT, f"{method} {path} took {took:.1f} s while the store was locked"
    return status, reply


async def until(ws: aiohttp.ClientWebSocketResponse, kind: str, timeout: float) -> Any:
    async def wait() -> Any:
        while (message := json.loads((await ws.receive()).data))["type"] != kind:
            pass
        return message

    return await asyncio.wait_for(wait(), timeout)


async def while_locked(server: Served) -> list[str]:
    """Two runs while the store is locked: both end promptly, and the server answers."""
    runs = []
    async with aiohttp.ClientSession() as http, http.ws_connect(server.url + "ws") as ws:
        for _ in range(2):
            status, reply = await timed(server, "POST", "/api/runs", {"workflow": "quick.json"})
            assert status == 202, reply
            finished = await until(ws, "run_finished", timeout=5)
            assert finished["status"] == "completed"
            runs.append(reply["run_id"])
            began = time.monotonic()
            await ws.send_str('{"type": "ping", "ref": "p"}')
            await until(ws, "pong", timeout=PROMPT)
            assert time.monotonic() - began < PROMPT
        assert (await timed(server, "GET", "/api/info"))[0] == 200
        assert (await timed(server, "GET", "/api/runs/current"))[0] == 200
        status, _ = await timed(server, "GET", "/api/runs")
        assert status == 200  # WAL: reads do not wait for a writer
    return runs


def test_a_write_lock_held_by_another_process_delays_the_record_not_the_server(
    server: Served,
) -> None:
    with held(server, "IMMEDIATE"):
        runs = asyncio.run(while_locked(server))

    def recorded() -> bool:
        found = {r["run_id"]: r["status"] for r in server.call("GET", "/api/runs")[1]["runs"]}
        return all(found.get(run) == "completed" for run in runs)

    wait_until(recorded, "the runs to be recorded once the lock was let go")


def test_a_store_locked_for_reads_too_answers_503_saying_it_is_busy(server: Served) -> None:
    with held(server, "EXCLUSIVE"):
        status, reply = asyncio.run(timed_with_slack(server, "/api/runs"))
        assert status == 503 and reply["error"]["code"] == "store_failed", reply
        assert "busy" in reply["error"]["message"], reply
        assert asyncio.run(timed(server, "GET", "/api/info"))[0] == 200
    assert server.call("GET", "/api/runs")[0] == 200


def test_a_job_added_while_the_store_is_locked_is_answered_503_at_once(server: Served) -> None:
    with held(server, "IMMEDIATE"):
        body = {"workflow": "quick.json"}
        status, reply = asyncio.run(timed_with_slack(server, "/api/jobs", "POST", body))
        assert status == 503 and reply["error"]["code"] == "store_failed", reply
        assert "busy" in reply["error"]["message"], reply
    assert server.call("GET", "/api/jobs")[1]["queued"] == [], "a refused job is not queued"


async def timed_with_slack(
    server: Served, path: str, method: str = "GET", body: Any = None
) -> tuple[int, Any]:
    """A call waits its READ_TIMEOUT (2 s) for the lock, and no more."""
    began = time.monotonic()
    status, reply = await asyncio.to_thread(server.call, method, path, body)
    assert time.monotonic() - began < 2.0 + PROMPT
    return status, reply
