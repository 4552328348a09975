"""`graphbook serve --apps`: a server for people who run apps and do not edit them. It serves
the apps list and app pages (the editor's page sends them there); every write is refused but
the few an app's page makes (runs, uploads, stopping its run, answering a prompt): graphs stay
read-only and node files unwritten. The MCP tools refuse the same (server/mcp/server.py)."""

from __future__ import annotations

import re

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from graphbook.server.errors import ServerError
from graphbook.server.security import WRITES
from graphbook.server.settings import ServerSettings

APP_WRITES = (
    re.compile(r"^/api/apps/.+\.json/(runs|uploads/[^/]+)$"),
    re.compile(r"^/api/apps/runs/[0-9a-f]{12}/stop$"),
    re.compile(r"^/api/prompts/[^/]+$"),
    re.compile(r"^/mcp/?$"),
)
"""The writes an app's page makes (and MCP, whose tools refuse for themselves)."""
REFUSED = (
    "this server serves apps only (graphbook serve --apps): {what} is refused; graphs are "
    "read-only and node files cannot be written here. Run the workflow from its app page, or "
    "ask for a server without --apps to edit it"
)


def apps_only_middleware(settings: ServerSettings) -> Middleware:
    @web.middleware
    async def apps_only(request: web.Request, handler: Handler) -> web.StreamResponse:
        if settings.apps_only:
            check(request)
        return await handler(request)

    return apps_only


def check(request: web.Request) -> None:
    """Refuse a write no app page makes; send the editor's page to the apps list."""
    if request.method in WRITES and not any(p.match(request.path) for p in APP_WRITES):
        what = f"{request.method} {request.path}"
        raise ServerError(403, "apps_only", REFUSED.format(what=what))
    if request.method == "GET" and request.path == "/":
        raise web.HTTPFound("/apps" + (f"?{request.query_string}" if request.query_string else ""))
