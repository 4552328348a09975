"""/api/components: the library's component files listed, read, written (If-Match) and
deleted (components.py keeps them); each change said to every page as a catalog change."""

from __future__ import annotations

from aiohttp import web

from graphbook.server.keys import CATALOG, COMPONENTS, HUB
from graphbook.server.request import ok, read_json, reply

routes = web.RouteTableDef()


def announce(app: web.Application, name: str, action: str) -> None:
    """The catalog changed (`action`: added, changed or deleted): pages fetch it again."""
    entry = [f"components/{name}"]
    added, removed = (entry if action == "added" else []), (entry if action == "deleted" else [])
    changed = entry if action == "changed" else []
    app[HUB].publish(app[CATALOG].changed_elsewhere(added, removed, changed))


@routes.get("/api/components")
async def list_components(request: web.Request) -> web.Response:
    return reply(request.app[COMPONENTS].listing())


@routes.get("/api/components/{path:.+}")
async def read_component(request: web.Request) -> web.Response:
    return reply(request.app[COMPONENTS].document(request.match_info["path"]))


@routes.put("/api/components/{path:.+}")
async def write_component(request: web.Request) -> web.Response:
    files, relative = request.app[COMPONENTS], request.match_info["path"]
    body = await read_json(request)
    existed = files.path(relative).is_file()
    document = files.write(relative, body, request.headers.get("If-Match"))
    announce(request.app, document.name, "changed" if existed else "added")
    return reply(document)


@routes.delete("/api/components/{path:.+}")
async def delete_component(request: web.Request) -> web.Response:
    files, relative = request.app[COMPONENTS], request.match_info["path"]
    files.delete(relative)
    announce(request.app, files.name(relative), "deleted")
    return ok(status=204)
