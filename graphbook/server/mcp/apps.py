"""Tools for apps (docs/apps.md): the apps and their forms, a run asked for with an app's
inputs (the checks its page makes, refused naming each wrong input), its results. On a server
that serves apps only (`serve --apps`) these and the tools that only read are the ones offered."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphbook import protocol as p
from graphbook.server.errors import ServerError
from graphbook.server.keys import APPS, JOBS, RESULTS
from graphbook.server.mcp.tools import ADDS, READS, add
from graphbook.server.mcp.workflows import WorkflowPath
from graphbook.server.routes.apps import app_run, ask_run

ROWS = 10
"""Rows of each table (and dicts of each gallery) app_results shows."""
JobId = Annotated[str, Field(description="the job id run_app gave")]


class AppTools:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    async def list_apps(self) -> dict[str, Any]:
        """Every workflow as an app: its inputs and the outputs it shows, and whether it has
        problems (an app with problems cannot run)."""
        listing = await asyncio.to_thread(self.app[APPS].listing)
        return p.to_json(listing)  # type: ignore[no-any-return]

    async def describe_app(self, path: WorkflowPath) -> dict[str, Any]:
        """An app's form: its inputs as JSON Schema (type, default, minimum, maximum, enum,
        format file/folder/image for paths), the outputs it shows, its problems."""
        info = await asyncio.to_thread(self.app[APPS].info, path)
        return p.to_json(info)  # type: ignore[no-any-return]

    async def run_app(
        self,
        path: WorkflowPath,
        inputs: Annotated[
            dict[str, Any], Field(description="{input name: value}; left out: its default")
        ],
    ) -> dict[str, Any]:
        """Run an app with these inputs, as its page's Run does: queued as a job (job_id;
        wait_for_job waits for it, app_results shows what it made). A wrong value is refused
        here, each input named with what is wrong with it, and nothing is queued."""
        job = await ask_run(self.app, path, inputs)
        return {"job_id": job.id, "state": job.state, "position": job.position}

    async def app_results(self, job_id: JobId) -> dict[str, Any]:
        """What an app's run made, once it ended: each output with its count, a table's
        columns and first rows, a gallery's first dicts (image paths and fields), files,
        text; while it waits or runs, its place in the queue or each node's progress."""
        job = await self.app[JOBS].find(job_id)
        if not job.request.app:
            raise ServerError(404, "not_found", f"job {job_id} was not asked for by an app")
        run = await app_run(self.app, job)
        shown: dict[str, Any] = p.to_json(run)
        if job.run_id is not None:
            shown["rows"] = await asyncio.to_thread(self._first_rows, job.run_id, run.results)
        return shown

    def _first_rows(self, run_id: str, results: list[p.AppResult]) -> dict[str, Any]:
        results_store = self.app[RESULTS]
        rows: dict[str, Any] = {}
        for result in results:
            if result.kind == "table":
                page = results_store.table_page(run_id, result.name, 0, ROWS, None, "asc")
                rows[result.name] = {"columns": page.columns, "rows": page.rows}
            elif result.kind in ("images", "file"):
                rows[result.name] = results_store.rows(run_id, result.name)[:ROWS]
        return rows


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = AppTools(app)
    for tool in (tools.list_apps, tools.describe_app, tools.app_results):
        add(server, tool, READS)
    add(server, tools.run_app, ADDS)


APP_TOOLS = frozenset({"run_app"})
"""The tools that change something which a server serving apps only still offers."""
