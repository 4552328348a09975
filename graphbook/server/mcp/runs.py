"""Tools for runs: start one with overrides, wait for it, its status, errors with tracebacks,
logs, a node's outputs; answer a prompt; stop."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphbook import protocol as p
from graphbook.server.keys import RUN_MANAGER
from graphbook.server.mcp.jobs import Jobs, JobView
from graphbook.server.mcp.workflows import WorkflowPath

MAX_WAIT = 600.0
JobId = Annotated[str, Field(description="the job id run_workflow gave")]
NodeId = Annotated[str, Field(description="a node id of the workflow")]


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

    def list_jobs(self) -> dict[str, Any]:
        """The queue: the jobs waiting in the order they run, the running one, and the ones
        that ended lately (newest first)."""
        listing: dict[str, Any] = p.to_json(self.jobs.listing())
        return listing

    async def wait_for_job(
        self,
        job_id: JobId,
        timeout: Annotated[float, Field(ge=0, le=MAX_WAIT, description="seconds at most")] = 60,
    ) -> dict[str, Any]:
        """Wait until the job ends (completed, failed, stopped, cancelled) or asks a prompt,
        at most `timeout` seconds; then its status as job_status gives it."""
        return overview(await self.jobs.wait(job_id, timeout))

    async def job_status(self, job_id: JobId) -> dict[str, Any]:
        """A job's status (queued, running, completed, failed, stopped, cancelled,
        interrupted), why it failed, and once it runs, per node: state, counts of dicts handed
        on per output, its errors with their tracebacks; the prompts waiting for an answer."""
        return overview(await self.jobs.view(job_id))

    async def job_logs(
        self,
        job_id: JobId,
        node: Annotated[str | None, Field(description="only this node's logs")] = None,
    ) -> dict[str, Any]:
        """The last log lines of a job's nodes (at most 200 a node)."""
        run = (await self.jobs.view(job_id)).run
        nodes = run.nodes if run is not None else []
        return {
            n.node_id: {"logs": p.to_json(n.logs), "dropped": n.logs_dropped}
            for n in nodes
            if node is None or n.node_id == node
        }

    async def node_output(
        self,
        path: WorkflowPath,
        node: NodeId,
        output: Annotated[str, Field(description="the node's output")] = "out",
        index: Annotated[int, Field(ge=0, description="which dict of that output")] = 0,
    ) -> dict[str, Any]:
        """A preview of one dict a node handed on in the workflow's last run (outputs are kept
        between runs); `total` says how many there are."""
        shown = await self.app[RUN_MANAGER].output(path, node, output, index)
        item: dict[str, Any] = p.to_json(shown)
        return item

    def answer_prompt(
        self,
        prompt_id: Annotated[str, Field(description="the prompt's id, from job_status")],
        answer: Annotated[Any, Field(description="the answer, of the kind the prompt asks")],
    ) -> dict[str, Any]:
        """Answer a prompt a running job asks."""
        self.jobs.answer(prompt_id, answer)
        return {"answered": prompt_id}

    def stop_job(self, job_id: JobId) -> dict[str, Any]:
        """Stop the running job (it ends within seconds), or cancel a queued one."""
        job = self.jobs.stop(job_id)
        return {"job_id": job.id, "state": job.state}


def overview(view: JobView) -> dict[str, Any]:
    job, run = view.job, view.run
    summary: dict[str, Any] = {
        "job_id": job.id,
        "status": job.state,
        "workflow": job.request.workflow,
        "position": job.position,
        "error": job.error,
    }
    if run is not None:
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
        "errors": [p.to_json(entry) for entry in node.errors],
    }


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = RunTools(app)
    for tool in (
        tools.run_workflow,
        tools.list_jobs,
        tools.wait_for_job,
        tools.job_status,
        tools.job_logs,
        tools.node_output,
        tools.answer_prompt,
        tools.stop_job,
    ):
        server.add_tool(tool)
