"""Writing the run store failing while reading it works (a read-only file, a full disk): the
history answers 503 as docs/server.md promises, every client is told (those connecting later
too), and once the store can be written again the runs it missed are recorded."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from fault_procs import Served, project, serve, wait_until, workflow

FAILING = [
    "CREATE TRIGGER no_insert BEFORE INSERT ON {table} "
    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    "CREATE TRIGGER no_update BEFORE UPDATE ON {table} "
    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = project(tmp_path_factory.mktemp("writes"))
    workflow(folder, "quick.json", "Slow", n=1)
    served = serve(folder)
    yield served
    served.stop()


def store_of(server: Served) -> Path:
    folder = Path(server.call("GET", "/api/info")[1]["roots"]["workflows"]).parent
    return folder / "data" / "graphbook.sqlite"


def writes_fail(path: Path, failing: bool) -> None:
    """Every write of a run (inserts and updates) fails as on a full disk; reads work."""
    with sqlite3.connect(path) as db:
        for table in ("runs", "run_nodes"):
            for n, trigger in enumerate(FAILING):
                db.execute(f"DROP TRIGGER IF EXISTS fail_{table}_{n}")
                if failing:
                    name = trigger.replace("no_insert", f"fail_{table}_{n}")
                    name = name.replace("no_update", f"fail_{table}_{n}")
                    db.execute(name.format(table=table))


async def first_messages(url: str, count: int) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession() as http, http.ws_connect(url + "ws") as ws:
        return [json.loads((await ws.receive(timeout=20)).data) for _ in range(count)]


async def run_watched(server: Served) -> tuple[str, dict[str, Any]]:
    """A run with a client connected; its id and the store warning the client got."""
    async with aiohttp.ClientSession() as http, http.ws_connect(server.url + "ws") as ws:
        await ws.receive(timeout=20)
        await ws.receive(timeout=20)
        run_id = await asyncio.to_thread(server.start, "quick.json")
        while (message := json.loads((await ws.receive(timeout=20)).data))["type"] != "error":
            pass
        return run_id, message


def test_failing_writes_answer_503_tell_every_client_and_are_made_up_for(server: Served) -> None:
    path = store_of(server)
    assert server.ended(server.start("quick.json")) == "completed"
    writes_fail(path, True)
    missed, warning = asyncio.run(run_watched(server))
    assert warning["code"] == "store_failed" and "disk is full" in warning["message"]
    assert server.ended(missed) == "completed"
    status, reply = server.call("GET", "/api/runs")
    assert status == 503 and reply["error"]["code"] == "store_failed", reply
    later = asyncio.run(first_messages(server.url, 3))
    assert [m["type"] for m in later] == ["hello", "snapshot", "error"]
    assert later[2]["code"] == "store_failed"
    writes_fail(path, False)
    assert server.ended(server.start("quick.json")) == "completed"

    def recorded() -> Any:
        status, reply = server.call("GET", "/api/runs")
        found = {r["run_id"]: r["status"] for r in reply["runs"]} if status == 200 else {}
        return found.get(missed) == "completed" and len(found) == 3

    wait_until(recorded, "the missed run to be recorded once the store could be written")
    assert [m["type"] for m in asyncio.run(first_messages(server.url, 2))] == [
        "hello",
        "snapshot",
    ]
