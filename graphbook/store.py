"""The local run store (SQLite): runs of workflows and batch jobs, metrics, checkpoints and
model versions. One file under the data directory; safe to use from several threads and
processes (WAL mode, one short transaction per call)."""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import Any, Literal

from graphbook.errors import GraphbookError
from graphbook.text import encodable_json, encodable_text

RunKind = Literal["workflow", "batch", "train", "search"]
DEFAULT_HOME = ".graphbook"
WRITE_TIMEOUT = 30.0
"""Seconds a write waits for another process's lock on the store before it fails."""
MOVE_FLAG = "--move-damaged-store"
"""The `graphbook serve` flag that moves a damaged store aside and starts a new one."""
SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, status TEXT NOT NULL,
    config TEXT NOT NULL DEFAULT '{}', counts TEXT NOT NULL DEFAULT '{}', error TEXT,
    started REAL NOT NULL, ended REAL, paused REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS metrics (
    id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES runs(id),
    grp TEXT NOT NULL, steps_completed INTEGER NOT NULL, metrics TEXT NOT NULL, time REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    uuid TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id), path TEXT NOT NULL,
    steps_completed INTEGER NOT NULL, metadata TEXT NOT NULL DEFAULT '{}', time REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS model_versions (
    model TEXT NOT NULL, version INTEGER NOT NULL,
    checkpoint_uuid TEXT NOT NULL REFERENCES checkpoints(uuid), time REAL NOT NULL,
    PRIMARY KEY (model, version)
);
CREATE TABLE IF NOT EXISTS run_links (
    run_id TEXT NOT NULL REFERENCES runs(id), checkpoint_uuid TEXT, model TEXT, version INTEGER
);
CREATE TABLE IF NOT EXISTS run_nodes (
    run_id TEXT PRIMARY KEY REFERENCES runs(id), nodes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, state TEXT NOT NULL, request TEXT NOT NULL, created REAL NOT NULL,
    rank INTEGER NOT NULL DEFAULT 0, run_id TEXT, started REAL, ended REAL, error TEXT,
    counts TEXT NOT NULL DEFAULT '{}', errors INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run_id, grp);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, rank);
"""
RESUMABLE = ("running", "stopped", "failed")
"""A run in one of these states is continued by the next call with its name (batch_process,
the trainer); a completed one is not."""
JOB_WAITING = ("queued", "running")
"""Job states that are not over: a store read at start holds the queue in these."""


def data_home() -> Path:
    """The data directory: $GRAPHBOOK_HOME, else `.graphbook` in the current directory."""
    return Path(os.environ.get("GRAPHBOOK_HOME", DEFAULT_HOME))


class StoreDamaged(GraphbookError):
    """The run store's file cannot be read as a store: what is wrong, where, and what to do."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(
            f"the run store {path} is damaged: {problem}. Run `graphbook serve {MOVE_FLAG}` "
            f"to move it aside (it is kept next to it as {path.name}.damaged-TIME) and begin a "
            "new, empty history, or restore the file from a backup"
        )


class StoreUnwritable(GraphbookError):
    """The run store's folder or file cannot be written: not damage, and nothing to move."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        super().__init__(
            f"the run store {path} cannot be written: {problem}. The store is not damaged; "
            "give `--data` (or $GRAPHBOOK_HOME) a folder that can be written, or make this "
            "one writable"
        )


class StoreUnavailable(GraphbookError):
    """Reading or writing the store failed while it was in use (damaged, the disk full)."""

    def __init__(self, path: Path, exc: BaseException) -> None:
        self.path = path
        super().__init__(
            f"the run store {path} could not be used ({type(exc).__name__}: {exc}); run history "
            f"is not being recorded. If the file is damaged, restart with `graphbook serve "
            f"{MOVE_FLAG}`; if the disk is full, free some space"
        )


class StoreBusy(GraphbookError):
    """Another process held the store locked for longer than a read may wait."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        super().__init__(
            f"the run store {path} is busy: another process has held it locked for over "
            f"{timeout:g} s (a training run, a search, a batch job or an sqlite3 shell using "
            "the same --data folder); try again in a moment"
        )


def is_busy(exc: BaseException) -> bool:
    """Whether SQLite gave up waiting for another connection's lock."""
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


@dataclass(frozen=True)
class RunRecord:
    id: str
    kind: str
    name: str
    status: str
    config: dict[str, Any]
    counts: dict[str, Any]
    error: str | None
    started: float
    ended: float | None
    paused: float = 0.0
    """Seconds the run spent paused (an interactive run paused or stepped in the editor)."""


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


@dataclass(frozen=True)
class MetricRecord:
    run_id: str
    group: str
    steps_completed: int
    metrics: dict[str, Any]
    time: float


@dataclass(frozen=True)
class CheckpointRecord:
    uuid: str
    run_id: str
    path: str
    steps_completed: int
    metadata: dict[str, Any]
    time: float


class Store:
    """Runs, metrics, checkpoints and model versions in one SQLite file."""

    def __init__(self, path: Path | str | None = None) -> None:
        """Open (or create) the store at `path`; raises StoreDamaged if it is not a store."""
        self.path = Path(path) if path is not None else data_home() / "graphbook.sqlite"
        _check_writable(self.path)
        self._lock = threading.Lock()
        self.timeout = WRITE_TIMEOUT
        """Seconds a call waits for a lock another process holds on the file."""
        if not self.path.exists():
            _create(self.path)
        elif self.path.stat().st_size == 0:
            raise StoreDamaged(self.path, "it is empty (0 bytes): the history it held is gone")
        try:
            with self._connect() as db:
                _check_ours(db, self.path)
                db.executescript(SCHEMA)
                _add_columns(db)
        except sqlite3.DatabaseError as exc:
            raise StoreDamaged(self.path, f"SQLite says {str(exc)!r}") from None

    def check(self) -> None:
        """Read every page (`PRAGMA quick_check`); raises StoreDamaged if any is damaged."""
        try:
            with self._connect() as db:
                rows = db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreDamaged(self.path, f"SQLite says {str(exc)!r}") from None
        problems = [str(row[0]) for row in rows if row[0] != "ok"]
        if problems:
            raise StoreDamaged(self.path, f"SQLite's check found {problems[0]!r}")

    def reading(self, timeout: float) -> Store:
        """This store for reads that wait at most `timeout` seconds for a lock another process
        holds (a store not in WAL mode, locked by a writer), then raise `StoreBusy`."""
        reader = copy.copy(self)
        reader.timeout = timeout
        return reader

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A write: one at a time in this process, waiting up to `timeout` seconds for another
        process's write lock."""
        with self._lock, self._open() as db:
            yield db

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read: in WAL mode it never waits for writers, in this process or another."""
        try:
            with self._open() as db:
                yield db
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise StoreBusy(self.path, self.timeout) from exc
            raise

    @contextmanager
    def _open(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=self.timeout)
        db.text_factory = _text
        try:
            with db:
                yield db
        finally:
            db.close()

    # -- runs --------------------------------------------------------------------------------
    def start_run(
        self, kind: RunKind, name: str, config: dict[str, Any] | None = None, run_id: str = ""
    ) -> str:
        run_id = run_id or uuid.uuid4().hex[:12]
        with self._connect() as db:
            db.execute(
                "INSERT INTO runs (id, kind, name, status, config, started) VALUES (?,?,?,?,?,?)",
                (run_id, kind, encodable_text(name), "running", _dump(config or {}), time.time()),
            )
        return run_id

    def finish_run(
        self,
        run_id: str,
        status: str,
        counts: dict[str, Any] | None = None,
        error: str | None = None,
        paused: float = 0.0,
    ) -> None:
        with self._connect() as db:
            db.execute(
                "UPDATE runs SET status=?, counts=?, error=?, ended=?, paused=? WHERE id=?",
                (status, _dump(counts or {}), _optional(error), time.time(), paused, run_id),
            )

    def set_status(self, run_id: str, status: str) -> None:
        with self._connect() as db:
            db.execute("UPDATE runs SET status=? WHERE id=?", (status, run_id))

    def get_run(self, run_id: str) -> RunRecord:
        with self._read() as db:
            row = db.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(f"no run with id {run_id!r}")
        return _run(row)

    def list_runs(self, kind: str | None = None, limit: int = 100) -> list[RunRecord]:
        query, args = "SELECT * FROM runs", tuple[str, ...]()
        if kind is not None:
            query, args = query + " WHERE kind=?", (kind,)
        with self._read() as db:
            rows = db.execute(query + " ORDER BY started DESC LIMIT ?", (*args, limit)).fetchall()
        return [_run(r) for r in rows]

    def save_run_nodes(self, run_id: str, nodes: list[dict[str, Any]]) -> None:
        """What each node of a workflow run did, as the run ended (the server's view of it:
        state, counts, seconds, last logs and errors); replaces what was saved before."""
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO run_nodes (run_id, nodes) VALUES (?,?)",
                (run_id, _dump(nodes)),
            )

    def run_nodes(self, run_id: str) -> list[dict[str, Any]] | None:
        """The nodes saved with `save_run_nodes`, or None if none were."""
        with self._read() as db:
            row = db.execute("SELECT nodes FROM run_nodes WHERE run_id=?", (run_id,)).fetchone()
        return None if row is None else list(json.loads(row[0]))

    # -- jobs --------------------------------------------------------------------------------
    def save_job(self, job: JobRecord) -> None:
        """Write the job whole (added, or its new state); replaces what was stored before."""
        row = astuple(job)
        values = (*row[:2], _dump(job.request), *row[3:8], _optional(job.error))
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO jobs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, _dump(job.counts), job.errors, job.attempts),
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

    def get_job(self, job_id: str) -> JobRecord:
        with self._read() as db:
            row = db.execute("SELECT * FROM jobs WHERE id=?", (job_id,)).fetchone()
        if row is None:
            raise KeyError(f"no job with id {job_id!r}")
        return _job(row)

    # -- metrics -----------------------------------------------------------------------------
    def report_metrics(
        self, run_id: str, group: str, steps_completed: int, metrics: dict[str, Any]
    ) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO metrics (run_id, grp, steps_completed, metrics, time) "
                "VALUES (?,?,?,?,?)",
                (run_id, group, steps_completed, _dump(metrics), time.time()),
            )

    def report_metric_rows(
        self, run_id: str, rows: Sequence[tuple[str, int, dict[str, Any]]]
    ) -> None:
        """Several `(group, steps_completed, metrics)` rows in one transaction, in order."""
        now = time.time()
        with self._connect() as db:
            db.executemany(
                "INSERT INTO metrics (run_id, grp, steps_completed, metrics, time) "
                "VALUES (?,?,?,?,?)",
                [(run_id, g, s, _dump(m), now) for g, s, m in rows],
            )

    def metrics(self, run_ids: list[str], group: str | None = None) -> list[MetricRecord]:
        if not run_ids:
            return []
        marks = ",".join("?" * len(run_ids))
        columns = "run_id, grp, steps_completed, metrics, time"
        query = f"SELECT {columns} FROM metrics WHERE run_id IN ({marks})"
        args: tuple[Any, ...] = tuple(run_ids)
        if group is not None:
            query, args = query + " AND grp=?", (*args, group)
        with self._read() as db:
            rows = db.execute(query + " ORDER BY id", args).fetchall()
        return [MetricRecord(r[0], r[1], r[2], json.loads(r[3]), r[4]) for r in rows]

    def metric_counts(self, run_ids: list[str]) -> dict[str, int]:
        """Metric rows per run, for the runs that have any."""
        if not run_ids:
            return {}
        marks = ",".join("?" * len(run_ids))
        query = f"SELECT run_id, COUNT(*) FROM metrics WHERE run_id IN ({marks}) GROUP BY run_id"
        with self._read() as db:
            return {str(r[0]): int(r[1]) for r in db.execute(query, tuple(run_ids)).fetchall()}

    def truncate_metrics(self, run_id: str, keep: int) -> int:
        """Keep the first `keep` metric rows of a run (in the order reported), delete the rest
        (a resumed run reports those again); returns how many were deleted."""
        with self._connect() as db:
            cursor = db.execute(
                "DELETE FROM metrics WHERE run_id=? AND id NOT IN "
                "(SELECT id FROM metrics WHERE run_id=? ORDER BY id LIMIT ?)",
                (run_id, run_id, keep),
            )
            return int(cursor.rowcount)

    # -- checkpoints and models ----------------------------------------------------------------
    def add_checkpoint(
        self,
        run_id: str,
        path: str,
        steps_completed: int,
        metadata: dict[str, Any] | None = None,
        checkpoint_uuid: str = "",
    ) -> str:
        checkpoint_uuid = checkpoint_uuid or str(uuid.uuid4())
        with self._connect() as db:
            db.execute(
                "INSERT INTO checkpoints VALUES (?,?,?,?,?,?)",
                (
                    checkpoint_uuid,
                    run_id,
                    path,
                    steps_completed,
                    _dump(metadata or {}),
                    time.time(),
                ),
            )
        return checkpoint_uuid

    def get_checkpoint(self, checkpoint_uuid: str) -> CheckpointRecord:
        with self._read() as db:
            row = db.execute(
                "SELECT * FROM checkpoints WHERE uuid=?", (checkpoint_uuid,)
            ).fetchone()
        if row is None:
            raise KeyError(f"no checkpoint with uuid {checkpoint_uuid!r}")
        return _checkpoint(row)

    def checkpoints(self, run_id: str) -> list[CheckpointRecord]:
        with self._read() as db:
            rows = db.execute(
                "SELECT * FROM checkpoints WHERE run_id=? ORDER BY time", (run_id,)
            ).fetchall()
        return [_checkpoint(r) for r in rows]

    def delete_checkpoint(self, checkpoint_uuid: str) -> None:
        """Forget a checkpoint (its folder is the caller's to remove)."""
        with self._connect() as db:
            db.execute("DELETE FROM checkpoints WHERE uuid=?", (checkpoint_uuid,))

    def register_model_version(self, model: str, checkpoint_uuid: str) -> int:
        """Add `checkpoint_uuid` as the next version of `model`; returns the version number."""
        with self._connect() as db:
            row = db.execute("SELECT MAX(version) FROM model_versions WHERE model=?", (model,))
            version = int(row.fetchone()[0] or 0) + 1
            db.execute(
                "INSERT INTO model_versions VALUES (?,?,?,?)",
                (model, version, checkpoint_uuid, time.time()),
            )
        return version

    def registered_checkpoints(self) -> set[str]:
        """The checkpoints some model version refers to."""
        with self._read() as db:
            rows = db.execute("SELECT DISTINCT checkpoint_uuid FROM model_versions").fetchall()
        return {str(r[0]) for r in rows}

    def model_version_checkpoint(self, model: str, version: int) -> str:
        with self._read() as db:
            row = db.execute(
                "SELECT checkpoint_uuid FROM model_versions WHERE model=? AND version=?",
                (model, version),
            ).fetchone()
        if row is None:
            raise KeyError(f"model {model!r} has no version {version}")
        return str(row[0])

    def link_run(
        self,
        run_id: str,
        checkpoint_uuid: str | None = None,
        model: str | None = None,
        version: int | None = None,
    ) -> None:
        """Record that a run used a checkpoint or a model version (for lineage queries)."""
        with self._connect() as db:
            db.execute(
                "INSERT INTO run_links VALUES (?,?,?,?)", (run_id, checkpoint_uuid, model, version)
            )

    def runs_using(
        self,
        checkpoint_uuid: str | None = None,
        model: str | None = None,
        version: int | None = None,
    ) -> list[str]:
        args: tuple[Any, ...]
        if checkpoint_uuid is not None:
            query, args = "SELECT run_id FROM run_links WHERE checkpoint_uuid=?", (checkpoint_uuid,)
        else:
            query, args = (
                "SELECT run_id FROM run_links WHERE model=? AND version=?",
                (model, version),
            )
        with self._read() as db:
            return [r[0] for r in db.execute(query, args).fetchall()]

    # -- batch runs: lookup by name, atomic checkpoint commits, lineage queries ---------------
    def latest_run(self, kind: RunKind, name: str) -> RunRecord | None:
        """The most recently started run of `kind` called `name`, or None."""
        with self._read() as db:
            row = db.execute(
                "SELECT * FROM runs WHERE kind=? AND name=? ORDER BY started DESC, rowid DESC",
                (kind, name),
            ).fetchone()
        return None if row is None else _run(row)

    def commit_checkpoint(self, commit: CheckpointCommit) -> None:
        """Record a checkpoint, the metrics that belong to it and (optionally) the run's new
        status and counts in one transaction: either all of it is stored or none of it."""
        now = time.time()
        with self._connect() as db:
            db.execute(
                "INSERT INTO checkpoints VALUES (?,?,?,?,?,?)",
                (
                    commit.uuid,
                    commit.run_id,
                    commit.path,
                    commit.steps_completed,
                    _dump(commit.metadata),
                    now,
                ),
            )
            db.executemany(
                "INSERT INTO metrics (run_id, grp, steps_completed, metrics, time) "
                "VALUES (?,?,?,?,?)",
                [(commit.run_id, g, s, _dump(m), now) for g, s, m in commit.metrics],
            )
            if commit.counts is not None:
                db.execute(
                    "UPDATE runs SET counts=? WHERE id=?", (_dump(commit.counts), commit.run_id)
                )
            if commit.status is not None:
                ended = None if commit.status == "running" else now
                db.execute(
                    "UPDATE runs SET status=?, ended=? WHERE id=?",
                    (commit.status, ended, commit.run_id),
                )

    def model_versions(self, model: str) -> list[ModelVersionRecord]:
        with self._read() as db:
            rows = db.execute(
                "SELECT model, version, checkpoint_uuid, time FROM model_versions "
                "WHERE model=? ORDER BY version",
                (model,),
            ).fetchall()
        return [ModelVersionRecord(*row) for row in rows]

    def links(self, run_id: str) -> list[LinkRecord]:
        """The checkpoints and model versions `run_id` used, each once."""
        with self._read() as db:
            rows = db.execute(
                "SELECT DISTINCT run_id, checkpoint_uuid, model, version FROM run_links "
                "WHERE run_id=?",
                (run_id,),
            ).fetchall()
        return [LinkRecord(*row) for row in rows]

    def checkpoint_metrics(
        self, checkpoint_uuid: str, group: str | None = None
    ) -> list[MetricRecord]:
        """Metrics of every run that used this checkpoint, directly or through a model version."""
        return self.metrics(_unique(self.runs_using(checkpoint_uuid=checkpoint_uuid)), group)

    def model_version_metrics(
        self, model: str, version: int, group: str | None = None
    ) -> list[MetricRecord]:
        """Metrics of every run that used this model version."""
        return self.metrics(_unique(self.runs_using(model=model, version=version)), group)


@dataclass(frozen=True)
class CheckpointCommit:
    """One checkpoint to store atomically with its metrics (see `Store.commit_checkpoint`).

    `metrics` holds `(group, steps_completed, metrics)` rows; `status`, when given, becomes the
    run's status (any status but "running" also sets its end time)."""

    run_id: str
    uuid: str
    path: str
    steps_completed: int
    metadata: dict[str, Any]
    metrics: tuple[tuple[str, int, dict[str, Any]], ...] = ()
    status: str | None = None
    counts: dict[str, Any] | None = None


@dataclass(frozen=True)
class ModelVersionRecord:
    model: str
    version: int
    checkpoint_uuid: str
    time: float


@dataclass(frozen=True)
class LinkRecord:
    run_id: str
    checkpoint_uuid: str | None
    model: str | None
    version: int | None


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


def move_aside(path: Path) -> Path:
    """Rename the store file (and its -wal and -shm files) to `NAME.damaged-TIME`; the new
    name of the store file."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    for n in itertools.count(2):
        if not target.exists():
            break
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    try:
        for suffix in ("-wal", "-shm"):
            extra = path.with_name(path.name + suffix)
            if extra.exists():
                extra.rename(target.with_name(target.name + suffix))
        path.rename(target)
    except OSError as exc:
        raise GraphbookError(
            f"the damaged run store {path} could not be moved aside ({exc.strerror}): move it "
            "(and its -wal and -shm files) yourself, or give `--data` another folder"
        ) from None
    return target


def _create(path: Path) -> None:
    """Make a new store file whole before it gets its name, so a zero-byte or half-made store
    file always means damage (several processes may create it at once: the first wins)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:6]}.tmp")
    try:
        db = sqlite3.connect(temporary)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
        finally:
            db.close()
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(temporary, path)
    finally:
        for leftover in (
            temporary,
            *(temporary.with_name(temporary.name + s) for s in ("-wal", "-shm")),
        ):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def _check_writable(path: Path) -> None:
    """SQLite writes the store and, beside it, its -wal and -shm files: a folder or file that
    cannot be written would read as a damaged store."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnwritable(path, f"its folder cannot be made ({exc.strerror})") from None
    if not os.access(path.parent, os.W_OK):
        raise StoreUnwritable(path, f"its folder {path.parent} is read-only")
    if path.exists() and not os.access(path, os.W_OK):
        raise StoreUnwritable(path, "the file is read-only")


OUR_COLUMNS = {"id", "kind", "name", "status", "config", "started"}


def _check_ours(db: sqlite3.Connection, path: Path) -> None:
    """An SQLite file of another program (moved or copied over the store) is not adopted."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    tables = [t for t in tables if not t.startswith("sqlite_")]
    if not tables:
        return  # a new store
    columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    if not OUR_COLUMNS.issubset(columns):
        shown = ", ".join(sorted(tables)[:8]) + (", ..." if len(tables) > 8 else "")
        raise StoreDamaged(
            path, f"it is an SQLite file of another program (its tables: {shown}), not a run store"
        )


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


ADDED_COLUMNS = {"runs": {"paused": "REAL NOT NULL DEFAULT 0"}}
"""Columns added after a table was first made: a store made earlier gets them on opening."""


def _add_columns(db: sqlite3.Connection) -> None:
    for table, columns in ADDED_COLUMNS.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns.items():
            if name in have:
                continue
            try:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
            except sqlite3.OperationalError as exc:  # another process added it just now
                if "duplicate column" not in str(exc):
                    raise


def _dump(value: Any) -> str:
    return encodable_json(json.dumps(value, default=str, sort_keys=True, ensure_ascii=False))


def _optional(text: str | None) -> str | None:
    return None if text is None else encodable_text(text)


def _text(raw: bytes) -> str:
    """A text column as read back: bytes that are not UTF-8 (written by another program, or
    damaged) come back as the lone surrogates of "surrogateescape", and so are escaped as
    `\\udcxx` wherever they go (graphbook/text.py)."""
    return raw.decode("utf-8", "surrogateescape")


def _run(row: tuple[Any, ...]) -> RunRecord:
    return RunRecord(
        row[0],
        row[1],
        row[2],
        row[3],
        json.loads(row[4]),
        json.loads(row[5]),
        row[6],
        row[7],
        row[8],
        row[9],
    )


def _job(row: tuple[Any, ...]) -> JobRecord:
    request, counts = json.loads(row[2]), json.loads(row[9])
    created, rank, run_id, started, ended, error = row[3:9]
    return JobRecord(
        row[0], row[1], request, created, rank, run_id, started, ended, error, counts, *row[10:]
    )


def _checkpoint(row: tuple[Any, ...]) -> CheckpointRecord:
    return CheckpointRecord(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5])
