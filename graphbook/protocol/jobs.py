"""The job queue on the wire: a job (a run waiting its turn, its request a RunRequest as
`POST /api/jobs` takes it), the queue as `GET /api/jobs` and the `jobs` message send it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from graphbook.run_request import RunRequest

JobState = Literal[
    "queued", "running", "completed", "failed", "stopped", "cancelled", "interrupted"
]
"""`queued` waits its turn; `running` has a run; the rest have ended: its run `completed`,
`failed` or was `stopped`, it was `cancelled` before it ran, or the server ended while it ran
(`interrupted`)."""
JOB_ENDED: frozenset[str] = frozenset(
    {"completed", "failed", "stopped", "cancelled", "interrupted"}
)


@dataclass(frozen=True)
class Job:
    """One job of the queue. `position` is its place among the queued jobs (0 runs next; null
    once it left the queue); `run_id` the run it became (the last one, when retried)."""

    id: str
    state: JobState
    request: RunRequest
    """What it runs, as `POST /api/jobs` took it (the stored jobs of earlier versions read
    as one too)."""
    created: float
    """Unix time it was queued."""
    position: int | None = None
    run_id: str | None = None
    started: float | None = None
    ended: float | None = None
    error: str | None = None
    """Why it failed, was stopped or interrupted, or could not start (its workflow invalid)."""
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """The run's counts per node, once it ended."""
    errors: int = 0
    """Errors its run reported."""
    attempts: int = 0
    """Runs started for it (more than one when an interrupted job was retried)."""
    inline: bool = False
    """It runs an inline `graph` (the editor's unsaved edits). Lists of jobs (`GET /api/jobs`,
    the `jobs` message) leave the graph out of `request`; `GET /api/jobs/{id}` has it."""


@dataclass(frozen=True)
class JobList:
    """The queue: `queued` in the order they run, the `running` job, and the most recently
    ended jobs (newest first, at most a bounded number)."""

    queued: list[Job]
    running: Job | None
    finished: list[Job]


@dataclass(frozen=True)
class JobWait:
    """`GET /api/jobs/{id}?wait=SECONDS`: the job, and whether it `ended` before the time was up."""

    job: Job
    ended: bool


@dataclass(frozen=True)
class Jobs:
    """The queue, sent on connect and whenever it changes (a job added, moved, started, ended)."""

    queued: list[Job]
    running: Job | None
    finished: list[Job]
    type: Literal["jobs"] = "jobs"
