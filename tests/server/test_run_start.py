"""Starting a run never holds up the server: the workflow is read and checked (its graph
built) off the event loop, and what the run's thread hands the loop is run a slice at a time."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from typing import Any

import pytest
from server_harness import Serve, Server, chain

from graphbook import protocol as p
from graphbook.run_request import CheckedRun, check_run
from graphbook.server import runmanager
from graphbook.server.outbox import SLICE, Outbox

HELD = 10.0
"""Seconds the graph build waits for the test; only reached if the build holds the loop."""


def ended(message: p.RunFinished, run_id: str) -> bool:
    return message.run_id == run_id


def test_the_server_answers_while_a_run_is_read_and_checked(
    serving: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check of a run (its graph built) is held until the test has been answered by
    /api/info, by the websocket, and refused a second run: on the loop, it would hold all of
    them up."""
    release = threading.Event()
    built_on: list[str] = []

    def held_check(*args: Any) -> CheckedRun:
        built_on.append(threading.current_thread().name)
        release.wait(HELD)
        return check_run(*args)

    monkeypatch.setattr(runmanager, "check_run", held_check)

    async def scenario(server: Server) -> None:
        loop = threading.current_thread().name
        server.save("chain.json", chain(n=3))
        socket = await server.connect()
        release.clear()
        starting = asyncio.create_task(server.post("/api/runs", {"workflow": "chain.json"}))
        began = time.monotonic()
        while not built_on:
            await asyncio.sleep(0.01)
        status, _ = await server.get("/api/info")
        assert status == 200 and time.monotonic() - began < HELD / 2
        status, refused = await server.post("/api/runs", {"workflow": "chain.json"})
        assert status == 409 and refused["error"]["code"] == "run_active"
        other = await server.connect()  # a new client gets its hello and snapshot
        await other.send(p.Ping("here"))
        assert (await other.until(p.Pong)).ref == "here"
        release.set()
        status, accepted = await starting
        assert status == 202
        run_id = accepted["run_id"]
        finished = await socket.until(p.RunFinished, functools.partial(ended, run_id=run_id))
        assert finished.status == "completed"
        await server.idle()
        assert built_on.pop() != loop

    serving(scenario)


def test_a_run_that_cannot_start_frees_the_run_manager(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=3))
        status, reply = await server.post("/api/runs", {"workflow": "missing.json"})
        assert status == 404
        status, reply = await server.post("/api/runs", {"workflow": "chain.json", "node": "zz"})
        assert status == 400 and "no node" in reply["error"]["message"]
        socket = await server.connect()
        finished = await server.run_to_end(socket, "chain.json")
        assert finished.status == "completed"

    serving(scenario)


def test_a_burst_from_another_thread_is_run_in_order_a_slice_at_a_time() -> None:
    """4,000 calls handed over at once (a 4,000-node run's plan): the loop runs other work
    between slices of them, and runs them in the order they came."""

    async def scenario() -> tuple[list[int], list[float]]:
        loop = asyncio.get_running_loop()
        outbox = Outbox(loop)
        ran: list[int] = []
        gaps: list[float] = []

        def call(i: int) -> None:
            ran.append(i)
            time.sleep(0.0002)  # a message folded, encoded and broadcast

        def burst() -> None:
            for i in range(4000):
                outbox.post(call, i)

        async def ticks() -> None:
            last = time.perf_counter()
            while len(ran) < 4000:
                await asyncio.sleep(0)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        ticking = asyncio.create_task(ticks())
        await asyncio.to_thread(burst)
        await asyncio.wait_for(ticking, 30)
        return ran, gaps

    ran, gaps = asyncio.run(scenario())
    assert ran == list(range(4000))
    assert len(gaps) > 10, "the loop ran the whole burst in one go"
    assert sorted(gaps)[len(gaps) // 2] < SLICE * 5
