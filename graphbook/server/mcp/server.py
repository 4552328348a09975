"""build_server(): the MCP server over one aiohttp application's parts; its errors as tool
errors whose text says what is wrong and how to fix it."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult

from graphbook import about
from graphbook.server.mcp import (
    asking,
    files,
    guide,
    info,
    nodefiles,
    nodes,
    resources,
    runs,
    workflows,
)
from graphbook.server.mcp.errors import EXPECTED, message

INSTRUCTIONS = """Graphbook runs ML data pipelines drawn as graphs of Python nodes.
list_nodes shows the node types (describe_node one in full); edit_workflow builds or changes a
workflow file in one batch of operations (all applied or none); validate_workflow checks it as
a run's start would; run_workflow queues a run and wait_for_job waits for it; job_status,
job_logs, node_output (images as pictures) and run_metrics show what it did, by job id.
Node files: read the guide (resource graphbook://guide/nodes, prompt write_node), then
write_node_file, edit_node_file; node_failures lists files that did not import.
ask_user asks your person; server_info says where the server's folders are."""


class GraphbookMCP(MCPServer[Any]):
    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, EXPECTED):
                raise ToolError(f"{name}: {message(cause)}") from cause
            raise


def build_server(app: web.Application) -> GraphbookMCP:
    """The tools and resources over `app`'s parts (its keys: catalog, workflow files,
    run manager, hub, store); the app must be started (its cleanup contexts entered) to run."""
    server = GraphbookMCP(
        "graphbook", version=about.version(), instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for part in (nodes, nodefiles, workflows, files, runs, asking, info, resources):
        part.register(server, app)
    guide.register(server)
    return server
