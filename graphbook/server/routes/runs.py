"""Runs: start, pause, resume, step, stop; run history; node outputs (one by one, or as the
gallery's filtered, sorted pages); prompts; the cache."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from aiohttp import web

from graphbook import protocol as p
from graphbook.server.errors import ServerError, bad_message, not_found
from graphbook.server.gallery import GalleryQuery
from graphbook.server.history import (
    KIND,
    rerun_request,
    run_details,
    run_infos,
    run_snapshot,
    saved_nodes,
)
from graphbook.server.keys import HUB, RUN_MANAGER, STORE, WORKFLOWS
from graphbook.server.metrics import MAX_RUNS, run_metrics
from graphbook.server.request import ok, read_object, reply
from graphbook.store import RunRecord, Store, StoreBusy, StoreUnavailable

routes = web.RouteTableDef()
MAX_HISTORY = 1000
KINDS = ("workflow", "train", "search", "batch")
READ_TIMEOUT = 2.0
"""Seconds a history route waits for a lock another process holds on the store (503 after)."""
T = TypeVar("T")


@routes.post("/api/runs")
async def start_run(request: web.Request) -> web.Response:
    body = await read_object(request)  # `ref` and `type`, which clients may send, are ignored
    run = p.from_json(p.RunRequest, body, "run")
    run_id = await request.app[RUN_MANAGER].start(run)
    return reply(p.RunAccepted(run_id), status=202)


@routes.get("/api/runs")
async def history(request: web.Request) -> web.Response:
    limit = max(1, min(_int(request.query.get("limit", "100"), "limit"), MAX_HISTORY))
    kind = request.query.get("kind")
    if kind is not None and kind not in KINDS:
        raise bad_message(f"kind must be one of {', '.join(KINDS)}, got {kind!r:.40}")

    def read(store: Store) -> list[p.RunRecordInfo]:
        return run_infos(store, store.list_runs(kind, limit=limit))

    return reply(p.RunList(await _query(request, read)))


@routes.get("/api/runs/current")
async def current(request: web.Request) -> web.Response:
    return reply(request.app[HUB].snapshot())


@routes.get("/api/runs/last")
async def last(request: web.Request) -> web.Response:
    """The workflow's last run: as this server saw it, else from the run store."""
    name = request.app[WORKFLOWS].name(request.query.get("workflow", ""))
    seen = request.app[HUB].last_run(name)
    if seen is not None:
        return reply(p.LastRun(name, seen, "live"))

    def read(store: Store) -> p.LastRun:
        record = store.latest_run(KIND, name)
        if record is None or record.status == "running":
            return p.LastRun(name, None)
        return p.LastRun(name, run_snapshot(record, saved_nodes(store, record.id)), "history")

    return reply(await _query(request, read))


@routes.get("/api/runs/{run_id}")
async def one_run(request: web.Request) -> web.Response:
    run_id = request.match_info["run_id"]
    found = await _query(request, lambda store: run_infos(store, [_record(store, run_id)]))
    return reply(found[0])


@routes.get("/api/runs/{run_id}/details")
async def details(request: web.Request) -> web.Response:
    files, run_id = request.app[WORKFLOWS], request.match_info["run_id"]

    def now(name: str) -> dict[str, Any] | None:
        try:
            return files.load(name).to_json()
        except ServerError as exc:
            if exc.status == 404:
                return None
            return {"nodes": [], "edges": [], "unreadable": exc.message}

    def read(store: Store) -> p.RunDetails:
        return run_details(store, _record(store, run_id), now)

    return reply(await _query(request, read))


@routes.post("/api/runs/{run_id}/rerun")
async def rerun(request: web.Request) -> web.Response:
    run_id = request.match_info["run_id"]
    record = await _query(request, lambda store: _record(store, run_id))
    try:
        run = rerun_request(record)
    except ValueError as exc:
        raise ServerError(409, "conflict", str(exc)) from None
    started = await request.app[RUN_MANAGER].start(run)
    return reply(p.RunAccepted(started), status=202)


@routes.get("/api/runs/{run_id}/metrics")
async def metrics(request: web.Request) -> web.Response:
    run_id = request.match_info["run_id"]
    found = await _query(request, lambda store: run_metrics(store, [_record(store, run_id)]))
    return reply(found[0])


@routes.get("/api/metrics")
async def several_metrics(request: web.Request) -> web.Response:
    ids = [i for i in request.query.get("runs", "").split(",") if i]
    if not ids:
        raise bad_message("give the runs as ?runs=ID,ID,... (at least one)")
    if len(ids) > MAX_RUNS:
        raise bad_message(f"at most {MAX_RUNS} runs at once, got {len(ids)}")

    def read(store: Store) -> list[p.RunMetrics]:
        return run_metrics(store, [_record(store, run_id) for run_id in dict.fromkeys(ids)])

    return reply(p.MetricsList(await _query(request, read)))


async def _query(request: web.Request, read: Callable[[Store], T]) -> T:
    """`read(store)` in a thread, so the loop never waits on SQLite: a store that another
    process holds locked answers 503 after READ_TIMEOUT seconds; any store failure is a 503,
    and so is every read while writing the store fails."""
    store, problem = request.app[STORE], request.app[RUN_MANAGER].recorder.problem
    if problem is not None:  # what it holds is not what happened: runs missing, or "running"
        raise ServerError(503, "store_failed", problem)
    try:
        return await asyncio.to_thread(read, store.reading(READ_TIMEOUT))
    except StoreBusy as exc:
        raise ServerError(503, "store_failed", str(exc)) from None
    except (sqlite3.Error, ValueError) as exc:  # p.ProtocolError is a ValueError
        raise ServerError(503, "store_failed", str(StoreUnavailable(store.path, exc))) from None


def _record(store: Store, run_id: str) -> RunRecord:
    try:
        return store.get_run(run_id)
    except KeyError:
        raise not_found(f"no run {run_id!r}; GET /api/runs lists them") from None


@routes.post("/api/runs/current/{action}")
async def control(request: web.Request) -> web.Response:
    runs, action = request.app[RUN_MANAGER], request.match_info["action"]
    if action == "pause":
        runs.pause()
    elif action == "resume":
        runs.resume()
    elif action == "stop":
        runs.stop()
    elif action == "step":
        body = await read_object(request) if request.can_read_body else {}
        runs.step(_optional_str(body.get("node"), "node"))
    else:
        raise not_found(f"no run action {action!r}; use pause, resume, step or stop")
    return ok()


@routes.post("/api/prompts/{prompt_id}")
async def answer(request: web.Request) -> web.Response:
    body = await read_object(request)
    if "answer" not in body:
        raise bad_message('give the answer as {"answer": VALUE}')
    request.app[RUN_MANAGER].answer(request.match_info["prompt_id"], body["answer"])
    return ok()


@routes.post("/api/cache/clear")
async def clear(request: web.Request) -> web.Response:
    body = await read_object(request)
    workflow = body.get("workflow")
    if not isinstance(workflow, str):
        raise bad_message('give the workflow as {"workflow": "name.json", "node": ID or null}')
    node = _optional_str(body.get("node"), "node")
    return reply(await request.app[RUN_MANAGER].clear(workflow, node))


@routes.get("/api/outputs")
async def output(request: web.Request) -> web.Response:
    query = _required(request.query, "workflow", "node")
    index = _int(query.get("index", "0"), "index")
    item = await request.app[RUN_MANAGER].output(
        query["workflow"], query["node"], query.get("output", "out"), index
    )
    return reply(item)


@routes.get("/api/outputs/gallery")
async def gallery(request: web.Request) -> web.Response:
    query = _required(request.query, "workflow", "node")
    order = query.get("order", "asc")
    if order not in ("asc", "desc"):
        raise bad_message(f"order must be asc or desc, got {order!r:.40}")
    wanted = GalleryQuery(
        filter=query.get("filter", ""),
        sort=query.get("sort") or None,
        order="desc" if order == "desc" else "asc",
        offset=_int(query.get("offset", "0"), "offset"),
        limit=_int(query.get("limit", "100"), "limit"),
    )
    page = await request.app[RUN_MANAGER].gallery(
        query["workflow"], query["node"], query.get("output", "out"), wanted
    )
    return reply(page)


def _int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise bad_message(f"{name} must be a whole number, got {text!r:.40}") from None


def _optional_str(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise bad_message(f"{name} must be a string or null")
    return value


def _required(query: Mapping[str, str], *keys: str) -> Mapping[str, str]:
    """`query`, once it has every one of `keys`; else a 400 naming those it lacks."""
    missing = [k for k in keys if k not in query]
    if missing:
        raise bad_message(f"missing query parameter(s): {', '.join(missing)}")
    return query
