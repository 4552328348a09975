"""The job queue over HTTP: add, list, read (and wait for), cancel, move and stop jobs."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from graphbook import protocol as p
from graphbook.server.errors import bad_message
from graphbook.server.jobs import MAX_WAIT, Move
from graphbook.server.keys import JOBS, RUN_MANAGER
from graphbook.server.request import read_object, reply

routes = web.RouteTableDef()
MOVES = ("up", "down", "top", "bottom")


@routes.post("/api/jobs")
async def submit(request: web.Request) -> web.Response:
    """Queue a run. One that could not start now (unknown nodes, bad overrides or inputs) is
    refused with the problems POST /api/runs gives (422), not queued to fail later; a
    workflow that changes while its job waits is checked again when the job starts."""
    body = await read_object(request)
    job = p.from_json(p.RunRequest, body, "job")
    await request.app[RUN_MANAGER].check(job)
    return reply(await request.app[JOBS].submit(job), status=201)


@routes.get("/api/jobs")
async def listing(request: web.Request) -> web.Response:
    return reply(request.app[JOBS].listing())


@routes.get("/api/jobs/{job_id}")
async def one(request: web.Request) -> web.Response:
    queue, job_id = request.app[JOBS], request.match_info["job_id"]
    if "wait" not in request.query:
        return reply(await queue.find(job_id))
    return reply(await queue.wait(job_id, _seconds(request.query["wait"])))


@routes.delete("/api/jobs/{job_id}")
@routes.post("/api/jobs/{job_id}/cancel")
async def cancel(request: web.Request) -> web.Response:
    return reply(request.app[JOBS].cancel(request.match_info["job_id"]))


@routes.post("/api/jobs/{job_id}/move")
async def move(request: web.Request) -> web.Response:
    body = await read_object(request)
    to = _move(body.get("to"))
    return reply(request.app[JOBS].move(request.match_info["job_id"], to))


@routes.post("/api/jobs/{job_id}/stop")
async def stop(request: web.Request) -> web.Response:
    return reply(request.app[JOBS].stop(request.match_info["job_id"]))


def _move(to: Any) -> Move:
    if isinstance(to, int) and not isinstance(to, bool) and to >= 0:
        return to
    if to in MOVES:
        return to  # type: ignore[no-any-return]
    where = '{"to": "up"|"down"|"top"|"bottom"|INDEX}'
    raise bad_message(f"give the place as {where}, got {to!r:.40}")


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= MAX_WAIT:
        limit = f"from 0 to {MAX_WAIT:g}"
        raise bad_message(f"wait must be a number of seconds {limit}, got {text!r:.40}")
    return seconds
