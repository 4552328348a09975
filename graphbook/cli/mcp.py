"""`graphbook mcp`: the MCP tools on stdin/stdout over the same application `serve` builds
(nothing listens on a port); stdout carries the protocol only, logs go to stderr."""

from __future__ import annotations

import asyncio

from aiohttp import web
from rich.console import Console
from rich.text import Text

from graphbook.server.app import create_app
from graphbook.server.mcp import MISSING
from graphbook.server.settings import ServerSettings

OK = 0
FAILED = 1


def serve_stdio(settings: ServerSettings, err: Console) -> int:
    try:
        import mcp  # noqa: F401
    except ImportError:
        err.print(Text(f"error: {MISSING}", style="red"))
        return FAILED
    asyncio.run(_serve(create_app(settings)))
    return OK


async def _serve(app: web.Application) -> None:
    from graphbook.server.mcp.server import build_server

    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()  # as `serve` starts: the run manager, the node folder, its watcher
    try:
        await build_server(app).run_stdio_async()
    finally:
        await runner.cleanup()
