"""A node file can neither end nor freeze the server: whatever it does at import (raise,
`sys.exit`, `os._exit`, kill its own process, raise KeyboardInterrupt, loop forever) is an
error listed against that file, at start-up, on a reload and through MCP's write_node_file; the
other node files load, later reloads happen, and runs of their nodes go on."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from fault_procs import ROOT, Served, project, serve, wait_until, workflow

LIMIT = "3"
"""Seconds a node file may take to import in these tests (`--import-limit`)."""

BAD_FILES = {
    "exits.py": ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
    "os_exit.py": ("import os\nos._exit(3)\n", "exit code 3"),
    "kills.py": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "SIGKILL"),
    "interrupts.py": ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    "loops.py": ("while True:\n    pass\n", f"within {LIMIT} s"),
}
"""File name -> (its source, what its failure says)."""

LATE = """from graphbook import step


@step("Faults/Late")
def late(ctx, data):
    pass
"""


def failures(server: Served) -> dict[str, str]:
    """The catalog's failures: file name -> error."""
    status, catalog = server.call("GET", "/api/catalog")
    assert status == 200, catalog
    return {Path(f["path"]).name: f["error"] for f in catalog["failures"]}


def node_names(server: Served) -> set[str]:
    return {node["name"] for node in server.call("GET", "/api/catalog")[1]["nodes"]}


def listed_as_failed(server: Served, names: list[str]) -> dict[str, str]:
    found = wait_until(
        lambda: (lambda f: f if set(names) <= set(f) else None)(failures(server)),
        f"{names} to be listed as failed",
    )
    return dict(found)


def assert_said(found: dict[str, str], names: list[str]) -> None:
    for name in names:
        assert BAD_FILES[name][1] in found[name], (name, found[name])


def test_node_files_that_end_or_freeze_their_import_are_listed_at_start(tmp_path: Path) -> None:
    folder = project(tmp_path)
    for name, (source, _) in BAD_FILES.items():
        (folder / "nodes" / name).write_text(source)
    quick = workflow(folder, "slow.json", "Slow", n=1)
    server = serve(folder, "--import-limit", LIMIT)
    try:
        assert_said(failures(server), list(BAD_FILES))
        assert {"Count", "Slow"} <= node_names(server)
        assert server.ended(server.start(quick)) == "completed"  # the run host skips them
        assert server.process.poll() is None
    finally:
        server.stop()


def test_node_files_that_end_or_freeze_their_import_are_listed_on_reload(tmp_path: Path) -> None:
    folder = project(tmp_path)
    quick = workflow(folder, "slow.json", "Slow", n=1)
    server = serve(folder, "--import-limit", LIMIT, watch=True)
    try:
        for name, (source, _) in BAD_FILES.items():
            (folder / "nodes" / name).write_text(source)
            assert_said(listed_as_failed(server, [name]), [name])
            assert server.process.poll() is None, f"{name} ended the server"
        (folder / "nodes" / "late.py").write_text(LATE)
        wait_until(lambda: "Late" in node_names(server), "a later file to load")
        assert server.ended(server.start(quick)) == "completed"
    finally:
        server.stop()


def test_write_node_file_over_mcp_stdio_returns_what_the_import_did(tmp_path: Path) -> None:
    folder = project(tmp_path)
    found = asyncio.run(asyncio.wait_for(write_over_stdio(folder), 120))
    for name in BAD_FILES:
        assert BAD_FILES[name][1] in found[name]["error"]["error"], found[name]
    late = found["late.py"]
    assert (late["path"], late["nodes"], late["error"]) == ("late.py", ["Late"], None), late


async def write_over_stdio(folder: Path) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    args = ["-m", "graphbook", "mcp", "--nodes", str(folder / "nodes"), "--no-watch"]
    args += ["--workflows", str(folder / "workflows"), "--data", str(folder / "data")]
    args += ["--import-limit", LIMIT]
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    params = StdioServerParameters(
        command=sys.executable, args=args, env={"PYTHONPATH": path}, cwd=folder
    )
    found: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, source in [*((n, s) for n, (s, _) in BAD_FILES.items()), ("late.py", LATE)]:
            result = await session.call_tool("write_node_file", {"path": name, "source": source})
            text = "".join(getattr(block, "text", "") for block in result.content)
            assert not result.is_error, text
            found[name] = json.loads(text)
    return found


def test_a_symlinked_node_file_leading_outside_is_refused_without_showing_where(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    outside = tmp_path / "elsewhere" / "secret_nodes.py"
    outside.parent.mkdir()
    outside.write_text(LATE)
    (folder / "nodes" / "linked.py").symlink_to(outside)
    server = serve(folder)
    try:
        status, catalog = server.call("GET", "/api/catalog")
        assert status == 200, catalog
        [failure] = [f for f in catalog["failures"] if f["path"].endswith("linked.py")]
        assert failure["path"] == str((folder / "nodes").resolve() / "linked.py")
        assert "outside the node folder" in failure["error"]
        assert "elsewhere" not in json.dumps(catalog), "where the link leads is not shown"
        assert "Late" not in node_names(server)
    finally:
        server.stop()
