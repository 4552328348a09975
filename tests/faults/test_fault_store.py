"""A damaged run store (graphbook.sqlite): a clear refusal naming the file and what to do, a flag
that moves it aside (kept) and starts fresh, and damage while serving is a visible warning."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest
from fault_procs import env, project, serve, workflow

from graphbook.store import Store


def filled_store(path: Path, runs: int = 200) -> bytes:
    store = Store(path)
    for i in range(runs):
        run = store.start_run("workflow", f"w{i}.json", {"params": {"x": "y" * 200}})
        store.finish_run(run, "completed", {"a": {"out": i}})
    return path.read_bytes()


def refused(folder: Path) -> str:
    command = [sys.executable, "-m", "graphbook", "serve", "--no-watch", "--port", "0"]
    command += ["--data", str(folder / "data"), "--nodes", str(folder / "nodes")]
    done = subprocess.run(
        command, cwd=folder, env=env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr and "serving" not in done.stdout
    return " ".join(done.stderr.split())


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "garbage": lambda good: b"this is not an SQLite file, it is garbage " * 50,
    "truncated": lambda good: good[: len(good) // 2],
    "zero bytes": lambda good: b"",
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_store_is_named_and_can_be_moved_aside(tmp_path: Path, damage: str) -> None:
    folder = project(tmp_path)
    path = folder / "data" / "graphbook.sqlite"
    bad = DAMAGE[damage](filled_store(path))
    for extra in ("-wal", "-shm"):
        path.with_name(path.name + extra).unlink(missing_ok=True)
    path.write_bytes(bad)
    message = refused(folder)
    assert str(path) in message and "damaged" in message, message
    assert "--move-damaged-store" in message
    server = serve(folder, "--data", str(folder / "data"), "--move-damaged-store")
    try:
        status, runs = server.call("GET", "/api/runs")
        assert status == 200 and runs["runs"] == []
        assert server.ended(server.start(workflow(folder, "slow.json", "Slow", n=1))) == "completed"
        assert len(server.call("GET", "/api/runs")[1]["runs"]) == 1
    finally:
        err = server.stop()
    kept = list(path.parent.glob("graphbook.sqlite.damaged-*"))
    assert [p.read_bytes() for p in kept] == [bad]
    assert str(kept[0]) in err


async def store_warning(url: str) -> str:
    async with aiohttp.ClientSession() as http, http.ws_connect(url + "ws") as ws:
        async for message in ws:
            data = json.loads(message.data)
            if data["type"] == "error" and data["code"] == "store_failed":
                return str(data["message"])
    raise AssertionError("the websocket closed without a store_failed warning")


def test_damage_while_serving_is_a_warning_and_history_answers_503(tmp_path: Path) -> None:
    folder = project(tmp_path)
    quick = workflow(folder, "slow.json", "Slow", n=1)
    server = serve(folder)
    try:
        assert server.ended(server.start(quick)) == "completed"
        path = folder / "data" / "graphbook.sqlite"
        for each in path.parent.glob("graphbook.sqlite*"):
            each.write_bytes(b"garbage " * 512)

        async def scenario() -> str:
            warning = asyncio.create_task(store_warning(server.url))
            await asyncio.sleep(0.5)  # the websocket is connected before the run starts
            run = await asyncio.to_thread(server.start, quick)
            assert await asyncio.to_thread(server.ended, run) == "completed"
            return await asyncio.wait_for(warning, 30)

        warning = asyncio.run(scenario())
        assert str(path) in warning and "not being recorded" in warning
        status, reply = server.call("GET", "/api/runs")
        assert status == 503 and reply["error"]["code"] == "store_failed"
        assert str(path) in reply["error"]["message"]
        assert server.call("GET", "/api/runs/abc")[0] == 503
    finally:
        err = server.stop()
    assert "not being recorded" in err


def test_a_store_made_before_paused_times_were_kept_opens_with_its_runs(tmp_path: Path) -> None:
    """A store file from an earlier version (its runs table without `paused`) gains the column
    when opened, keeps its runs (paused 0), and records new runs' paused seconds."""
    import sqlite3

    path = tmp_path / "graphbook.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE runs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, "
        "status TEXT NOT NULL, config TEXT NOT NULL DEFAULT '{}', counts TEXT NOT NULL "
        "DEFAULT '{}', error TEXT, started REAL NOT NULL, ended REAL)"
    )
    db.execute(
        "INSERT INTO runs VALUES ('old', 'workflow', 'w.json', 'completed', '{}', '{}', NULL, 1, 2)"
    )
    db.commit()
    db.close()
    store = Store(path)
    assert store.get_run("old").paused == 0.0
    new = store.start_run("workflow", "w.json")
    store.finish_run(new, "completed", {}, None, paused=2.5)
    assert Store(path).get_run(new).paused == 2.5
