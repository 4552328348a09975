"""`/mcp` on the server: the MCP tools over streamable HTTP, behind the server's token, Host
and Origin checks. The SDK's session manager runs stateless with JSON replies, in a task of
its own for the app's lifetime; each request goes through the ASGI bridge (asgi.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from aiohttp import web

from graphbook.server.errors import ServerError
from graphbook.server.keys import SETTINGS
from graphbook.server.mcp import MISSING
from graphbook.server.security import check_origin

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

logger = logging.getLogger(__name__)
PATH = "/mcp"


class Endpoint:
    """The session manager that serves `/mcp`, while the app runs (None without the SDK)."""

    manager: StreamableHTTPSessionManager | None = None


ENDPOINT: web.AppKey[Endpoint] = web.AppKey("mcp_endpoint")
routes = web.RouteTableDef()


def install(app: web.Application) -> None:
    app[ENDPOINT] = Endpoint()
    app.cleanup_ctx.append(mcp_ctx)
    app.add_routes(routes)


@routes.route("*", PATH)
async def mcp_endpoint(request: web.Request) -> web.StreamResponse:
    check_origin(request.app[SETTINGS], request, every_method=True)
    manager = request.app[ENDPOINT].manager
    if manager is None:
        raise ServerError(501, "not_found", MISSING)
    from graphbook.server.mcp.asgi import serve_asgi

    return await serve_asgi(manager.handle_request, request)


async def mcp_ctx(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: the MCP session manager for the app's lifetime (none without the SDK)."""
    try:
        from graphbook.server.mcp.server import build_server
    except ImportError:
        logger.info("no MCP SDK: /mcp answers 501 (%s)", MISSING)
        yield
        return
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(app)
    server.streamable_http_app(  # makes the session manager; its Starlette app goes unused
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager, stop = server.session_manager, asyncio.Event()
    started = asyncio.get_running_loop().create_future()

    async def run() -> None:  # enter and leave the manager's task group in one task
        async with manager.run():
            started.set_result(None)
            await stop.wait()

    task = asyncio.get_running_loop().create_task(run())
    await asyncio.wait([started, task], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()  # it failed to start: raise why
    app[ENDPOINT].manager = manager
    yield
    app[ENDPOINT].manager = None
    stop.set()
    with contextlib.suppress(asyncio.CancelledError):
        await task
