"""Jobs: what the MCP tools start, watch, answer and stop, in one place over the server's
Session (one run at a time) and its Hub; a queue of jobs would replace this module alone."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from graphbook import protocol as p
from graphbook.server.errors import ServerError, not_found
from graphbook.server.history import run_snapshot, saved_nodes
from graphbook.server.keys import HUB, SESSION, STORE
from graphbook.store import Store

POLL_SECONDS = 0.05
"""How often a wait looks at the run again (on the loop: cheap, it reads the Hub's view)."""
ENDED = ("completed", "failed", "stopped")


@dataclass(frozen=True)
class JobState:
    """A job as an agent needs it: its run (live or from the store) and its open prompts."""

    job_id: str
    status: str
    """starting, running, paused, completed, failed or stopped."""
    run: p.RunSnapshot | None
    prompts: list[p.Prompt]


class Jobs:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    async def submit(self, request: p.Run) -> str:
        """Start the run now (the session runs one at a time: a second is refused, 409)."""
        return await self.app[SESSION].start(request)

    async def state(self, job_id: str) -> JobState:
        live = self._live(job_id)
        if live is not None:
            return live
        starting = self.app[SESSION].active
        if starting is not None and starting.run_id == job_id:
            return JobState(job_id, "starting", None, [])
        run = await asyncio.to_thread(_stored, self.app[STORE], job_id)
        return JobState(job_id, run.status, run, [])

    async def wait(self, job_id: str, timeout: float) -> JobState:
        """The job once it has ended or asks a prompt, or as it is after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            state = await self.state(job_id)
            if state.status in ENDED or state.prompts or time.monotonic() >= deadline:
                return state
            await asyncio.sleep(POLL_SECONDS)

    def stop(self, job_id: str) -> None:
        session = self.app[SESSION]
        if session.active is None or session.active.run_id != job_id:
            raise ServerError(409, "no_run", f"job {job_id!r} is not running; nothing to stop")
        session.stop()

    def answer(self, prompt_id: str, answer: Any) -> None:
        self.app[SESSION].answer(prompt_id, answer)

    def _live(self, job_id: str) -> JobState | None:
        hub = self.app[HUB]
        hub.flush()
        views = [hub.view, *hub.last.values()]
        for view in views:
            if view.run is not None and view.run.started.run_id == job_id:
                snapshot = view.snapshot()
                assert snapshot is not None
                prompts = [q for q in view.prompts.values() if q.run_id == job_id]
                return JobState(job_id, snapshot.status, snapshot, prompts)
        return None


def _stored(store: Store, job_id: str) -> p.RunSnapshot:
    reading = store.reading(2.0)
    try:
        record = reading.get_run(job_id)
    except KeyError:
        raise not_found(f"no job {job_id!r}; run_workflow starts one") from None
    return run_snapshot(record, saved_nodes(reading, record.id))
