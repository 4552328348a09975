"""The metrics table: rows of named values a run reports, by group and step."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphbook.store.database import Database, dump


@dataclass(frozen=True)
class MetricRecord:
    run_id: str
    group: str
    steps_completed: int
    metrics: dict[str, Any]
    time: float


class MetricTable(Database):
    """Metric rows: reported, read by run and group, counted, cut back on resume."""

    def report_metrics(
        self, run_id: str, group: str, steps_completed: int, metrics: dict[str, Any]
    ) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO metrics (run_id, grp, steps_completed, metrics, time) "
                "VALUES (?,?,?,?,?)",
                (run_id, group, steps_completed, dump(metrics), time.time()),
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
                [(run_id, g, s, dump(m), now) for g, s, m in rows],
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
