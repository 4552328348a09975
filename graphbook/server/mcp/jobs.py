"""Jobs: what the MCP tools queue, watch, answer and stop, in one place over the server's
JobQueue (jobs run one after another), its RunManager (prompts) and its Hub (live run state)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from graphbook import protocol as p
from graphbook.server.errors import ServerError
from graphbook.server.history import run_snapshot, saved_nodes
from graphbook.server.keys import HUB, JOBS, RUN_MANAGER, STORE
from graphbook.store import Store

PROMPT_CHECK = 0.1
"""How often a wait looks whether the job's run asks a prompt: the end of a job wakes it at
once (JobQueue.wait); a prompt is seen in the live view's prompts, without a snapshot."""


@dataclass(frozen=True)
class JobView:
    """A job as an agent needs it: the queue's record, its run (live, or from the store once
    the server no longer holds it) and the prompts its run asks."""

    job: p.Job
    run: p.RunSnapshot | None
    prompts: list[p.Prompt]

    @property
    def ended(self) -> bool:
        return self.job.state in p.JOB_ENDED


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

    async def view(self, job_id: str) -> JobView:
        job = await self.app[JOBS].find(job_id)
        if job.run_id is None:
            return JobView(job, None, [])
        live = self._live(job.run_id)
        if live is not None:
            return JobView(job, *live)
        run = await asyncio.to_thread(_stored, self.app[STORE], job.run_id)
        return JobView(job, run, [])

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
    reading = store.reading(2.0)
    try:
        record = reading.get_run(run_id)
    except KeyError:
        return None
    except ValueError as exc:
        raise ServerError(503, "store_failed", str(exc)) from None
    return run_snapshot(record, saved_nodes(reading, record.id))
