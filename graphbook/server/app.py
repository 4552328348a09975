"""create_app(): the one aiohttp application, used by `graphbook serve` and by the tests."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from graphbook.registry import Registry
from graphbook.server import (
    catalog,
    jobroutes,
    media,
    runs,
    system,
    templates,
    webapp,
    workflows,
    ws,
)
from graphbook.server.catalog import CatalogState
from graphbook.server.history import mark_interrupted
from graphbook.server.hub import Hub
from graphbook.server.jobs import JobQueue, jobs_ctx
from graphbook.server.keys import (
    CATALOG,
    HUB,
    JOBS,
    MEDIA,
    REGISTRY,
    SESSION,
    SETTINGS,
    STORE,
    WORKFLOWS,
)
from graphbook.server.mcp import http as mcp_http
from graphbook.server.media import MediaStore
from graphbook.server.security import error_middleware, security_middleware
from graphbook.server.session import Session
from graphbook.server.settings import ServerSettings
from graphbook.server.watcher import watcher_ctx
from graphbook.server.workflows import WorkflowFiles
from graphbook.store import open_store

logger = logging.getLogger(__name__)
STORE_FILE = "graphbook.sqlite"


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
        middlewares=[error_middleware, security_middleware(settings)],
    )
    _build(app, settings, registry or Registry.with_builtins())
    app.cleanup_ctx.append(_session_ctx)
    app.cleanup_ctx.append(watcher_ctx)
    app.cleanup_ctx.append(jobs_ctx)  # once node files are loaded; closed before the session
    mcp_http.install(app)
    for module in (catalog, workflows, templates, runs, jobroutes, media, system, ws, webapp):
        app.add_routes(module.routes)  # webapp last: its catch-all serves the app's own paths
    return app


def _build(app: web.Application, settings: ServerSettings, registry: Registry) -> None:
    state = CatalogState(registry, settings.nodes)
    store, moved = open_store(settings.data / STORE_FILE, move_damaged=settings.move_damaged_store)
    if moved is not None:
        logger.warning("moved the damaged run store aside to %s; starting a new history", moved)
    mark_interrupted(store)
    hub = Hub(lambda: state.version)
    files = WorkflowFiles(settings.workflows, registry)
    media_store = MediaStore(settings.roots())
    app[SETTINGS] = settings
    app[REGISTRY] = registry
    app[CATALOG] = state
    app[STORE] = store
    app[HUB] = hub
    app[MEDIA] = media_store
    app[WORKFLOWS] = files
    app[SESSION] = Session(settings, registry, store, hub, media_store, files)
    app[JOBS] = JobQueue(app[SESSION], store, hub)


async def _session_ctx(app: web.Application) -> AsyncIterator[None]:
    """Start the worker pool with the app; on shutdown stop the run, then close everything."""
    session = app[SESSION]
    await session.open()
    yield
    await app[HUB].close()
    await session.close()
