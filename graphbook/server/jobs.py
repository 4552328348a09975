"""JobQueue: runs waiting their turn, started one after another as the run manager becomes free,
kept in the run store so that a killed server loses none of them.

Everything here runs on the event loop; the store is written by the run manager's `Recorder` (its
own thread, in order with the runs' records: a busy store delays a write, loses nothing; a
failing one is told to clients as for runs) and read in threads. A job's record is
written before `submit` returns, so a job the client was told about survives `kill -9`. A job
becomes a run through `RunManager.start`; the run manager's `on_finished` hook ends it and
starts the next. On start, the job that was running when the server ended is `interrupted`
(or, when its request says `retry_interrupted`, put back at the head of the queue).

The queue is the Python API the HTTP routes (graphbook/server/routes/jobs.py), the websocket and
other front ends share: `submit`, `get`, `find`, `listing`, `cancel`, `move`, `stop`, `wait`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import sqlite3
import time
import uuid
from collections import deque
from collections.abc import Coroutine
from typing import Literal, get_args

from graphbook import protocol as p
from graphbook.events import RunFinished
from graphbook.server.errors import ServerError, conflict, not_found
from graphbook.server.hub import Hub
from graphbook.server.runmanager import RunManager
from graphbook.store import JobRecord, Store, StoreBusy, StoreUnavailable, is_busy

logger = logging.getLogger(__name__)
MAX_WAIT = 300.0
"""The longest `wait` (seconds): a client wanting longer asks again."""
MAX_QUEUED = 1000
"""Jobs that may wait at once; one more is refused (each change sends the whole queue)."""
RECENT = 50
"""Ended jobs kept in memory and listed, newest first; older ones are read from the store."""
READ_TIMEOUT = 2.0
"""Seconds a call a person waits on (a job read, a job added: 503 after) waits for a lock on
the store."""
Move = Literal["up", "down", "top", "bottom"] | int
"""Where `move` puts a queued job: one place up or down, first, last, or at an index."""


class JobQueue:
    """The server's queue of jobs. Build it with the run manager it starts runs on, call `open`
    (on the loop) once the run manager is open, and `close` as the server stops."""

    def __init__(self, runs: RunManager, store: Store, hub: Hub) -> None:
        self.runs = runs
        self.store = store
        self.hub = hub
        self.recorder = runs.recorder
        self._jobs: dict[str, p.Job] = {}
        self._queued: list[str] = []
        self._running: str | None = None
        self._ended: deque[str] = deque()
        self._waiters: dict[str, asyncio.Event] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._next_rank = 0
        self._open = False
        runs.on_finished.append(self._run_finished)

    # -- the Python API ----------------------------------------------------------------------
    async def submit(self, request: p.RunRequest) -> p.Job:
        """Add a job at the end of the queue; it is in the store when this returns. Raises
        ServerError: a workflow path that is not one (400), a file that does not exist (404),
        a full queue (409), a store that cannot be written (503)."""
        if len(self._queued) >= MAX_QUEUED:
            raise conflict(f"the queue holds {MAX_QUEUED} jobs already; wait for some to run")
        name = self.runs.files.name(request.workflow)
        request = dataclasses.replace(request, workflow=name)
        job = p.Job(uuid.uuid4().hex[:12], "queued", request, time.time())
        job = dataclasses.replace(job, inline=request.graph is not None)
        rank, self._next_rank = self._next_rank, self._next_rank + 1
        await asyncio.to_thread(self._add, job, rank)
        self._jobs[job.id] = job
        self._queued.append(job.id)
        self._save_order()  # another job added meanwhile may have been written first
        self._changed()
        return self.get(job.id)

    def get(self, job_id: str) -> p.Job:
        """A job this server holds (queued, running or recently ended); 404 otherwise."""
        job = self._jobs.get(job_id)
        if job is None:
            raise not_found(f"no job {job_id!r} waiting or ended lately; GET /api/jobs lists them")
        position = self._queued.index(job_id) if job_id in self._queued else None
        return dataclasses.replace(job, position=position)

    async def find(self, job_id: str) -> p.Job:
        """Any job, however long ago it ended (read from the store); 404 if there is none."""
        if job_id in self._jobs:
            return self.get(job_id)
        try:
            record = await asyncio.to_thread(self.store.reading(READ_TIMEOUT).get_job, job_id)
        except KeyError:
            raise not_found(f"no job {job_id!r}; GET /api/jobs lists them") from None
        except (StoreBusy, sqlite3.Error, ValueError) as exc:
            raise _store_failed(self.store, exc) from None
        return _from_record(record)

    async def app_jobs(self, workflow: str, limit: int) -> list[p.Job]:
        """The jobs the app of `workflow` asked for, newest first (read from the store; those
        this server holds as they are now)."""
        try:
            reader = self.store.reading(READ_TIMEOUT)
            records = await asyncio.to_thread(reader.app_jobs, workflow, limit)
        except (StoreBusy, sqlite3.Error, ValueError) as exc:
            raise _store_failed(self.store, exc) from None
        return [self.get(r.id) if r.id in self._jobs else _from_record(r) for r in records]

    def listing(self) -> p.JobList:
        """The queued jobs in order, the running one, and the recently ended ones (an inline
        graph left out of each: `get` has it)."""
        jobs = self._jobs
        queued = [_brief(jobs[i], n) for n, i in enumerate(self._queued)]
        running = _brief(jobs[self._running]) if self._running is not None else None
        return p.JobList(queued, running, [_brief(jobs[i]) for i in self._ended])

    def message(self) -> p.Jobs:
        listing = self.listing()
        return p.Jobs(listing.queued, listing.running, listing.finished)

    def cancel(self, job_id: str) -> p.Job:
        """Take a queued job out of the queue (`cancelled`); 409 for one that is not queued."""
        self._require_queued(job_id, "cancel")
        self._queued.remove(job_id)
        self._end(job_id, state="cancelled", error="cancelled before it ran")
        self._save_order()
        self._changed()
        return self.get(job_id)

    def move(self, job_id: str, to: Move) -> p.Job:
        """Put a queued job elsewhere in the queue: "up", "down", "top", "bottom" or an index
        (0 runs next; past the end means last)."""
        self._require_queued(job_id, "move")
        old = self._queued.index(job_id)
        new = _place(to, old, len(self._queued))
        self._queued.insert(new, self._queued.pop(old))
        self._save_order()
        self._changed()
        return self.get(job_id)

    def stop(self, job_id: str) -> p.Job:
        """Stop the running job's run (as Stop does); 409 for a job that is not running."""
        job = self.get(job_id)
        active = self.runs.active
        if job.state != "running" or job.run_id is None or active is None:
            raise conflict(f"job {job_id} is {_words(job)}; only the running job can be stopped")
        if active.run_id == job.run_id:
            self.runs.stop()
        return self.get(job_id)

    async def wait(self, job_id: str, timeout: float) -> p.JobWait:
        """The job once it has ended, or as it is after `timeout` seconds (at most MAX_WAIT)."""
        job = await self.find(job_id)
        if job.state in p.JOB_ENDED:
            return p.JobWait(job, True)
        event = self._waiters.setdefault(job_id, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), max(0.0, min(timeout, MAX_WAIT)))
        job = await self.find(job_id)
        return p.JobWait(job, job.state in p.JOB_ENDED)

    # -- opening and closing -----------------------------------------------------------------
    async def open(self) -> None:
        """Read the queue back from the store, end (or requeue) the job that was running when
        the server last ended, and start the first job."""
        waiting, ended = await asyncio.to_thread(_read_queue, self.store)
        for record in reversed(ended):
            self._jobs[record.id] = _from_record(record)
            self._ended.appendleft(record.id)
        retried = []
        for record in waiting:
            job = _from_record(record)
            self._jobs[job.id] = job
            if job.state == "running":
                retried += self._recover(job)
            else:
                self._queued.append(job.id)
        self._queued[:0] = retried
        self._next_rank = len(self._queued) + max((r.rank for r in waiting), default=0) + 1
        self._save_order()
        self._open = True
        self._changed()

    async def close(self) -> None:
        """Start no more jobs; the running one is `interrupted` for the next server to see
        (its run is stopped with the run manager)."""
        self._open = False
        for task in list(self._tasks):
            task.cancel()  # the run manager's recorder writes what is waiting as it closes

    # -- running the queue -------------------------------------------------------------------
    def _pump(self) -> None:
        """Start the first queued job when nothing runs (a run started by hand runs first:
        the queue goes on when it ends)."""
        busy = self.runs.active is not None or self.runs.starting is not None
        if not self._open or busy or self._running is not None or not self._queued:
            return
        job_id = self._queued.pop(0)
        self._running = job_id
        self._jobs[job_id] = dataclasses.replace(self._jobs[job_id], state="running")
        self._spawn(self._start(job_id))

    async def _start(self, job_id: str) -> None:
        job = self._jobs[job_id]
        try:
            run_id = await self.runs.start(job.request)
        except ServerError as exc:
            self._running = None
            if exc.code == "run_active" or not self._open:  # a run by hand got there first
                self._jobs[job_id] = job
                self._queued.insert(0, job_id)
            else:
                self._end(job_id, state="failed", error=_could_not_start(exc))
            self._save_order()
            self._changed()
            return
        started = dataclasses.replace(
            job, state="running", run_id=run_id, started=time.time(), attempts=job.attempts + 1
        )
        self._jobs[job_id] = started
        self._save(started)
        self._save_order()
        self._changed()

    def _run_finished(self, end: RunFinished) -> None:
        """The run manager's hook: the running job's run ended (or a run started by hand did)."""
        job_id = self._running
        job = self._jobs.get(job_id) if job_id is not None else None
        if not self._open:
            return
        if job is None or job.run_id != end.run_id:
            self._pump()
            return
        self._spawn(self._finish(job, end))

    async def _finish(self, job: p.Job, end: RunFinished) -> None:
        error = await asyncio.to_thread(_run_error, self.store, end.run_id)
        self._running = None
        self._end(job.id, state=end.status, error=error, counts=end.counts, errors=end.errors)
        self._changed()

    def _recover(self, job: p.Job) -> list[str]:
        """The job that was running when the server ended: interrupted, or queued again."""
        what = f"the server ended while it ran (run {job.run_id})"
        if job.request.retry_interrupted:
            self._jobs[job.id] = dataclasses.replace(job, state="queued", error=f"{what}; retried")
            self._save(self._jobs[job.id])
            return [job.id]
        self._end(job.id, state="interrupted", error=what)
        return []

    # -- state, kept and told ----------------------------------------------------------------
    def _end(
        self,
        job_id: str,
        *,
        state: p.JobState,
        error: str | None,
        counts: dict[str, dict[str, int]] | None = None,
        errors: int = 0,
    ) -> None:
        job = dataclasses.replace(
            self._jobs[job_id],
            state=state,
            ended=time.time(),
            error=error,
            counts=counts or {},
            errors=errors,
        )
        self._jobs[job_id] = job
        self._save(job)
        self._ended.appendleft(job_id)
        while len(self._ended) > RECENT:
            self._jobs.pop(self._ended.pop(), None)
        waiter = self._waiters.pop(job_id, None)
        if waiter is not None:
            waiter.set()

    def _changed(self) -> None:
        """Tell every client, and start the next job if nothing runs."""
        self._pump()
        self.hub.publish(self.message())

    def _add(self, job: p.Job, rank: int) -> None:
        """Write a new job (in a thread); a store that cannot take it refuses the job."""
        request = job.request
        if request.graph is None and not self.runs.files.path(request.workflow).is_file():
            raise not_found(f"no workflow file {request.workflow}; GET /api/workflows lists them")
        try:
            self.store.waiting(READ_TIMEOUT).save_job(_record(job, rank))
        except (sqlite3.Error, StoreBusy) as exc:
            raise _store_failed(self.store, exc) from None

    def _save(self, job: p.Job) -> None:
        record = _record(job, 0)
        self.recorder.submit(lambda store: store.save_job(record))

    def _save_order(self) -> None:
        order = list(self._queued)
        self.recorder.submit(lambda store: store.order_jobs(order))

    def _require_queued(self, job_id: str, verb: str) -> None:
        job = self.get(job_id)
        if job.state != "queued":
            hint = " (POST /api/jobs/{id}/stop stops it)" if job.state == "running" else ""
            raise conflict(f"job {job_id} is {_words(job)}, not queued: cannot {verb} it{hint}")

    def _spawn(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("the job queue failed", exc_info=task.exception())


def _read_queue(store: Store) -> tuple[list[JobRecord], list[JobRecord]]:
    return store.waiting_jobs(), store.ended_jobs(RECENT)


def _run_error(store: Store, run_id: str) -> str | None:
    """The error the run's record holds (its first error, or why it was stopped)."""
    try:
        return store.reading(READ_TIMEOUT).get_run(run_id).error
    except (KeyError, StoreBusy, sqlite3.Error, ValueError):
        return None


def _brief(job: p.Job, position: int | None = None) -> p.Job:
    """The job as lists show it: without its inline graph (a large workflow, sent on every
    change to every client)."""
    request = job.request
    if request.graph is not None:
        request = dataclasses.replace(request, graph=None)
    return dataclasses.replace(job, request=request, position=position)


def _place(to: Move, old: int, size: int) -> int:
    if isinstance(to, int):
        return max(0, min(to, size - 1))
    return {"up": max(0, old - 1), "down": min(size - 1, old + 1), "top": 0}.get(to, size - 1)


def _words(job: p.Job) -> str:
    return "starting" if job.state == "running" and job.run_id is None else job.state


def _could_not_start(exc: ServerError) -> str:
    return f"could not start: {exc.message}"  # the message lists the workflow's problems


def _store_failed(store: Store, exc: BaseException) -> ServerError:
    if is_busy(exc):
        exc = StoreBusy(store.path, READ_TIMEOUT)
    text = str(exc) if isinstance(exc, StoreBusy) else str(StoreUnavailable(store.path, exc))
    return ServerError(503, "store_failed", text)


def _record(job: p.Job, rank: int) -> JobRecord:
    request = p.to_json(job.request)
    return JobRecord(
        job.id,
        job.state,
        request,
        job.created,
        rank,
        job.run_id,
        job.started,
        job.ended,
        job.error,
        job.counts,
        job.errors,
        job.attempts,
    )


def _from_record(record: JobRecord) -> p.Job:
    request = p.from_json(p.RunRequest, record.request, "job.request")
    state = record.state if record.state in get_args(p.JobState) else "failed"
    return p.Job(
        record.id,
        state,  # type: ignore[arg-type]
        request,
        record.created,
        None,
        record.run_id,
        record.started,
        record.ended,
        record.error,
        record.counts,
        record.errors,
        record.attempts,
        request.graph is not None,
    )
