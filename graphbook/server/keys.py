"""The typed keys under which the app holds its parts (one of each per app).

The parts (catalog, workflow files, run manager, job queue, ...) never import this module: they
are plain objects, built and wired in app.py. What reads them from the app imports it: the
routes, the MCP tools and the folder watcher."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from graphbook.registry import Registry
    from graphbook.server.apps import Apps
    from graphbook.server.catalog import CatalogState
    from graphbook.server.components import ComponentFiles
    from graphbook.server.hub import Hub
    from graphbook.server.jobs import JobQueue
    from graphbook.server.media import MediaStore
    from graphbook.server.results import Results
    from graphbook.server.runmanager import RunManager
    from graphbook.server.settings import ServerSettings
    from graphbook.server.workflows import WorkflowFiles
    from graphbook.store import Store

SETTINGS: web.AppKey[ServerSettings] = web.AppKey("settings")
REGISTRY: web.AppKey[Registry] = web.AppKey("registry")
CATALOG: web.AppKey[CatalogState] = web.AppKey("catalog")
STORE: web.AppKey[Store] = web.AppKey("store")
MEDIA: web.AppKey[MediaStore] = web.AppKey("media")
HUB: web.AppKey[Hub] = web.AppKey("hub")
RUN_MANAGER: web.AppKey[RunManager] = web.AppKey("run_manager")
WORKFLOWS: web.AppKey[WorkflowFiles] = web.AppKey("workflows")
COMPONENTS: web.AppKey[ComponentFiles] = web.AppKey("components")
JOBS: web.AppKey[JobQueue] = web.AppKey("jobs")
APPS: web.AppKey[Apps] = web.AppKey("apps")
RESULTS: web.AppKey[Results] = web.AppKey("results")
