"""GET /api/catalog: the node kinds and the node files that failed (catalog.py keeps them)."""

from __future__ import annotations

from aiohttp import web

from graphbook.server.keys import CATALOG
from graphbook.server.request import reply

routes = web.RouteTableDef()


@routes.get("/api/catalog")
async def catalog(request: web.Request) -> web.Response:
    return reply(request.app[CATALOG].catalog())
