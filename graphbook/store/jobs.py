"""The jobs table: the server's job queue, kept so that a killed server loses none."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field
from typing import Any

from graphbook.store.database import Database, dump, optional

JOB_WAITING = ("queued", "running")
"""Job states that are not over: a store read at start holds the queue in these."""


@dataclass(frozen=True)
class JobRecord:
    """One job of the server's queue as stored: `request` is what it runs (JSON), `rank` its
    order among the queued jobs (lowest first)."""

    id: str
    state: str
    request: dict[str, Any]
    created: float
    rank: int = 0
    run_id: str | None = None
    started: float | None = None
    ended: float | None = None
    error: str | None = None
    counts: dict[str, Any] = field(default_factory=dict)
    errors: int = 0
    attempts: int = 0


class JobTable(Database):
    """Jobs: written whole, ordered, read back waiting or ended."""

    def save_job(self, job: JobRecord) -> None:
        """Write the job whole (added, or its new state); replaces what was stored before."""
        row = astuple(job)
        values = (*row[:2], dump(job.request), *row[3:8], optional(job.error))
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO jobs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, dump(job.counts), job.errors, job.attempts),
            )

    def order_jobs(self, ids: Sequence[str]) -> None:
        """Rank the jobs `ids` in this order (0, 1, ...), in one transaction."""
        with self._connect() as db:
            db.executemany("UPDATE jobs SET rank=? WHERE id=?", list(enumerate(ids)))

    def waiting_jobs(self) -> list[JobRecord]:
        """The jobs not over (queued or running), in their order."""
        with self._read() as db:
            rows = db.execute(
                "SELECT * FROM jobs WHERE state IN (?,?) ORDER BY rank, created", JOB_WAITING
            ).fetchall()
        return [_job(r) for r in rows]

    def ended_jobs(self, limit: int) -> list[JobRecord]:
        """The `limit` jobs that ended last, newest first."""
        with self._read() as db:
            rows = db.execute(
                "SELECT * FROM jobs WHERE state NOT IN (?,?) ORDER BY ended DESC, created DESC "
                "LIMIT ?",
                (*JOB_WAITING, limit),
            ).fetchall()
        return [_job(r) for r in rows]

    def app_jobs(self, workflow: str, limit: int) -> list[JobRecord]:
        """The jobs the app of `workflow` asked for (their request's `app`), newest first."""
        with self._read() as db:
            rows = db.execute(
                "SELECT * FROM jobs WHERE json_extract(request, '$.app') = 1 AND "
                "json_extract(request, '$.workflow') = ? ORDER BY created DESC LIMIT ?",
                (workflow, limit),
            ).fetchall()
        return [_job(r) for r in rows]

    def get_job(self, job_id: str) -> JobRecord:
        with self._read() as db:
            row = db.execute("SELECT * FROM jobs WHERE id=?", (job_id,)).fetchone()
        if row is None:
            raise KeyError(f"no job with id {job_id!r}")
        return _job(row)


def _job(row: tuple[Any, ...]) -> JobRecord:
    request, counts = json.loads(row[2]), json.loads(row[9])
    created, rank, run_id, started, ended, error = row[3:9]
    return JobRecord(
        row[0], row[1], request, created, rank, run_id, started, ended, error, counts, *row[10:]
    )
