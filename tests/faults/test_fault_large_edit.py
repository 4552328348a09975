"""One large MCP edit does not freeze the server (issue 38, item 3): while edit_workflow applies
20,000 add_node operations, /api/info keeps answering; a batch over the limit is refused at
once, naming the limit. Before, the batch was applied on the event loop in time that grew with
the square of its size (4,000 operations held the server 4.9 s, 20,000 held it 167 s)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
from fault_procs import project, serve
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

OPERATIONS = 20_000
MAX_OPERATIONS = 50_000
"""The most one call may hold (graphbook/server/mcp/edits.py)."""
ANSWERS = 5
"""/api/info answers that must come back while the edit is being applied (none came before:
the loop was busy with the batch from the moment it arrived until its reply)."""


def adds(count: int) -> list[dict[str, Any]]:
    return [{"op": "add_node", "type": "Count"} for _ in range(count)]


async def edit_while_probing(url: str) -> tuple[int, Any, Any]:
    """The /api/info answers that came while the large edit was going, its reply, and the
    reply to a batch over the limit."""
    async with (
        aiohttp.ClientSession() as http,
        httpx2.AsyncClient(timeout=600) as client,
        streamable_http_client(url + "mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        arguments = {"path": "large.json", "operations": adds(OPERATIONS), "create": True}
        editing = asyncio.create_task(session.call_tool("edit_workflow", arguments))
        answered = 0
        while not editing.done():
            async with http.get(url + "api/info") as reply:
                assert reply.status == 200
                await reply.read()
            answered += not editing.done()
            await asyncio.sleep(0.02)
        edited = await editing
        arguments["operations"] = adds(MAX_OPERATIONS + 1)
        over = await session.call_tool("edit_workflow", arguments)
        return answered, edited, over


def test_a_large_edit_leaves_the_server_answering(tmp_path: Path) -> None:
    folder = project(tmp_path)
    server = serve(folder)
    try:
        answered, edited, over = asyncio.run(asyncio.wait_for(edit_while_probing(server.url), 300))
    finally:
        server.stop()
    text = edited.content[0].text
    assert not edited.is_error, text
    assert len(json.loads(text)["nodes"]) == OPERATIONS
    assert len(json.loads((folder / "workflows" / "large.json").read_text())["nodes"]) == OPERATIONS
    assert answered >= ANSWERS, f"/api/info answered {answered} times during the edit"
    refusal = over.content[0].text
    assert over.is_error and f"at most {MAX_OPERATIONS:,} operations a call" in refusal, refusal
