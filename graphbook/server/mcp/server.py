"""build_server(): the MCP server over one aiohttp application's parts; its errors as tool
errors whose text says what is wrong and how to fix it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from mcp.types import Tool as MCPTool

from graphbook import about
from graphbook.server.keys import SETTINGS
from graphbook.server.mcp import (
    apps,
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
ask_user asks your person; server_info says where the server's folders are.
list_apps, describe_app, run_app and app_results run workflows as apps (a form of inputs)."""
APPS_ONLY = """This server serves apps only: workflows are read-only and node files cannot be
written. list_apps and describe_app show the apps and their inputs, run_app runs one (wait_for_job
waits for it) and app_results shows what it made."""
REFUSED = (
    "{name} is refused: this server serves apps only (graphbook serve --apps), so workflows "
    "are read-only and node files cannot be written; run_app runs an app"
)


class GraphbookMCP(MCPServer[Any]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.apps_only = False
        """Offer only the tools that read, and run_app (`serve --apps`); refuse the others."""
        self.writes: set[str] = set()
        """The tools that change something (not read-only), run_app aside."""

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        *args: Any,
        **more: Any,
    ) -> None:
        reads = annotations is not None and annotations.read_only_hint
        if not reads and (name or fn.__name__) not in apps.APP_TOOLS:
            self.writes.add(name or fn.__name__)
        super().add_tool(fn, name, title, description, annotations, *args, **more)

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        return [t for t in tools if not self.refuses(t.name)]

    def refuses(self, name: str) -> bool:
        return self.apps_only and name in self.writes

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if self.refuses(name):
            raise ToolError(REFUSED.format(name=name))
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
    apps_only = app[SETTINGS].apps_only
    server = GraphbookMCP(
        "graphbook",
        version=about.version(),
        instructions=APPS_ONLY if apps_only else INSTRUCTIONS,
        log_level="WARNING",
    )
    server.apps_only = apps_only
    for part in (nodes, nodefiles, workflows, files, runs, apps, asking, info, resources):
        part.register(server, app)
    guide.register(server)
    return server
