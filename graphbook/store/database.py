"""The run store's file: its schema, opening it (made whole before it is named, checked to be
ours, columns added since), what goes wrong with it (damaged, unwritable, busy), and Database,
the connections every table's methods use (runs.py, jobs.py, metrics.py, checkpoints.py)."""

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from graphbook.errors import GraphbookError
from graphbook.text import encodable_json, encodable_text

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
CREATE TABLE IF NOT EXISTS run_outputs (
    run_id TEXT PRIMARY KEY REFERENCES runs(id), outputs TEXT NOT NULL
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


class Database:
    """One SQLite file of the run store, opened and checked; its tables' methods come from the
    classes that make up Store (graphbook/store/__init__.py)."""

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

    def reading(self, timeout: float) -> Self:
        """This store for reads that wait at most `timeout` seconds for a lock another process
        holds (a store not in WAL mode, locked by a writer), then raise `StoreBusy`."""
        reader = copy.copy(self)
        reader.timeout = timeout
        return reader

    def waiting(self, timeout: float) -> Self:
        """This store for writes (and reads) that wait at most `timeout` seconds for a lock,
        another process's or this process's other writers', then raise StoreBusy (a write) or
        sqlite3.OperationalError: what answers a person promptly uses it."""
        return self.reading(timeout)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A write: one at a time in this process, waiting up to `timeout` seconds for another
        process's write lock (and as long for this process's write before it)."""
        if not self._lock.acquire(timeout=self.timeout):
            raise StoreBusy(self.path, self.timeout)
        try:
            with self._open() as db:
                yield db
        finally:
            self._lock.release()

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


def dump(value: Any) -> str:
    return encodable_json(json.dumps(value, default=str, sort_keys=True, ensure_ascii=False))


def optional(text: str | None) -> str | None:
    return None if text is None else encodable_text(text)


def _text(raw: bytes) -> str:
    """A text column as read back: bytes that are not UTF-8 (written by another program, or
    damaged) come back as the lone surrogates of "surrogateescape", and so are escaped as
    `\\udcxx` wherever they go (graphbook/text.py)."""
    return raw.decode("utf-8", "surrogateescape")
