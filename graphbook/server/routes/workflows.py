"""/api/workflows: workflow files listed, read (with their inputs), saved (If-Match), renamed
and deleted (workflows.py keeps them); save() is also how MCP edits write."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web

from graphbook import protocol as p
from graphbook.server.errors import bad_message
from graphbook.server.keys import HUB, RUN_MANAGER, WORKFLOWS
from graphbook.server.request import ok, read_json, reply

routes = web.RouteTableDef()


@routes.get("/api/workflows")
async def list_workflows(request: web.Request) -> web.Response:
    return reply(request.app[WORKFLOWS].listing())


@routes.get(r"/api/workflows/{path:.+\.json}/inputs")  # before the file's own route
async def workflow_inputs(request: web.Request) -> web.Response:
    files, relative = request.app[WORKFLOWS], request.match_info["path"]
    return reply(await asyncio.to_thread(files.inputs, relative))


@routes.get("/api/workflows/{path:.+}")
async def read_workflow(request: web.Request) -> web.Response:
    return reply(request.app[WORKFLOWS].document(request.match_info["path"]))


@routes.put("/api/workflows/{path:.+}")
async def write_workflow(request: web.Request) -> web.Response:
    body = await read_json(request)
    relative, if_match = request.match_info["path"], request.headers.get("If-Match")
    return reply(await save(request.app, relative, lambda: body, if_match))


async def save(
    app: web.Application,
    relative: str,
    content: Callable[[], Any],
    if_match: str | None = None,
) -> p.WorkflowDocument:
    """Write `content()` (a workflow's JSON data) to the file, atomically, and tell every
    client: the file's new content (`workflow_changed`) and that it was saved. `content` runs
    under the write lock, so no other save lands between what it reads and this write; it
    and the write (which checks the workflow: a graph of 20,000 nodes takes seconds) run in a
    thread, and the server answers meanwhile."""
    files = app[WORKFLOWS]
    async with files.lock:
        document = await asyncio.to_thread(lambda: files.write(relative, content(), if_match))
    hub = app[HUB]
    hub.publish(p.WorkflowChanged(document.path, document.hash, document.workflow))
    hub.publish(p.WorkflowsChanged(document.path, "saved"))
    return document


@routes.patch("/api/workflows/{path:.+}")
async def rename_workflow(request: web.Request) -> web.Response:
    files, relative = request.app[WORKFLOWS], request.match_info["path"]
    body = await read_json(request)
    new = body.get("path") if isinstance(body, dict) else None
    if not isinstance(new, str):
        raise bad_message('give the new name as {"path": "new.json"}')
    async with files.lock:
        old = files.name(relative)
        request.app[RUN_MANAGER].refuse_while_running(old)
        document = files.rename(relative, new)
    request.app[RUN_MANAGER].cache.rename(old, document.path)
    request.app[HUB].publish(p.WorkflowsChanged(old, "renamed", document.path))
    return reply(document)


@routes.delete("/api/workflows/{path:.+}")
async def delete_workflow(request: web.Request) -> web.Response:
    files, relative = request.app[WORKFLOWS], request.match_info["path"]
    async with files.lock:
        name = files.name(relative)
        request.app[RUN_MANAGER].refuse_while_running(name)
        files.delete(relative)
    request.app[RUN_MANAGER].cache.forget(name)
    request.app[HUB].publish(p.WorkflowsChanged(name, "deleted"))
    return ok(status=204)
