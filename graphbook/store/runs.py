"""The runs table: a run of any kind (a workflow, a batch job, a training, a search), its
status, counts and config; what each node of a workflow run did (run_nodes) and previews of
the first dicts it handed on (run_outputs)."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from graphbook.store.database import Database, dump, optional
from graphbook.text import encodable_text

RunKind = Literal["workflow", "batch", "train", "search"]
RESUMABLE = ("running", "stopped", "failed")
"""A run in one of these states is continued by the next call with its name (batch_process,
the trainer); a completed one is not."""


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


class RunTable(Database):
    """Runs: started, finished, read; found by name to be continued."""

    def start_run(
        self, kind: RunKind, name: str, config: dict[str, Any] | None = None, run_id: str = ""
    ) -> str:
        run_id = run_id or uuid.uuid4().hex[:12]
        with self._connect() as db:
            db.execute(
                "INSERT INTO runs (id, kind, name, status, config, started) VALUES (?,?,?,?,?,?)",
                (run_id, kind, encodable_text(name), "running", dump(config or {}), time.time()),
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
                (status, dump(counts or {}), optional(error), time.time(), paused, run_id),
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
                (run_id, dump(nodes)),
            )

    def run_nodes(self, run_id: str) -> list[dict[str, Any]] | None:
        """The nodes saved with `save_run_nodes`, or None if none were."""
        with self._read() as db:
            row = db.execute("SELECT nodes FROM run_nodes WHERE run_id=?", (run_id,)).fetchone()
        return None if row is None else list(json.loads(row[0]))

    def save_run_outputs(self, run_id: str, outputs: dict[str, Any]) -> None:
        """Previews of the first dicts each node of a workflow run handed on, per output, with
        how many there were (`{node: {output: {"count", "items"}}}`), as the run ended."""
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO run_outputs (run_id, outputs) VALUES (?,?)",
                (run_id, dump(outputs)),
            )

    def run_outputs(self, run_id: str) -> dict[str, Any] | None:
        """The previews saved with `save_run_outputs`, or None if none were."""
        with self._read() as db:
            query = "SELECT outputs FROM run_outputs WHERE run_id=?"
            row = db.execute(query, (run_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def latest_run(self, kind: RunKind, name: str) -> RunRecord | None:
        """The most recently started run of `kind` called `name`, or None."""
        with self._read() as db:
            row = db.execute(
                "SELECT * FROM runs WHERE kind=? AND name=? ORDER BY started DESC, rowid DESC",
                (kind, name),
            ).fetchone()
        return None if row is None else _run(row)


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
