"""Run history: every run the server starts, recorded in the run store (SQLite)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphbook import events as e
from graphbook import protocol as p
from graphbook.store import RunKind, RunRecord, Store, StoreUnavailable

logger = logging.getLogger(__name__)
KIND: RunKind = "workflow"


@dataclass(frozen=True)
class RunConfig:
    """What a run was asked to do, as stored with it."""

    workflow: str
    mode: e.RunMode
    node: str | None
    params: dict[str, dict[str, Any]]
    continue_on_error: bool = False

    def to_json(self) -> dict[str, Any]:
        config = {"mode": self.mode, "node": self.node, "params": self.params}
        return config | ({"continue_on_error": True} if self.continue_on_error else {})


class HistorySink:
    """Records a run's start, its first error and its end; called in the executor's thread.
    The store failing does not fail the run: `warn` gets the first failure's message."""

    def __init__(
        self, store: Store, config: RunConfig, warn: Callable[[str], None] = lambda _: None
    ) -> None:
        self.store = store
        self.config = config
        self.warn = warn
        self.error: str | None = None
        self.failed = False

    def __call__(self, event: e.Event) -> None:
        try:
            self._record(event)
        except Exception as exc:
            if not self.failed:
                self.failed = True
                message = str(StoreUnavailable(self.store.path, exc))
                logger.warning("%s", message)
                self.warn(message)

    def _record(self, event: e.Event) -> None:
        if isinstance(event, e.RunStarted):
            name, config = self.config.workflow, self.config.to_json()
            self.store.start_run(KIND, name, config, run_id=event.run_id)
        elif isinstance(event, e.NodeError) and self.error is None:
            self.error = f"node {event.node_id!r}: {event.error}"
        elif isinstance(event, e.RunFinished):
            paused = event.paused
            self.store.finish_run(event.run_id, event.status, event.counts, self.error, paused)


def mark_interrupted(store: Store) -> None:
    """Runs left `running` by a server that stopped without finishing them."""
    for record in store.list_runs(KIND, limit=1000):
        if record.status == "running":
            store.finish_run(record.id, "interrupted", record.counts, "the server stopped")


def run_info(record: RunRecord) -> p.RunRecordInfo:
    config = record.config
    return p.RunRecordInfo(
        run_id=record.id,
        workflow=record.name,
        status=record.status,
        mode=str(config.get("mode", "all")),
        node=config.get("node"),
        started=record.started,
        ended=record.ended,
        counts=record.counts,
        error=record.error,
        params=config.get("params", {}),
        paused=record.paused,
    )


def run_snapshot(record: RunRecord) -> p.RunSnapshot:
    """A past run, from its record, as a page shows a run: its status and time, and each node
    that counted dicts with its counts (the node its error names marked failed). Logs, outputs
    and tracebacks are not in the store."""
    ended: p.NodeState = "done" if record.status == "completed" else "stopped"
    failed = _error_node(record.error)
    nodes = [
        p.NodeSnapshot(node_id, node_id, "failed" if node_id == failed else ended, counts=counts)
        for node_id, counts in record.counts.items()
        if isinstance(counts, dict)
    ]
    if failed is not None and failed not in record.counts:
        nodes.append(p.NodeSnapshot(failed, failed, "failed"))
    config = record.config
    seconds = max(0.0, (record.ended or record.started) - record.started - record.paused)
    status = RUN_STATUSES.get(record.status, "stopped")
    return p.RunSnapshot(
        record.id,
        record.name,
        config.get("mode", "all"),
        config.get("node"),
        status,
        record.started,
        seconds,
        nodes,
        errors=1 if record.error else 0,
        paused=record.paused,
    )


RUN_STATUSES: dict[str, p.RunStatus] = {"completed": "completed", "failed": "failed"}
"""Statuses of the store as a page shows them; any other (stopped, interrupted) is stopped."""


def _error_node(error: str | None) -> str | None:
    """The node a recorded error names (`HistorySink` writes "node 'ID': ...")."""
    match = re.match(r"node '([^']+)'", error or "")
    return match.group(1) if match else None
