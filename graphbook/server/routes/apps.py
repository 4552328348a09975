"""/api/apps: workflows as apps (docs/apps.md): the apps and each one's form, its runs asked
for (a queued job each, refused by field when a value is wrong) and followed (the queue's
place, each node's progress, then the results: galleries, tables, downloads, files), the
pickers' folders and uploads."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

from aiohttp import web

from graphbook import protocol as p
from graphbook.server.errors import ServerError, bad_message, not_found
from graphbook.server.gallery import GalleryQuery
from graphbook.server.keys import APPS, HUB, JOBS, MEDIA, RESULTS, RUN_MANAGER, SETTINGS
from graphbook.server.request import read_object, reply
from graphbook.server.results import FORMATS
from graphbook.server.workflows import from_body

routes = web.RouteTableDef()
APP = r"/api/apps/{path:.+\.json}"
RUN = r"/api/apps/runs/{job_id:[0-9a-f]{12}}"
RUNS_LISTED = 50
PAGE = 100


@routes.get("/api/apps")
async def listing(request: web.Request) -> web.Response:
    return reply(await asyncio.to_thread(request.app[APPS].listing))


@routes.get("/api/apps/browse")
async def browse(request: web.Request) -> web.Response:
    query = request.query
    apps = request.app[APPS]
    root = query.get("root") or next(iter(apps.roots), "")
    accept = [s for s in query.get("accept", "").split(",") if s]
    kind = query.get("kind", "file")
    found = await asyncio.to_thread(apps.browse, root, query.get("path", ""), kind, accept)
    return reply(found)


@routes.post("/api/apps/preview")
async def preview(request: web.Request) -> web.Response:
    """The app of the editor's unsaved workflow: `{"workflow": NAME, "graph": DOCUMENT}`."""
    body = await read_object(request)
    name, graph = body.get("workflow"), body.get("graph")
    if not isinstance(name, str) or not isinstance(graph, dict):
        raise bad_message('give {"workflow": "NAME.json", "graph": {...the workflow...}}')
    apps = request.app[APPS]
    workflow = from_body(graph, name)
    workflow.library = apps.files.library
    return reply(await asyncio.to_thread(apps.info, name, workflow))


@routes.get(RUN)
async def one_run(request: web.Request) -> web.Response:
    job = await _app_job(request)
    return reply(await app_run(request.app, job))


@routes.post(RUN + "/stop")
async def stop_run(request: web.Request) -> web.Response:
    """Stop the app's run: take it out of the queue, or stop it running."""
    job = await _app_job(request)
    queue = request.app[JOBS]
    job = queue.cancel(job.id) if job.state == "queued" else queue.stop(job.id)
    return reply(await app_run(request.app, job))


@routes.get(RUN + "/gallery/{output}")
async def gallery(request: web.Request) -> web.Response:
    run_id, output = await _run_id(request), request.match_info["output"]
    query = request.query
    wanted = GalleryQuery(
        filter=query.get("filter", ""),
        sort=query.get("sort") or None,
        order="desc" if query.get("order") == "desc" else "asc",
        offset=_int(query, "offset", 0),
        limit=_int(query, "limit", PAGE),
    )
    results, link = request.app[RESULTS], request.app[MEDIA].link
    return reply(await asyncio.to_thread(results.gallery, run_id, output, wanted, link))


@routes.get(RUN + "/table/{output}")
async def table(request: web.Request) -> web.Response:
    run_id, output, query = await _run_id(request), request.match_info["output"], request.query
    offset, limit = _int(query, "offset", 0), _int(query, "limit", PAGE)
    if offset < 0 or not 1 <= limit <= 500:
        raise bad_message("offset is 0 or more, limit 1 to 500")
    order = "desc" if query.get("order") == "desc" else "asc"
    results = request.app[RESULTS]
    found = await asyncio.to_thread(
        results.table_page, run_id, output, offset, limit, query.get("sort") or None, order
    )
    return reply(found)


@routes.get(RUN + r"/download/{output}.{format:csv|parquet}")
async def download(request: web.Request) -> web.FileResponse:
    run_id, output = await _run_id(request), request.match_info["output"]
    fmt = request.match_info["format"]
    path = await asyncio.to_thread(request.app[RESULTS].download, run_id, output, fmt)
    kinds = dict(zip(FORMATS, ("text/csv", "application/vnd.apache.parquet"), strict=True))
    disposition = f'attachment; filename="{output}.{fmt}"'
    return web.FileResponse(
        path, headers={"Content-Type": kinds[fmt], "Content-Disposition": disposition}
    )


@routes.get(RUN + "/files/{path:.+}")
async def run_file(request: web.Request) -> web.FileResponse:
    run_id = await _run_id(request)
    path = request.app[RESULTS].file(run_id, request.match_info["path"])
    disposition = f'attachment; filename="{quote(path.name)}"'
    return web.FileResponse(path, headers={"Content-Disposition": disposition})


@routes.get(APP + "/runs")
async def app_runs(request: web.Request) -> web.Response:
    name = request.app[APPS].files.name(request.match_info["path"])
    jobs = await request.app[JOBS].app_jobs(name, RUNS_LISTED)
    return reply(p.AppRunList(name, jobs))


@routes.post(APP + "/runs")
async def submit(request: web.Request) -> web.Response:
    """Run the app with `{"inputs": {NAME: VALUE}}`: refused (422 `invalid_inputs`, `fields`
    naming each wrong value) before anything is queued, else queued as a job."""
    body = await read_object(request)
    values = body.get("inputs", {})
    if not isinstance(values, dict):
        raise bad_message('give the values as {"inputs": {"NAME": VALUE, ...}}')
    job = await ask_run(request.app, request.match_info["path"], values)
    return reply(await app_run(request.app, job), status=201)


@routes.post(APP + "/uploads/{input}")
async def upload(request: web.Request) -> web.Response:
    """A file for input `input` (the body, its name in `?name=`): checked against the input
    (an image, the file types it accepts) and the size limit, kept in the uploads folder."""
    apps, field = request.app[APPS], request.match_info["input"]
    filename = request.query.get("name", "")
    if not filename:
        raise bad_message("give the file's name as ?name=FILE")
    rules = await asyncio.to_thread(apps.upload_rules, request.match_info["path"], field)
    data = await _body(request, request.app[SETTINGS].max_upload, field)
    try:
        uploaded = await asyncio.to_thread(apps.upload, rules, filename, data)
    except ServerError as exc:
        exc.fields = {field: exc.message}
        raise
    return reply(uploaded, status=201)


@routes.get(APP)
async def info(request: web.Request) -> web.Response:
    return reply(await asyncio.to_thread(request.app[APPS].info, request.match_info["path"]))


# -- a run asked for, as the page shows it -----------------------------------------------------
async def ask_run(app: web.Application, relative: str, values: dict[str, Any]) -> p.Job:
    """Queue the app's run with `values`, or refuse it before anything is queued: 422
    `invalid_inputs` with `fields` (what is wrong with each value), or the workflow's own
    problems as every run's start checks them (run_request.check_run)."""
    apps = app[APPS]
    name = apps.files.name(relative)
    fields = await asyncio.to_thread(apps.field_problems, name, values)
    if fields:
        count = f"{len(fields)} input{'s' if len(fields) > 1 else ''}"
        message = f"{count} cannot be used: " + "; ".join(f"{k}: {v}" for k, v in fields.items())
        raise ServerError(422, "invalid_inputs", message, fields=fields)
    run = p.RunRequest(name, inputs=values, app=True)
    await app[RUN_MANAGER].check(run)
    return await app[JOBS].submit(run)


async def app_run(app: web.Application, job: p.Job) -> p.AppRun:
    """The app's run now: the job (its place while queued), each node's progress while it
    runs (the server's view of the current run), its results once it has ended."""
    request = job.request
    link = f"/app/{quote(request.workflow)}?job={job.id}"
    stages = _stages(app, job)
    results: list[p.AppResult] = []
    if job.state in p.JOB_ENDED and job.run_id is not None:
        base = f"/api/apps/runs/{job.id}"
        results = await asyncio.to_thread(app[RESULTS].infos, job.run_id, base)
    return p.AppRun(job, request.workflow, dict(request.inputs or {}), link, stages, results)


def _stages(app: web.Application, job: p.Job) -> list[p.AppStage]:
    run = app[HUB].view.run
    if run is None or job.run_id is None or run.started.run_id != job.run_id:
        return []
    return [
        p.AppStage(n.node_id, n.title, n.state, n.received, sum(n.counts.values()), n.rate)
        for n in run.nodes.values()
    ]


async def _app_job(request: web.Request) -> p.Job:
    job = await request.app[JOBS].find(request.match_info["job_id"])
    if not job.request.app:
        raise not_found(f"job {job.id} was not asked for by an app")
    return job


async def _run_id(request: web.Request) -> str:
    job = await _app_job(request)
    if job.run_id is None:
        raise not_found(f"job {job.id} has not run yet ({job.state})")
    return job.run_id


async def _body(request: web.Request, limit: int, field: str) -> bytes:
    """The request's body, refused (413, closing the connection) past `limit` bytes."""
    declared = request.content_length
    if declared is not None and declared > limit:
        raise _too_large(declared, limit, field)
    data = bytearray()
    async for chunk in request.content.iter_chunked(1 << 16):
        data += chunk
        if len(data) > limit:
            raise _too_large(len(data), limit, field)
    return bytes(data)


def _too_large(size: int, limit: int, field: str) -> ServerError:
    message = f"the file is {_mib(size)}; an upload may have {_mib(limit)} at most"
    error = ServerError(413, "too_large", message, fields={field: message})
    error.close = True
    return error


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB" if size >= 1 << 20 else f"{size} bytes"


def _int(query: Any, name: str, default: int) -> int:
    text = query.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise bad_message(f"{name} must be a whole number, got {text!r:.40}") from None
