"""create_app(): the one aiohttp application, used by `graphbook serve` and by the tests."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from graphbook import protocol as p
from graphbook.nodes import library_registry
from graphbook.registry import Registry
from graphbook.server.apps import Apps
from graphbook.server.appsonly import apps_only_middleware
from graphbook.server.catalog import CatalogState
from graphbook.server.components import ComponentFiles
from graphbook.server.history import mark_interrupted
from graphbook.server.hub import Hub
from graphbook.server.jobs import JobQueue
from graphbook.server.keys import (
    APPS,
    CATALOG,
    COMPONENTS,
    HUB,
    JOBS,
    MEDIA,
    REGISTRY,
    RESULTS,
    RUN_MANAGER,
    SETTINGS,
    STORE,
    WORKFLOWS,
)
from graphbook.server.mcp import http as mcp_http
from graphbook.server.media import MediaStore
from graphbook.server.openapi import OBJECT, OK, Route, document
from graphbook.server.request import reply
from graphbook.server.results import Results
from graphbook.server.routes import (
    apps,
    catalog,
    components,
    jobs,
    media,
    runs,
    system,
    templates,
    webapp,
    workflows,
    ws,
)
from graphbook.server.runmanager import RunManager
from graphbook.server.security import error_middleware, security_middleware
from graphbook.server.settings import ServerSettings
from graphbook.server.watcher import watcher_ctx
from graphbook.server.workflows import WorkflowFiles
from graphbook.store import open_store

logger = logging.getLogger(__name__)
STORE_FILE = "graphbook.sqlite"
WORKFLOW_FILE = "/api/workflows/{path}"
COMPONENT_FILE = "/api/components/{path}"
RUN = "/api/runs/{run_id}"
JOB = "/api/jobs/{job_id}"
APP_FILE = "/api/apps/{path}"
APP_RUN = "/api/apps/runs/{job_id}"

API: tuple[Route, ...] = (
    # method, path, summary, request, reply (protocol types or JSON Schema), status, errors
    Route("GET", "/api/openapi.json", "this document", reply=OBJECT),
    Route("GET", "/api/info", "protocol version, server version, token, media roots", reply=OBJECT),
    Route("GET", "/api/catalog", "the node kinds and the node files that failed", reply=p.Catalog),
    Route("GET", "/api/workflows", "the workflow files", reply=p.WorkflowList),
    Route(
        "GET",
        WORKFLOW_FILE,
        "a workflow file, canonical, with its problems",
        reply=p.WorkflowDocument,
        errors=(404, 422),
    ),
    Route(
        "GET",
        WORKFLOW_FILE + "/inputs",
        "the workflow's inputs as JSON Schema",
        reply=p.WorkflowInputs,
        errors=(404, 422),
    ),
    Route(
        "PUT",
        WORKFLOW_FILE,
        "save a workflow (If-Match: its hash)",
        request=OBJECT,
        reply=p.WorkflowDocument,
        errors=(409, 413),
    ),
    Route(
        "PATCH",
        WORKFLOW_FILE,
        'rename a workflow: {"path": NEW}',
        request=OBJECT,
        reply=p.WorkflowDocument,
        errors=(404, 409),
    ),
    Route("DELETE", WORKFLOW_FILE, "delete a workflow file", status=204, errors=(404, 409)),
    Route("GET", "/api/components", "the library's component files", reply=p.WorkflowList),
    Route(
        "GET",
        COMPONENT_FILE,
        "a library component, with its problems",
        reply=p.ComponentDocument,
        errors=(404, 422),
    ),
    Route(
        "PUT",
        COMPONENT_FILE,
        "save a library component (If-Match: its hash)",
        request=OBJECT,
        reply=p.ComponentDocument,
        errors=(409, 413),
    ),
    Route("DELETE", COMPONENT_FILE, "delete a library component", status=204, errors=(404,)),
    Route("GET", "/api/templates", "the workflow templates", reply=p.TemplateList),
    Route(
        "POST",
        "/api/templates/{name}",
        'a template into a new file: {"path": NEW}, or one with no nodes: {"path", "fill": true}',
        request=OBJECT,
        reply=p.TemplateCreated,
        status=201,
        errors=(404, 409),
    ),
    Route(
        "POST",
        "/api/runs",
        "start a run (inputs, overrides)",
        request=p.RunRequest,
        reply=p.RunAccepted,
        status=202,
        errors=(404, 409, 422),
    ),
    Route(
        "GET",
        "/api/runs",
        "past runs, newest first",
        reply=p.RunList,
        errors=(503,),
        query=("limit: at most this many (100)", "kind: workflow, train, search or batch"),
    ),
    Route("GET", "/api/runs/current", "the run going on (a snapshot)", reply=p.Snapshot),
    Route(
        "GET",
        "/api/runs/last",
        "a workflow's last run",
        reply=p.LastRun,
        errors=(503,),
        query=("workflow: its path",),
    ),
    Route("GET", RUN, "one past run", reply=p.RunRecordInfo, errors=(404, 503)),
    Route(
        "GET",
        RUN + "/details",
        "one past run with its nodes and changes since",
        reply=p.RunDetails,
        errors=(404, 503),
    ),
    Route(
        "POST",
        RUN + "/rerun",
        "run a past run again as it was",
        reply=p.RunAccepted,
        status=202,
        errors=(404, 409, 422, 503),
    ),
    Route("GET", RUN + "/metrics", "a run's metric series", reply=p.RunMetrics, errors=(404, 503)),
    Route(
        "GET",
        "/api/metrics",
        "several runs' metric series",
        reply=p.MetricsList,
        errors=(404, 503),
        query=("runs: ID,ID,...",),
    ),
    Route(
        "POST",
        "/api/runs/current/{action}",
        "pause, resume, step or stop the run",
        reply=OK,
        errors=(404, 409),
    ),
    Route(
        "POST",
        "/api/prompts/{prompt_id}",
        'answer a prompt: {"answer": VALUE}',
        request=OBJECT,
        reply=OK,
        errors=(404, 409),
    ),
    Route(
        "POST",
        "/api/cache/clear",
        'clear cached outputs: {"workflow", "node"}',
        request=OBJECT,
        reply=p.CacheCleared,
        errors=(409,),
    ),
    Route(
        "GET",
        "/api/outputs",
        "one output item of a node",
        reply=p.OutputItem,
        errors=(404,),
        query=("workflow", "node", "output: out", "index: 0"),
    ),
    Route(
        "GET",
        "/api/outputs/gallery",
        "a page of a node's output dicts, filtered and sorted, with image thumbnails",
        reply=p.GalleryPage,
        errors=(400, 404),
        query=(
            "workflow",
            "node",
            "output: out",
            'filter: FIELD OP VALUE [and ...], OP one of == != < <= > >= contains ("")',
            "sort: a field to sort by, numbers by value (none: as handed on)",
            "order: asc or desc (asc)",
            "offset: 0",
            "limit: 1 to 500 (100)",
        ),
    ),
    Route(
        "GET",
        "/api/media/thumb",
        "a thumbnail (160 px JPEG) of an image file a gallery row or preview links",
        reply=OBJECT,
        media="image/jpeg",
        errors=(400, 403, 404),
        query=("path: the image file", "sig: the server's signature of it"),
    ),
    Route(
        "GET",
        "/api/media/image",
        "an image file an output named, whole, wherever it lies (its preview's signed url)",
        reply=OBJECT,
        media="application/octet-stream",
        errors=(400, 403, 404),
        query=("path: the image file", "sig: the server's signature of it"),
    ),
    Route(
        "GET",
        "/api/media/mem/{media_id}",
        "an image a run made",
        reply=OBJECT,
        media="image/png",
        errors=(404,),
    ),
    Route(
        "GET",
        "/api/media/file/{root}/{path}",
        "an image file under a media root",
        reply=OBJECT,
        media="application/octet-stream",
        errors=(404,),
    ),
    Route(
        "POST",
        "/api/jobs",
        "queue a job: a workflow with overrides or inputs, run when the jobs before it ended",
        request=p.RunRequest,
        reply=p.Job,
        status=201,
        errors=(404, 422, 503),
    ),
    Route("GET", "/api/jobs", "the queue: queued, running and ended jobs", reply=p.JobList),
    Route(
        "GET",
        JOB,
        "one job; with ?wait=SECONDS the reply waits for it to end (at most that long)",
        reply=p.Job,
        errors=(404,),
        query=("wait: seconds to wait for the job to end; the reply is then a JobWait",),
    ),
    Route("DELETE", JOB, "cancel a queued job", reply=p.Job, errors=(404, 409)),
    Route("POST", JOB + "/cancel", "cancel a queued job", reply=p.Job, errors=(404, 409)),
    Route(
        "POST",
        JOB + "/move",
        'move a queued job: {"to": "up"|"down"|"top"|"bottom"|INDEX}',
        request=OBJECT,
        reply=p.Job,
        errors=(404, 409),
    ),
    Route("POST", JOB + "/stop", "stop the running job's run", reply=p.Job, errors=(404, 409)),
    Route("GET", "/api/apps", "every workflow as an app", reply=p.AppList),
    Route(
        "GET",
        "/api/apps/browse",
        "a folder under the roots the app pickers browse",
        reply=p.BrowseListing,
        errors=(400, 404),
        query=("root: its name", "path: relative to it", "kind: file, folder or image", "accept"),
    ),
    Route(
        "POST",
        "/api/apps/preview",
        'the app of an unsaved workflow: {"workflow", "graph"}',
        request=OBJECT,
        reply=p.AppInfo,
        errors=(400,),
    ),
    Route(
        "GET", APP_RUN, "an app's run: its place, progress, results", reply=p.AppRun, errors=(404,)
    ),
    Route(
        "POST", APP_RUN + "/stop", "cancel or stop an app's run", reply=p.AppRun, errors=(404, 409)
    ),
    Route(
        "GET",
        APP_RUN + "/gallery/{output}",
        "a page of an images result",
        reply=p.GalleryPage,
        errors=(400, 404),
        query=("filter", "sort", "order: asc or desc", "offset: 0", "limit: 1 to 500 (100)"),
    ),
    Route(
        "GET",
        APP_RUN + "/table/{output}",
        "a page of a table result, sorted",
        reply=p.AppTablePage,
        errors=(400, 404),
        query=("sort: a column", "order: asc or desc", "offset: 0", "limit: 1 to 500 (100)"),
    ),
    Route(
        "GET",
        APP_RUN + "/download/{output}.{format}",
        "a table result as CSV or Parquet",
        reply=OBJECT,
        media="application/octet-stream",
        errors=(400, 404),
    ),
    Route(
        "GET",
        APP_RUN + "/files/{path}",
        "a file an app's run wrote",
        reply=OBJECT,
        media="application/octet-stream",
        errors=(400, 404),
    ),
    Route(
        "GET",
        APP_FILE,
        "an app: its form (inputs' JSON Schema) and outputs",
        reply=p.AppInfo,
        errors=(404, 422),
    ),
    Route(
        "GET",
        APP_FILE + "/runs",
        "the runs an app made, newest first",
        reply=p.AppRunList,
        errors=(404, 503),
    ),
    Route(
        "POST",
        APP_FILE + "/runs",
        'run an app: {"inputs": {NAME: VALUE}}, queued as a job',
        request=OBJECT,
        reply=p.AppRun,
        status=201,
        errors=(404, 422, 503),
    ),
    Route(
        "POST",
        APP_FILE + "/uploads/{input}",
        "a file for an input (the body), kept in the uploads folder",
        request=OBJECT,
        reply=p.Uploaded,
        status=201,
        errors=(400, 404, 413),
        query=("name: the file's name",),
    ),
    Route("GET", "/api/system", "CPU, memory, GPUs, worker pool, cache", reply=p.SystemStats),
    Route("GET", "/api/settings", "the server's settings", reply=OBJECT),
    Route(
        "PUT",
        "/api/settings",
        'change settings: {"cache_budget_bytes"}',
        request=OBJECT,
        reply=OBJECT,
    ),
)
"""Every route under /api, for GET /api/openapi.json (tests/server/test_openapi.py checks that
each registered route has its row): add a row with each new route."""
openapi_routes = web.RouteTableDef()


@openapi_routes.get("/api/openapi.json")
async def openapi(request: web.Request) -> web.Response:
    return reply(document(API))


def create_app(
    settings: ServerSettings | None = None, *, registry: Registry | None = None
) -> web.Application:
    """The server for `settings`; raises GraphbookError for unsafe settings (no token off
    loopback). Node files load (in a thread) as the app starts, before it listens; workers and
    the folder watcher start with the app."""
    settings = settings or ServerSettings()
    settings.check()
    for folder in (settings.workflows, settings.nodes, settings.data):
        folder.mkdir(parents=True, exist_ok=True)
    app = web.Application(
        client_max_size=settings.max_body,
        middlewares=[
            error_middleware,
            security_middleware(settings),
            apps_only_middleware(settings),
        ],
    )
    _build(app, settings, registry or library_registry())
    app.cleanup_ctx.append(watcher_ctx)  # first: the run host skips node files that fail
    app.cleanup_ctx.append(_run_manager_ctx)
    app.on_shutdown.append(_close_sockets)
    app.cleanup_ctx.append(_jobs_ctx)  # once node files are loaded; closed before the run manager
    app.add_routes(openapi_routes)
    mcp_http.install(app)
    for module in (
        catalog,
        workflows,
        components,
        templates,
        runs,
        jobs,
        apps,
        media,
        system,
        ws,
        webapp,
    ):
        app.add_routes(module.routes)  # webapp last: its catch-all serves the app's own paths
    return app


def _build(app: web.Application, settings: ServerSettings, registry: Registry) -> None:
    state = CatalogState(registry, settings.nodes, settings.import_limit)
    store, moved = open_store(settings.data / STORE_FILE, move_damaged=settings.move_damaged_store)
    if moved is not None:
        logger.warning("moved the damaged run store aside to %s; starting a new history", moved)
    mark_interrupted(store)
    hub = Hub(lambda: state.version)
    files = WorkflowFiles(settings.workflows, registry, settings.library)
    library = ComponentFiles(settings.library, registry)
    state.extra = library.infos
    media_store = MediaStore(settings.roots(), data=settings.data)
    app[SETTINGS] = settings
    app[REGISTRY] = registry
    app[CATALOG] = state
    app[STORE] = store
    app[HUB] = hub
    app[MEDIA] = media_store
    app[WORKFLOWS] = files
    app[COMPONENTS] = library
    app[RUN_MANAGER] = RunManager(settings, registry, store, hub, media_store, files)
    app[JOBS] = JobQueue(app[RUN_MANAGER], store, hub)
    app[APPS] = Apps(settings, registry, files)
    app[RESULTS] = Results(app[RUN_MANAGER].results)


async def _close_sockets(app: web.Application) -> None:
    """Shutdown starts: close the websockets first, so open pages reconnect (to the next server
    on this port) instead of holding the shutdown until aiohttp gives up on them."""
    await app[HUB].close()


async def _run_manager_ctx(app: web.Application) -> AsyncIterator[None]:
    """Start the run host with the app; on shutdown stop the run, then close everything."""
    manager = app[RUN_MANAGER]
    await manager.open()
    yield
    await app[HUB].close()
    await manager.close()


async def _jobs_ctx(app: web.Application) -> AsyncIterator[None]:
    """Read the queue back and start it with the app (after the run manager opened); close it
    before the run manager closes."""
    queue = app[JOBS]
    await queue.open()
    yield
    await queue.close()
