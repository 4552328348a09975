"""Templates (graphbook/templates/): list them, and create one as a workflow file in the
workflows folder, with the sample data it reads under the server's working directory."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

from aiohttp import web

from graphbook import protocol as p
from graphbook import templates
from graphbook.server.errors import ServerError, bad_message, conflict, not_found
from graphbook.server.keys import HUB, WORKFLOWS
from graphbook.server.request import read_object, reply

logger = logging.getLogger(__name__)
routes = web.RouteTableDef()


def template_info(known: templates.Template) -> p.TemplateInfo:
    return p.TemplateInfo(known.name, known.title, known.description, known.workflow())


def find(name: str) -> templates.Template:
    try:
        return templates.template(name)
    except templates.UnknownTemplate as exc:
        raise not_found(str(exc)) from None


def create(name: str, target: Path, data_root: Path, overwrite: bool) -> templates.Created:
    """`templates.create`, with what it refuses or cannot do as a ServerError."""
    try:
        return templates.create(name, target, data_root, overwrite)
    except FileExistsError:
        raise conflict(f"{target.name!r} exists already; choose another file name") from None
    except OSError as exc:
        message = f"template {name!r} could not be written: {exc}"
        raise ServerError(500, "internal", message) from None


def relative_to(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


@routes.get("/api/templates")
async def list_templates(request: web.Request) -> web.Response:
    return reply(p.TemplateList([template_info(t) for t in templates.TEMPLATES]))


def empty_workflow(target: Path) -> bool:
    """Whether `target` is a workflow file with no nodes (a file just made, to fill)."""
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and not data.get("nodes") and not data.get("comments")


@routes.post("/api/templates/{name}")
async def create_from_template(request: web.Request) -> web.Response:
    """Body `{"path": "mine.json"}`: the new file, relative to the workflows folder; with
    `"fill": true`, a file of that name that holds no nodes is filled with the template."""
    chosen = find(request.match_info["name"])
    body = await read_object(request)
    relative = body.get("path")
    if not isinstance(relative, str):
        raise bad_message('give the new file\'s name as {"path": "my_pipeline.json"}')
    files = request.app[WORKFLOWS]
    data_root = Path.cwd()
    async with files.lock:
        name = files.name(relative)
        target = files.path(name)
        fill = body.get("fill") is True and target.exists() and empty_workflow(target)
        if target.exists() and not fill:
            raise conflict(f"{name!r} exists already; choose another file name")
        # Samples may be images or a small model to make: not on the event loop.
        created = await asyncio.to_thread(create, chosen.name, target, data_root, fill)
    samples = [relative_to(path, data_root) for path in created.samples]
    logger.info("created %s from template %r (samples: %s)", name, chosen.name, samples)
    request.app[HUB].publish(p.WorkflowsChanged(name, "saved"))
    return reply(p.TemplateCreated(name, samples), status=201)
