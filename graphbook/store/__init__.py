"""The local run store (SQLite): runs of workflows and batch jobs, metrics, checkpoints and
model versions. One file under the data directory; safe to use from several threads and
processes (WAL mode, one short transaction per call).

One package, a module a table (runs.py, jobs.py, metrics.py, checkpoints.py: model versions
and run links with them) over the file itself (database.py); Store is all of them at once.
"""

from __future__ import annotations

from pathlib import Path

from graphbook.store.checkpoints import CheckpointCommit as CheckpointCommit
from graphbook.store.checkpoints import CheckpointRecord as CheckpointRecord
from graphbook.store.checkpoints import CheckpointTable
from graphbook.store.checkpoints import LinkRecord as LinkRecord
from graphbook.store.checkpoints import ModelVersionRecord as ModelVersionRecord
from graphbook.store.database import DEFAULT_HOME as DEFAULT_HOME
from graphbook.store.database import MOVE_FLAG as MOVE_FLAG
from graphbook.store.database import WRITE_TIMEOUT as WRITE_TIMEOUT
from graphbook.store.database import StoreBusy as StoreBusy
from graphbook.store.database import StoreDamaged, move_aside
from graphbook.store.database import StoreUnavailable as StoreUnavailable
from graphbook.store.database import StoreUnwritable as StoreUnwritable
from graphbook.store.database import data_home as data_home
from graphbook.store.database import is_busy as is_busy
from graphbook.store.jobs import JOB_WAITING as JOB_WAITING
from graphbook.store.jobs import JobRecord as JobRecord
from graphbook.store.jobs import JobTable
from graphbook.store.metrics import MetricRecord as MetricRecord
from graphbook.store.runs import RESUMABLE as RESUMABLE
from graphbook.store.runs import RunKind as RunKind
from graphbook.store.runs import RunRecord as RunRecord
from graphbook.store.runs import RunTable


class Store(RunTable, JobTable, CheckpointTable):
    """Runs, jobs, metrics, checkpoints and model versions in one SQLite file."""


def open_store(path: Path, *, move_damaged: bool = False) -> tuple[Store, Path | None]:
    """The store at `path`, checked page by page; a damaged one raises StoreDamaged, or with
    `move_damaged` is moved aside (returned second) and a new one started."""
    try:
        store = Store(path)
        store.check()
        return store, None
    except StoreDamaged:
        if not move_damaged:
            raise
    moved = move_aside(path)
    return Store(path), moved
