"""The MCP tools at /mcp on a real server, through the SDK's streamable HTTP client; a page's
websocket hears of the agent's edit; the token and Origin checks hold for /mcp too."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_agent import (
    Agent,
    answers_and_stops,
    builds_and_runs,
    reads_a_failure,
    reads_node_docs,
    refuses_bad_input,
    refuses_bad_runs,
    stays_inside_the_roots,
)
from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook.server.keys import RUN_MANAGER

TOKEN = "s3cret"
ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def agent_at(url: str, headers: dict[str, str]) -> AsyncIterator[Agent]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield Agent(session)


@contextmanager
def held(server: Server) -> Iterator[None]:
    """The server's run process stopped (SIGSTOP) meanwhile: it reads nothing sent to it."""
    host = server.app[RUN_MANAGER].host
    assert host is not None, "the server has no run process"
    pid = host.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_an_agent_over_http(serving: Serve, tmp_path: Path) -> None:
    async def scenario(server: Server) -> None:
        page = await server.connect()
        async with agent_at(server.url, {}) as agent:
            await builds_and_runs(agent)
            changed = await page.until(p.WorkflowChanged)
            assert changed.path == "agent.json" and len(changed.hash) == 64
            assert {n["id"] for n in changed.workflow["nodes"]} == {"src", "plus"}
            await reads_a_failure(agent)
            await refuses_bad_input(agent, tmp_path / "workflows")
            http_says = functools.partial(refusal, server)
            await refuses_bad_runs(agent, tmp_path / "workflows", http_says)
            await stays_inside_the_roots(agent, tmp_path)
            await answers_and_stops(agent, functools.partial(held, server))
            await reads_node_docs(agent)

    serving(scenario)


async def refusal(server: Server, body: dict[str, Any]) -> str:
    """What POST /api/runs answers `body` with: a 422 and its message."""
    status, reply = await server.post("/api/runs", body)
    assert status == 422, reply
    return str(reply["error"]["message"])


def test_mcp_needs_the_token_and_a_known_origin(serving: Serve) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}

    async def scenario(server: Server) -> None:
        status, reply = await server.post("/mcp", initialize, headers=accept)
        assert status == 401 and reply["error"]["code"] == "unauthorized"
        token = {**accept, "Authorization": f"Bearer {TOKEN}"}
        foreign = {**token, "Origin": "http://evil.example"}
        status, reply = await server.post("/mcp", initialize, headers=foreign)
        assert status == 403 and "evil.example" in reply["error"]["message"]
        status, _ = await server.get("/mcp", headers=foreign)
        assert status == 403
        status, reply = await server.post("/mcp", initialize, headers=token)
        assert status == 200, reply
        assert reply["result"]["serverInfo"]["name"] == "graphbook"
        async with agent_at(server.url, {"Authorization": f"Bearer {TOKEN}"}) as agent:
            assert "Numbers" in {
                n["name"] for n in (await agent.call("list_nodes", search="Numbers"))["nodes"]
            }

    serving(scenario, token=TOKEN)


WITHOUT_SDK = """
import asyncio, sys
from pathlib import Path
sys.modules["mcp"] = None  # as if the SDK were not installed
import aiohttp
from aiohttp import web
from graphbook.server.app import create_app
from graphbook.server.settings import ServerSettings

async def main(root):
    folders = dict(workflows=root / "w", nodes=root / "n", data=root / "d", watch=False)
    runner = web.AppRunner(create_app(ServerSettings(port=0, **folders)))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    async with aiohttp.ClientSession() as http:
        async with http.post(f"http://{host}:{port}/mcp", json={}) as response:
            print(response.status, (await response.json())["error"]["message"])
        async with http.get(f"http://{host}:{port}/api/catalog") as response:
            print(response.status)
    await runner.cleanup()

asyncio.run(main(Path(sys.argv[1])))
"""


def test_without_the_sdk_mcp_says_what_to_install(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", WITHOUT_SDK, str(tmp_path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("501 ") and "pip install 'graphbook[mcp]'" in lines[0]
    assert lines[1] == "200", "the rest of the server works"
