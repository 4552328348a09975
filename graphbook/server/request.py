"""Reading request bodies and writing replies the same way in every handler."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from graphbook import protocol as p
from graphbook.server.errors import ServerError


async def read_json(request: web.Request) -> Any:
    """The body as JSON; ServerError for a body that is too large or not JSON."""
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge as exc:
        error = ServerError(413, "too_large", f"the body is too large: {exc.text}")
        error.close = True
        raise error from None
    if not raw:
        raise ServerError(400, "bad_json", "the request needs a JSON body")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ServerError(400, "bad_json", f"the body is not valid JSON: {exc}") from None


async def read_object(request: web.Request) -> dict[str, Any]:
    body = await read_json(request)
    if not isinstance(body, dict):
        raise ServerError(400, "bad_message", "the body must be a JSON object")
    return body


def reply(payload: Any, status: int = 200) -> web.Response:
    return web.Response(text=p.encode(payload), status=status, content_type="application/json")


def ok(status: int = 200) -> web.Response:
    if status == 204:
        return web.Response(status=204)
    return web.Response(text='{"ok": true}', status=status, content_type="application/json")


def error_reply(error: ServerError) -> web.Response:
    return reply(error.body(), error.status)
