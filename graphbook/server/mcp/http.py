"""`/mcp` on the server: the MCP tools over streamable HTTP, behind the server's token, Host
and Origin checks. The SDK's session manager runs stateless with JSON replies, in a task of
its own, started by the first request (importing the SDK takes a while: a server that no agent
talks to never pays for it) and stopped with the app; each request goes through the ASGI bridge
(asgi.py)."""

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
routes = web.RouteTableDef()


class Endpoint:
    """The session manager that serves `/mcp`: started on first use, stopped with the app."""

    def __init__(self) -> None:
        self.manager: StreamableHTTPSessionManager | None = None
        self._starting = asyncio.Lock()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def get(self, app: web.Application) -> StreamableHTTPSessionManager:
        async with self._starting:
            if self.manager is None:
                self.manager = await self._start(app)
            return self.manager

    async def _start(self, app: web.Application) -> StreamableHTTPSessionManager:
        try:
            from mcp.server.transport_security import TransportSecuritySettings

            from graphbook.server.mcp.server import build_server
        except ImportError:
            raise ServerError(501, "not_found", MISSING) from None
        server = build_server(app)
        server.streamable_http_app(  # makes the session manager; its Starlette app goes unused
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        manager = server.session_manager
        started = asyncio.get_running_loop().create_future()

        async def run() -> None:  # enter and leave the manager's task group in one task
            async with manager.run():
                started.set_result(None)
                await self._stop.wait()

        self._task = asyncio.get_running_loop().create_task(run())
        await asyncio.wait([started, self._task], return_when=asyncio.FIRST_COMPLETED)
        if self._task.done():
            self._task.result()  # it failed to start: raise why
        return manager

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


ENDPOINT: web.AppKey[Endpoint] = web.AppKey("mcp_endpoint")


def install(app: web.Application) -> None:
    app[ENDPOINT] = Endpoint()
    app.cleanup_ctx.append(mcp_ctx)
    app.add_routes(routes)


@routes.route("*", PATH)
async def mcp_endpoint(request: web.Request) -> web.StreamResponse:
    check_origin(request.app[SETTINGS], request, every_method=True)
    manager = await request.app[ENDPOINT].get(request.app)
    from graphbook.server.mcp.asgi import serve_asgi

    return await serve_asgi(manager.handle_request, request)


async def mcp_ctx(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: stop the MCP session manager with the app, if a request started it."""
    yield
    await app[ENDPOINT].close()
