"""The checkpoints, model versions and run links tables: what a run saved, the models made
from it, and which runs used which (lineage); a checkpoint committed with its metrics at once."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from graphbook.store.database import dump
from graphbook.store.metrics import MetricRecord, MetricTable


@dataclass(frozen=True)
class CheckpointRecord:
    uuid: str
    run_id: str
    path: str
    steps_completed: int
    metadata: dict[str, Any]
    time: float


class CheckpointTable(MetricTable):
    """Checkpoints and model versions, and the lineage of the runs that used them."""

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
                    dump(metadata or {}),
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
                    dump(commit.metadata),
                    now,
                ),
            )
            db.executemany(
                "INSERT INTO metrics (run_id, grp, steps_completed, metrics, time) "
                "VALUES (?,?,?,?,?)",
                [(commit.run_id, g, s, dump(m), now) for g, s, m in commit.metrics],
            )
            if commit.counts is not None:
                db.execute(
                    "UPDATE runs SET counts=? WHERE id=?", (dump(commit.counts), commit.run_id)
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


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _checkpoint(row: tuple[Any, ...]) -> CheckpointRecord:
    return CheckpointRecord(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5])
