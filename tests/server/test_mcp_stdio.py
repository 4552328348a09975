"""`graphbook mcp` as a desktop agent starts it: a process on stdio, driven by the SDK's stdio
client; the same agent as over HTTP, and a node file written, reloaded, and its error shown."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_agent import (
    Agent,
    builds_and_runs,
    reads_a_failure,
    refuses_bad_input,
    refuses_bad_runs,
    stays_inside_the_roots,
)
from server_harness import settings_for

ROOT = Path(__file__).resolve().parents[2]
NODE = """from graphbook import param, step


@step("Agent/Double")
@param("times", "int", default=2)
def double(ctx, data):
    data["x"] *= ctx.times
"""


async def agent_session(root: Path) -> None:
    settings = settings_for(root)
    folders = ["--workflows", str(settings.workflows), "--nodes", str(settings.nodes)]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "graphbook", "mcp", *folders, "--data", str(settings.data), "--no-watch"],
        env={"PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
        cwd=root,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        agent = Agent(session)
        await builds_and_runs(agent)
        await reads_a_failure(agent)
        await refuses_bad_input(agent, settings.workflows)
        await refuses_bad_runs(agent, settings.workflows)
        await stays_inside_the_roots(agent, root)
        await writes_a_node_file(agent, settings.nodes)


async def writes_a_node_file(agent: Agent, nodes: Path) -> None:
    written = await agent.call("write_node_file", path="agent_nodes.py", source=NODE)
    assert written == {
        "path": "agent_nodes.py",
        "file": str((nodes / "agent_nodes.py").resolve()),
        "nodes": ["Double"],
        "error": None,
    }
    described = await agent.call("describe_node", name="Double")
    assert [q["name"] for q in described["params"]] == ["times"]
    ops = [{"op": "add_node", "type": "Double", "params": {"times": 3}}]
    edited = await agent.call("edit_workflow", path="agent.json", operations=ops)
    assert "double" in edited["nodes"]

    broken = await agent.call("write_node_file", path="agent_nodes.py", source="import nope\n")
    assert "No module named 'nope'" in broken["error"]["error"]
    assert broken["nodes"] == ["Double"]  # the last good import's nodes stay until it loads
    assert "import nope" in broken["error"]["traceback"]
    assert (nodes / "agent_nodes.py").read_text() == "import nope\n"


def test_an_agent_over_stdio(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(agent_session(tmp_path), 120))


def test_without_the_sdk_it_says_what_to_install(tmp_path: Path) -> None:
    hide = "import sys; sys.modules['mcp'] = None; from graphbook.cli import entry; entry()"
    argv = [sys.executable, "-c", hide, "mcp", "--workflows", str(tmp_path / "w")]
    argv += ["--nodes", str(tmp_path / "n"), "--data", str(tmp_path / "d")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1
    assert "pip install 'graphbook[mcp]'" in done.stderr, done.stderr
    assert done.stdout == ""
