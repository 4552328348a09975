"""A scripted agent session over MCP (`python -m bench.agent`): what an agent pays, in calls
and in characters of tool output, to build a workflow, validate it, run it, look at a
thumbnail and fix the node that fails, against `graphbook mcp` on stdio as a desktop agent
starts it (issue 36: at most 8 calls and under 20,000 characters).

The folder holds a dozen photos; the agent knows the library's node types it uses (a first
`list_nodes` to find them is one more call, measured apart). Its Filter's expression names a
field wrong (`brightnes`): the run (with continue_on_error, so that the images are measured
all the same) reports every dict the Filter failed, naming the fields the dict has; the
agent looks at a measured image, sets the expression right and runs again.

Printed: each call, the characters of its text and the pictures it carried (their bytes,
base64, go to the model as images, not text), and the totals."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from bench.common import ROOT

CALLS = 8
CHARACTERS = 20_000
PHOTOS = 12
TYPO = "brightnes > 0.4"
"""The Filter's expression as the agent first writes it: a field the dicts do not have."""
BUILD = [
    {"op": "add_node", "type": "ImageFolder", "id": "photos", "params": {"folder": "photos"}},
    {"op": "add_node", "type": "ImageStats", "id": "stats"},
    {"op": "add_node", "type": "Filter", "id": "bright", "params": {"expression": TYPO}},
    {"op": "connect", "source": "photos", "target": "stats"},
    {"op": "connect", "source": "stats", "target": "bright"},
]
FIX = [{"op": "set_param", "node": "bright", "param": "expression", "value": "brightness > 0.4"}]


@dataclass
class Call:
    tool: str
    characters: int
    pictures: int
    picture_bytes: int
    seconds: float
    error: bool


@dataclass
class Session:
    calls: list[Call] = field(default_factory=list)

    async def call(self, session: Any, tool: str, **arguments: Any) -> Any:
        began = time.perf_counter()
        result = await session.call_tool(tool, arguments)
        seconds = time.perf_counter() - began
        text = "".join(getattr(block, "text", "") for block in result.content)
        pictures = [block for block in result.content if getattr(block, "type", "") == "image"]
        size = sum(len(block.data) for block in pictures)
        self.calls.append(Call(tool, len(text), len(pictures), size, seconds, result.is_error))
        if result.is_error:
            raise SystemExit(f"{tool} failed: {text}")
        return json.loads(text)


def photos(folder: Path) -> None:
    """Shapes on backgrounds from dark to light, as photos might be."""
    folder.mkdir(parents=True)
    for i in range(PHOTOS):
        shade = int(255 * i / (PHOTOS - 1))
        image = Image.new("RGB", (640, 480), (shade, shade, min(255, shade + 40)))
        ImageDraw.Draw(image).ellipse((200, 120, 440, 360), fill=(255 - shade, 80, 40))
        image.save(folder / f"photo_{i:02d}.png")


async def session_in(folder: Path) -> tuple[Session, int]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    (folder / "workflows").mkdir()
    photos(folder / "photos")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "graphbook", "mcp", "--workflows", "workflows", "--data", "data"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=folder,
    )
    agent = Session()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        discovery = await mcp.call_tool("list_nodes", {"search": "image"})
        found = sum(len(getattr(block, "text", "")) for block in discovery.content)
        await steps(agent, mcp)
    return agent, found


async def steps(agent: Session, mcp: Any) -> None:
    await agent.call(mcp, "edit_workflow", path="curate.json", operations=BUILD, create=True)
    checked = await agent.call(mcp, "validate_workflow", path="curate.json")
    assert checked["valid"], checked
    job = await agent.call(mcp, "run_workflow", path="curate.json", continue_on_error=True)
    done = await agent.call(mcp, "wait_for_job", job_id=job["job_id"], timeout=300)
    failing = next(n for n in done["nodes"] if n["errors"])
    assert failing["node_id"] == "bright", done
    assert "'brightness'" in failing["errors"][0]["error"]["message"], failing
    await agent.call(mcp, "node_output", job_id=job["job_id"], node="stats", images=1)
    await agent.call(mcp, "edit_workflow", path="curate.json", operations=FIX)
    job = await agent.call(mcp, "run_workflow", path="curate.json")
    done = await agent.call(mcp, "wait_for_job", job_id=job["job_id"], timeout=300)
    assert done["status"] == "completed", done
    kept = {n["node_id"]: n["counts"] for n in done["nodes"]}["bright"]
    assert kept.get("keep", 0) + kept.get("drop", 0) == PHOTOS, kept


def report(agent: Session, discovery: int) -> bool:
    print("| # | tool | text characters | pictures (bytes) | seconds |")
    print("|---:|---|---:|---:|---:|")
    for number, call in enumerate(agent.calls, 1):
        shown = f"{call.pictures} ({call.picture_bytes:,})" if call.pictures else "-"
        print(f"| {number} | {call.tool} | {call.characters:,} | {shown} | {call.seconds:.2f} |")
    characters = sum(call.characters for call in agent.calls)
    pictures = sum(call.picture_bytes for call in agent.calls)
    print(
        f"\n{len(agent.calls)} calls (at most {CALLS}), {characters:,} characters of tool "
        f"output (under {CHARACTERS:,}), {pictures:,} bytes of pictures; a list_nodes to "
        f"find the node types first: {discovery:,} characters more"
    )
    return len(agent.calls) <= CALLS and characters < CHARACTERS


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(prog="python -m bench.agent", description=__doc__).parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        agent, discovery = asyncio.run(session_in(Path(folder)))
    if not report(agent, discovery):
        raise SystemExit("over budget")


if __name__ == "__main__":
    main()
