"""Run history: every run the server starts, recorded in the run store (SQLite)."""

from __future__ import annotations

import logging
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
