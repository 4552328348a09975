"""Jobs: what the MCP tools queue, watch, answer and stop, in one place over the server's
JobQueue (jobs run one after another), its RunManager (prompts, the outputs the run host
keeps), its Hub (live run state) and its store (runs that ended: their nodes and outputs)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from graphbook import protocol as p
from graphbook.server.errors import ServerError, not_found
from graphbook.server.history import KIND, run_snapshot, saved_nodes
from graphbook.server.keys import HUB, JOBS, RUN_MANAGER, STORE
from graphbook.store import Store

PROMPT_CHECK = 0.1
"""How often a wait looks whether the job's run asks a prompt: the end of a job wakes it at
once (JobQueue.wait); a prompt is seen in the live view's prompts, without a snapshot."""
READ_TIMEOUT = 2.0
"""Seconds a read of the store waits for another process's write lock."""


@dataclass(frozen=True)
class JobView:
    """A job (or a run started without one) as an agent needs it: the queue's record, its run
    (live, or from the store once the server no longer holds it) and the prompts it asks."""

    job: p.Job | None
    run: p.RunSnapshot | None
    prompts: list[p.Prompt]

    @property
    def ended(self) -> bool:
        if self.job is not None:
            return self.job.state in p.JOB_ENDED
        return self.run is not None and self.run.status not in ("running", "paused")


class Jobs:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    async def submit(self, request: p.RunRequest) -> p.Job:
        """Queue a run; it starts when the runs before it have ended. A request with problems
        (bad overrides or inputs, an invalid workflow) is refused now, as POST /api/runs
        refuses it, not queued to fail later."""
        await self.app[RUN_MANAGER].check(request)
        return await self.app[JOBS].submit(request)

    def listing(self) -> p.JobList:
        return self.app[JOBS].listing()

    async def view(self, ident: str) -> JobView:
        """The job `ident` names, or the run it names (a run id, of a job or not)."""
        try:
            job = await self.app[JOBS].find(ident)
        except ServerError as exc:
            if exc.status != 404:
                raise
            return await self._run_view(ident, exc)
        if job.run_id is None:
            return JobView(job, None, [])
        live = self._live(job.run_id)
        if live is not None:
            return JobView(job, *live)
        return JobView(job, await self._stored(job.run_id), [])

    async def _run_view(self, run_id: str, missing: ServerError) -> JobView:
        live = self._live(run_id)
        if live is not None:
            return JobView(None, *live)
        run = await self._stored(run_id)
        if run is None:
            raise not_found(f"no job or run {run_id!r}; list_jobs lists the jobs") from missing
        return JobView(None, run, [])

    async def _stored(self, run_id: str) -> p.RunSnapshot | None:
        return await asyncio.to_thread(_stored, self.app[STORE], run_id)

    async def wait(self, job_id: str, timeout: float) -> JobView:
        """The job once it has ended or asks a prompt, or as it is after `timeout` seconds."""
        queue = self.app[JOBS]
        deadline = time.monotonic() + timeout
        while True:
            job = await queue.find(job_id)
            left = deadline - time.monotonic()
            if job.state in p.JOB_ENDED or left <= 0 or self._asking(job.run_id):
                return await self.view(job_id)
            await queue.wait(job_id, min(left, PROMPT_CHECK))

    def stop(self, job_id: str) -> p.Job:
        """Stop the running job, or take a queued one out of the queue."""
        queue = self.app[JOBS]
        if queue.get(job_id).state == "queued":
            return queue.cancel(job_id)
        return queue.stop(job_id)

    def answer(self, prompt_id: str, answer: Any) -> None:
        self.app[RUN_MANAGER].answer(prompt_id, answer)

    async def output(
        self, view: JobView, node: str, output: str, index: int, *, brief: bool = True
    ) -> tuple[int, Any, bool]:
        """Dict #index of `node`'s `output` in the run `view` shows: (how many there are, its
        preview, whether it is the run host's full preview) from the outputs the run host
        keeps while the run is its workflow's latest, else from those its record kept."""
        run = view.run
        if run is None:
            state = view.job.state if view.job is not None else "unknown"
            raise not_found(f"the job has not run yet ({state}); wait_for_job waits for it")
        if await self._latest(run):
            try:
                manager = self.app[RUN_MANAGER]
                shown = await manager.output(run.workflow, node, output, index, brief=brief)
                return shown.total, shown.item, True
            except ServerError as exc:  # none kept there (a new run host): the record's
                if exc.status != 404:
                    raise
        return await self._kept(run, node, output, index)

    async def _latest(self, run: p.RunSnapshot) -> bool:
        """Whether the run host's outputs of the run's workflow are this run's: it is the
        workflow's latest run, and no other run of it is going."""
        active = self.app[RUN_MANAGER].active
        if active is not None and active.config.workflow == run.workflow:
            return active.run_id == run.run_id
        store: Store = self.app[STORE]
        latest = await asyncio.to_thread(
            lambda: store.reading(READ_TIMEOUT).latest_run(KIND, run.workflow)
        )
        return latest is None or latest.id == run.run_id

    async def _kept(
        self, run: p.RunSnapshot, node: str, output: str, index: int
    ) -> tuple[int, Any, bool]:
        store: Store = self.app[STORE]
        kept = await asyncio.to_thread(lambda: store.reading(READ_TIMEOUT).run_outputs(run.run_id))
        shown = (kept or {}).get(node, {}).get(output)
        if shown is None:
            known = ", ".join(sorted(kept or {})) or "none"
            raise not_found(
                f"run {run.run_id} kept no outputs of node {node!r} on {output!r} (nodes with "
                f"outputs kept: {known})"
            )
        count, items = int(shown["count"]), list(shown["items"])
        if not 0 <= index < count:
            raise not_found(f"node {node!r} handed on {count} dict(s) on {output!r}, not #{index}")
        if index >= len(items):
            raise not_found(
                f"run {run.run_id} kept the first {len(items)} of {count} dicts of {node!r} on "
                f"{output!r}; a later run of {run.workflow} took its place in the run host. "
                "Run the workflow again to read the others"
            )
        return count, items[index], False

    def _live(self, run_id: str) -> tuple[p.RunSnapshot, list[p.Prompt]] | None:
        hub = self.app[HUB]
        hub.flush()
        for view in (hub.view, *hub.last.values()):
            snapshot = view.snapshot()
            if snapshot is not None and snapshot.run_id == run_id:
                asking = [q for q in view.prompts.values() if q.run_id == run_id]
                return snapshot, [] if self._stopping(run_id) else asking
        return None

    def _asking(self, run_id: str | None) -> bool:
        """Whether the run is live and asks a prompt (what `_live` would list)."""
        if run_id is None or self._stopping(run_id):
            return False
        hub = self.app[HUB]  # prompts are never held back with progress: no flush needed
        views = (hub.view, *hub.last.values())
        return any(q.run_id == run_id for view in views for q in view.prompts.values())

    def _stopping(self, run_id: str) -> bool:
        """A stopped run's prompts were cancelled; they linger in the view until it ends."""
        active = self.app[RUN_MANAGER].active
        return active is not None and active.run_id == run_id and active.control.stopping


def _stored(store: Store, run_id: str) -> p.RunSnapshot | None:
    reading = store.reading(READ_TIMEOUT)
    try:
        record = reading.get_run(run_id)
    except KeyError:
        return None
    except ValueError as exc:
        raise ServerError(503, "store_failed", str(exc)) from None
    return run_snapshot(record, saved_nodes(reading, record.id))
