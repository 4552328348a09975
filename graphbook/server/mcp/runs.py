"""Tools for runs: start one with overrides, the queue (a page at a time), wait for a job, its
status, errors with tracebacks, logs, a node's outputs (its images as image content) and
metrics, by job or run id; answer a prompt; stop."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from aiohttp import web
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ContentBlock, TextContent
from pydantic import Field

from graphbook import protocol as p
from graphbook.server.keys import RUN_MANAGER, STORE
from graphbook.server.mcp.images import MAX_IMAGES, Pictures, server_address
from graphbook.server.mcp.jobs import READ_TIMEOUT, Jobs, JobView
from graphbook.server.mcp.tools import ADDS, CHANGES, READS, add, compact
from graphbook.server.mcp.workflows import WorkflowPath
from graphbook.server.metrics import run_metrics

MAX_WAIT = 600.0
JOBS_PAGE = 10
"""Jobs list_jobs gives by default."""
LOG_LINES = 50
"""Log lines of each node job_logs gives by default (the run keeps the last 200)."""
CURVE_POINTS = 20
"""Points of each metric curve run_metrics gives by default (the last one always)."""
JobId = Annotated[str, Field(description="the job id run_workflow gave")]
JobOrRun = Annotated[
    str, Field(description="a job id (run_workflow gave it) or a run id (job_status gives it)")
]
NodeId = Annotated[str, Field(description="a node id of the workflow")]
Listed = Literal[
    "queued", "running", "ended", "completed", "failed", "stopped", "cancelled", "interrupted"
]


class RunTools:
    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.jobs = Jobs(app)

    async def run_workflow(
        self,
        path: WorkflowPath,
        overrides: Annotated[
            dict[str, dict[str, Any]] | None,
            Field(description="{node id or unique title: {parameter: value}} for this run only"),
        ] = None,
        inputs: Annotated[
            dict[str, Any] | None,
            Field(description="{input name: value} for the workflow's inputs (read_workflow)"),
        ] = None,
        mode: Annotated[
            Literal["all", "until"], Field(description="all: every node; until: what `node` needs")
        ] = "all",
        node: Annotated[str | None, Field(description="the node `until` runs up to")] = None,
        continue_on_error: Annotated[
            bool, Field(description="a node failing on one dict reports it and the run goes on")
        ] = False,
    ) -> dict[str, Any]:
        """Queue a run of a saved workflow file; returns its job id at once. Jobs run one
        after another: it starts now if nothing else runs (wait_for_job waits for it). Bad
        overrides or inputs, or a workflow that cannot run, are refused here, saying why."""
        request = p.RunRequest(path, mode, node, None, continue_on_error, overrides, inputs)
        job = await self.jobs.submit(request)
        return {"job_id": job.id, "state": job.state, "position": job.position}

    # The tools below are async even where they do not wait: the SDK runs a plain function in
    # a worker thread, and the queue and the hub are the event loop's (answers publish).
    async def list_jobs(
        self,
        state: Annotated[
            Listed | None,
            Field(
                description="only jobs in this state ('ended': completed, failed, stopped, "
                "cancelled or interrupted)"
            ),
        ] = None,
        since: Annotated[
            float | None, Field(description="only jobs queued or ended at this unix time or later")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="jobs at most")] = JOBS_PAGE,
    ) -> dict[str, Any]:
        """The queue, a few lines a job: the running job, the jobs waiting in the order they
        run, then those that ended lately (newest first); `total` says how many matched.
        job_status gives one job in full."""
        listing = self.jobs.listing()
        every = [*([listing.running] if listing.running else []), *listing.queued]
        found = [
            job
            for job in every + listing.finished
            if _listed(job, state) and (since is None or max(job.created, job.ended or 0) >= since)
        ]
        return {"total": len(found), "jobs": [_brief(job) for job in found[:limit]]}

    async def wait_for_job(
        self,
        job_id: JobId,
        timeout: Annotated[float, Field(ge=0, le=MAX_WAIT, description="seconds at most")] = 60,
    ) -> dict[str, Any]:
        """Wait until the job ends (completed, failed, stopped, cancelled) or asks a prompt,
        at most `timeout` seconds; then its status as job_status gives it."""
        return overview(await self.jobs.wait(job_id, timeout))

    async def job_status(self, job_id: JobOrRun) -> dict[str, Any]:
        """A job's status (queued, running, completed, failed, stopped, cancelled,
        interrupted), why it failed, and once it runs, per node: state, counts of dicts handed
        on per output, its errors with their tracebacks; the prompts waiting for an answer.
        Also a run's, by its run id; an ended run's from the run history."""
        return overview(await self.jobs.view(job_id))

    async def job_logs(
        self,
        job_id: JobOrRun,
        node: Annotated[str | None, Field(description="only this node's logs")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="last lines of each node")] = (
            LOG_LINES
        ),
    ) -> dict[str, Any]:
        """The last log lines of a job's (or run's) nodes, per node; `dropped`: older lines
        not shown."""
        run = (await self.jobs.view(job_id)).run
        nodes = run.nodes if run is not None else []
        return {
            n.node_id: {
                "logs": [_log(entry) for entry in n.logs[-limit:]],
                "dropped": n.logs_dropped + max(0, len(n.logs) - limit),
            }
            for n in nodes
            if (node is None or n.node_id == node) and (n.logs or n.logs_dropped)
        }

    async def node_output(
        self,
        node: NodeId,
        job_id: Annotated[
            str | None,
            Field(
                description="the job (or run) whose outputs to read; without it, the "
                "workflow `path`'s last run"
            ),
        ] = None,
        path: Annotated[
            str | None, Field(description="a workflow file: its last run (when no job_id)")
        ] = None,
        output: Annotated[str, Field(description="the node's output")] = "out",
        index: Annotated[int, Field(ge=0, description="the first dict to show")] = 0,
        count: Annotated[int, Field(ge=1, le=20, description="dicts to show from `index`")] = 1,
        images: Annotated[
            int, Field(ge=0, le=MAX_IMAGES, description="images to attach as pictures")
        ] = 2,
        full: Annotated[
            bool, Field(description="previews in full (long texts and lists not cut)")
        ] = False,
        ctx: Context[Any, Any] | None = None,
    ) -> list[ContentBlock]:
        """Previews of dicts a node handed on in a job's (or run's) run, `total` how many
        there are; the images they hold come as image content (thumbnails, at most `images`),
        each marked `"image": N` in the preview. For the latest run of a workflow any dict
        can be read; for an earlier run, the first few of each output kept with it."""
        if job_id is None and path is None:
            raise p.ProtocolError("bad_message", "give job_id (or run id) or a workflow path")
        pictures = Pictures(self.app, server_address(ctx), images)
        answer: dict[str, Any] = {"node": node, "output": output}
        items = []
        for i in range(index, index + count):
            total, item = await self._output(job_id, path, node, output, i, full, answer)
            items.append(await pictures.show(p.to_json(item)))  # typed previews as JSON
            if i + 1 >= total:
                break
        answer |= {"index": index, "total": total, "items": items}
        return [TextContent(type="text", text=compact(answer)), *pictures.shown]

    async def _output(
        self,
        job_id: str | None,
        path: str | None,
        node: str,
        output: str,
        index: int,
        full: bool,
        answer: dict[str, Any],
    ) -> tuple[int, Any]:
        if job_id is None:
            assert path is not None
            found = await self.app[RUN_MANAGER].output(path, node, output, index, brief=not full)
            answer["workflow"] = found.workflow
            return found.total, found.item
        view = await self.jobs.view(job_id)
        total, item, whole = await self.jobs.output(view, node, output, index, brief=not full)
        if view.run is not None:
            answer |= {"run_id": view.run.run_id, "workflow": view.run.workflow}
        if not whole:
            answer["kept"] = "previews kept with the run (a later run of it took its place)"
        return total, item

    async def run_metrics(
        self,
        job_id: JobOrRun,
        points: Annotated[
            int, Field(ge=1, le=2000, description="points of each curve at most")
        ] = CURVE_POINTS,
    ) -> dict[str, Any]:
        """The metrics a job's (or run's) run recorded (its nodes' own, log_metric, and each
        node's figures: dicts, seconds, items per second), one curve per group and name: its
        last value, lowest and highest, and up to `points` (step, value) pairs."""
        view = await self.jobs.view(job_id)
        if view.run is None:
            return {"curves": []}
        run_id = view.run.run_id
        store = self.app[STORE]

        def read() -> list[p.MetricSeries]:
            reading = store.reading(READ_TIMEOUT)
            return run_metrics(reading, [reading.get_run(run_id)])[0].series

        series = await asyncio.to_thread(read)
        return {"run_id": run_id, "curves": [_curve(s, points) for s in series]}

    async def answer_prompt(
        self,
        prompt_id: Annotated[str, Field(description="the prompt's id, from job_status")],
        answer: Annotated[Any, Field(description="the answer, of the kind the prompt asks")],
    ) -> dict[str, Any]:
        """Answer a prompt a running job asks."""
        self.jobs.answer(prompt_id, answer)
        return {"answered": prompt_id}

    async def stop_job(self, job_id: JobId) -> dict[str, Any]:
        """Stop the running job (it ends within seconds), or cancel a queued one."""
        job = self.jobs.stop(job_id)
        return {"job_id": job.id, "state": job.state}


def overview(view: JobView) -> dict[str, Any]:
    job, run = view.job, view.run
    summary: dict[str, Any] = {}
    if job is not None:
        summary |= {
            "job_id": job.id,
            "status": job.state,
            "workflow": job.request.workflow,
            "position": job.position,
            "error": job.error,
        }
    if run is not None:
        if job is None:
            summary |= {"status": run.status, "workflow": run.workflow}
        summary |= {
            "run_id": run.run_id,
            "seconds": round(run.seconds, 3),
            "errors": run.errors,
            "nodes": [_node(n) for n in run.nodes],
        }
    summary["prompts"] = [
        {"prompt_id": q.prompt_id, "node_id": q.node_id, "prompt": q.prompt, "data": q.data}
        for q in view.prompts
    ]
    return summary


def _node(node: p.NodeSnapshot) -> dict[str, Any]:
    return {
        "node_id": node.node_id,
        "title": node.title,
        "state": node.state,
        "counts": node.counts,
        "seconds": round(node.seconds, 3),
        "errors": errors(node.errors),
    }


OTHER_MESSAGES = 3
"""Other messages of one kind of error a node's status lists (beside its first, in full)."""


def errors(entries: list[p.ErrorEntry]) -> list[dict[str, Any]]:
    """A node's errors by type: the first of each in full (its traceback, the dict it failed
    on), how many there were, and a few of the others' messages: twelve dicts failing one way
    are one traceback, not twelve."""
    kinds: dict[str, dict[str, Any]] = {}
    for entry in entries:
        kind = kinds.get(entry.error.type)
        if kind is None:
            kinds[entry.error.type] = p.to_json(entry) | {"count": 1}
            continue
        kind["count"] += 1
        others = kind.setdefault("others", [])
        message = entry.error.message
        fresh = message != kind["error"]["message"] and message not in others
        if fresh and len(others) < OTHER_MESSAGES:
            others.append(message)
    return list(kinds.values())


def _listed(job: p.Job, state: Listed | None) -> bool:
    if state is None:
        return True
    if state == "ended":
        return job.state in p.JOB_ENDED
    return job.state == state


def _brief(job: p.Job) -> dict[str, Any]:
    brief: dict[str, Any] = {"job_id": job.id, "state": job.state, "workflow": job.request.workflow}
    optional = {
        "position": job.position,
        "run_id": job.run_id,
        "ended": job.ended,
        "error": job.error,
        "errors": job.errors,
    }
    return brief | {key: value for key, value in optional.items() if value}


def _log(entry: p.LogEntry) -> dict[str, Any]:
    shown: dict[str, Any] = p.to_json(entry)
    return {key: value for key, value in shown.items() if value not in (None, "")}


def _curve(series: p.MetricSeries, points: int) -> dict[str, Any]:
    pairs = [(s, v) for s, v in zip(series.steps, series.values, strict=True) if v is not None]
    values = [v for _, v in pairs]
    stride = max(1, -(-len(pairs) // points))
    shown = pairs[::stride][: points - 1] + pairs[-1:] if len(pairs) > points else pairs
    return {
        "group": series.group,
        "name": series.name,
        "count": len(pairs),
        "last": pairs[-1][1] if pairs else None,
        "min": min(values, default=None),
        "max": max(values, default=None),
        "points": [list(pair) for pair in shown],
    }


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = RunTools(app)
    add(server, tools.run_workflow, ADDS)
    for tool in (
        tools.list_jobs,
        tools.wait_for_job,
        tools.job_status,
        tools.job_logs,
        tools.node_output,
        tools.run_metrics,
    ):
        add(server, tool, READS)
    add(server, tools.answer_prompt, ADDS)
    add(server, tools.stop_job, CHANGES)
