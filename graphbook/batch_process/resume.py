"""Which run a command continues, and what this attempt of it does.

A batch run is identified by its name (`run_name=`, else $GRAPHBOOK_BATCH_RUN_NAME, else
`<script or module>:<processor class>`). Rank 0 looks up the latest batch run with that name in
the store: if it did not complete, this attempt resumes it from its latest checkpoint, provided
the batch size and the dataset (its identity) are the same; otherwise, or with
`start_over=True` ($GRAPHBOOK_BATCH_START_OVER=1), a new run starts. The number of ranks may
differ between attempts. While an attempt runs, rank 0 holds a lock on the name, so two
commands cannot process the same run at once (graphbook/durable/lock.py).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

from graphbook.batch_process.checkpoint import Progress, latest, load_reducers
from graphbook.batch_process.dataset import DatasetInfo
from graphbook.batch_process.errors import ResumeError
from graphbook.batch_process.job import START_OVER_ENV, Job
from graphbook.batch_process.reducers import ReducerState
from graphbook.batch_process.sharding import batch_count
from graphbook.durable.folders import RunFolders, recover
from graphbook.durable.identity import data_changes
from graphbook.store import RESUMABLE, RunRecord, Store

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plan:
    """What rank 0 decided for this attempt; every rank receives it."""

    run_id: str
    attempt: str
    home: Path
    start: int
    """Global batches committed by earlier attempts."""
    total: int | None
    """Global batches the run ends at (None: when the iterable dataset runs out)."""
    sequence: int
    """Number of the next checkpoint."""
    dataset: DatasetInfo
    reducers: ReducerState | None
    resumed: bool

    @property
    def folders(self) -> RunFolders:
        return RunFolders.of(self.home, "batch", self.run_id)


def plan_attempt(store: Store, job: Job, dataset: DatasetInfo, world_size: int) -> Plan:
    """Find or start the run and plan this attempt (rank 0, holding the name's lock)."""
    total = _total(job, dataset, world_size)
    home = store.path.parent.resolve()
    previous = store.latest_run("batch", job.run_name)
    if previous is not None and previous.status in RESUMABLE:
        if not job.start_over:
            return _resume(store, previous, job, dataset, total)
        logger.info("starting run %r over: abandoning run %s", job.run_name, previous.id)
        store.set_status(previous.id, "abandoned")
    config = {**job.config(), "dataset": dataset.to_json(), "world_size": world_size}
    run_id = store.start_run("batch", job.run_name, config)
    logger.info("started batch run %s (%r)", run_id, job.run_name)
    return Plan(run_id, _attempt(), home, 0, total, 0, dataset, None, False)


def _resume(
    store: Store, run: RunRecord, job: Job, dataset: DatasetInfo, total: int | None
) -> Plan:
    check_compatible(run, job, dataset)
    home = store.path.parent.resolve()
    folders = RunFolders.of(home, "batch", run.id)
    recover(store, folders, run.id)
    record = latest(store, run.id)
    start, sequence, reducers = 0, 0, None
    if record is not None:
        progress = Progress.from_json(record.metadata)
        start, sequence = progress.batches_completed, progress.sequence + 1
        folder = folders.checkpoint(record.uuid)
        if not folder.is_dir():
            raise ResumeError(
                f"cannot resume batch run {run.id} ({run.name!r}): its latest checkpoint's "
                f"folder {folder} is gone; start over with start_over=True "
                f"(or {START_OVER_ENV}=1)"
            )
        reducers = load_reducers(folder)
    store.set_status(run.id, "running")
    logger.info("resuming batch run %s (%r) after %d batch(es)", run.id, job.run_name, start)
    return Plan(run.id, _attempt(), home, start, total, sequence, dataset, reducers, True)


def check_compatible(run: RunRecord, job: Job, dataset: DatasetInfo) -> None:
    """Refuse to resume `run` with another batch size or dataset: its committed progress counts
    batches of that size over that data."""
    config = run.config
    changes = []
    if config["batch_size"] != job.batch_size:
        changes.append(f"batch_size was {config['batch_size']}, now {job.batch_size}")
    was = config["dataset"]
    identity = was.get("identity") or was  # a record without one: its type and length
    assert dataset.identity is not None
    changes.extend(data_changes("the dataset", identity, dataset.identity))
    if changes:
        raise ResumeError(
            f"cannot resume batch run {run.id} ({run.name!r}): " + "; ".join(changes) + ". "
            "Run it with the same batch size and data to resume it, or start over with "
            f"start_over=True (or {START_OVER_ENV}=1), or give this job another run_name."
        )


def _total(job: Job, dataset: DatasetInfo, world_size: int) -> int | None:
    cap = None if job.max_batches is None else job.max_batches * world_size
    if dataset.length is None:
        return cap
    count = batch_count(dataset.length, job.batch_size, job.drop_last)
    return count if cap is None else min(count, cap)


def _attempt() -> str:
    return uuid.uuid4().hex[:12]
