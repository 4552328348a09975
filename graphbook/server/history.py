"""Run history: every run the server starts, recorded in the run store (SQLite) with what
each node did and the workflow as it ran; a past run read back, and how its file differs now."""

from __future__ import annotations

import logging
import queue
import re
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphbook import events as e
from graphbook import protocol as p
from graphbook.runmetrics import Row, RunMetricRows
from graphbook.store import RunKind, RunRecord, Store, StoreUnavailable, is_busy

logger = logging.getLogger(__name__)
KIND: RunKind = "workflow"
GRAPH = "graph"
"""The config key under which a run's workflow (the canonical JSON it ran) is stored."""
TRIAL_MARK = "#trial-"
"""A search's trials are training runs named `<search name>#trial-<i>` (trainer/search.py)."""
LAYOUT = frozenset({"position", "width", "collapsed", "color", "label"})
"""Node fields that only arrange the canvas: changing them changes nothing a run does."""


@dataclass(frozen=True)
class RunConfig:
    """What a run was asked to do, as stored with it: its request (its workflow's name, mode,
    node, overrides, inputs), each node's parameters and the workflow as it ran."""

    request: p.RunRequest
    """As it was made, its workflow the file's name (its `graph` is `graph` below)."""
    params: dict[str, dict[str, Any]]
    graph: dict[str, Any] | None = field(default=None, compare=False)
    """The workflow as it ran (canonical JSON, without the overrides), so the run can be run
    again as it was."""

    @property
    def workflow(self) -> str:
        return self.request.workflow

    @property
    def mode(self) -> e.RunMode:
        return self.request.mode

    @property
    def node(self) -> str | None:
        return self.request.node

    def to_json(self) -> dict[str, Any]:
        request = self.request
        config: dict[str, Any] = {"mode": request.mode, "node": request.node, "params": self.params}
        if request.continue_on_error:
            config["continue_on_error"] = True
        if request.overrides:
            config["overrides"] = request.overrides
        if request.inputs is not None:
            config["inputs"] = request.inputs
        return config | ({GRAPH: self.graph} if self.graph is not None else {})


Write = Callable[[Store], object]
KEEP_FAILED = 1000
"""Writes kept, while the store fails, to be tried again once it can be written."""


class Recorder:
    """Writes to the run store in a thread of its own, in the order they come, so that neither
    a run nor the server's loop ever waits on SQLite. A store that another process holds
    locked (a training run, a batch job, an sqlite3 shell) delays the record, and the write is
    tried again until it goes through: nothing is lost. Any other failure (a read-only file, a
    full disk) is reported: `problem` says what failed until the writes succeed again, and
    `warn` gets it once each time the store starts failing; the write that failed and those
    after it (the last KEEP_FAILED) wait, and are tried again, in order, with each new one."""

    def __init__(self, store: Store, warn: Callable[[str], None] = lambda _: None) -> None:
        self.store = store
        self.warn = warn
        self.problem: str | None = None
        self._waiting: deque[Write] = deque(maxlen=KEEP_FAILED)
        self._queue: queue.Queue[Write | None] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(target=self._loop, name="graphbook-store", daemon=True)
        self._thread.start()

    def submit(self, write: Write) -> None:
        self._idle.clear()
        self._queue.put(write)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every write submitted so far is done; whether they are."""
        return self._idle.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Finish the writes waiting (for at most `timeout` seconds: a store locked for good
        must not keep the server from stopping) and end the thread."""
        self._queue.put(None)
        self._thread.join(timeout)

    def _loop(self) -> None:
        while (write := self._queue.get()) is not None:
            self._write(write)
            if self._queue.empty():
                self._idle.set()

    def _write(self, write: Write) -> None:
        """Writes go in order: once one fails, the later ones wait behind it, and each new
        write first tries again the ones waiting (one failing again stops the rest)."""
        self._waiting.append(write)
        while self._waiting:
            if not self._try(self._waiting[0]):
                return
            self._waiting.popleft()
        if self.problem is not None:
            logger.warning("the run store %s is written again", self.store.path)
            self.problem = None

    def _try(self, write: Write) -> bool:
        while True:
            try:
                write(self.store)
            except sqlite3.OperationalError as exc:
                if is_busy(exc):
                    logger.info("the run store is busy; trying the write again")
                    continue
                self._failed(exc)
                return False
            except Exception as exc:
                self._failed(exc)
                return False
            return True

    def _failed(self, exc: Exception) -> None:
        if self.problem is None:
            self.problem = str(StoreUnavailable(self.store.path, exc))
            logger.warning("%s", self.problem)
            self.warn(self.problem)


class HistorySink:
    """Records a run's start, its first error and its end, what each node did (as the hub's
    view folded the messages clients got, handed to `finished`) and the run's metric rows
    (runmetrics.py); called in the run host's reader thread, written by the `Recorder` in its
    own. The store failing does not fail the run."""

    def __init__(self, recorder: Recorder, config: RunConfig) -> None:
        self.recorder = recorder
        self.config = config
        self.error: str | None = None
        self.interrupted = False
        """The server is shutting down: a stop now is recorded `interrupted`, as the job that
        ran it is (graphbook/server/jobs.py)."""
        self.metric_rows = RunMetricRows()
        self.held: list[Row] = []
        """Metric rows not written yet: a node's figures as it ends (a run of 4,000 nodes would
        write 4,000 transactions) wait for the next reported metrics or the run's end."""
        self.run_id = ""

    def __call__(self, event: e.Event | None) -> None:
        """Record `event` (its end goes to `finished`); None: nothing to record."""
        self.held += self.metric_rows(event) if event is not None else []
        if self.held and isinstance(event, e.NodeMetrics | e.RunFinished):
            self._report(self.held)  # each node's figures wait for these: one write, not one each
            self.held = []
        if isinstance(event, e.RunStarted):
            name, config, run_id = self.config.workflow, self.config.to_json(), event.run_id
            self.run_id = run_id
            self.recorder.submit(lambda s: s.start_run(KIND, name, config, run_id=run_id))
        elif isinstance(event, e.NodeError) and self.error is None:
            self.error = f"node {event.node_id!r}: {event.error}"

    def finished(self, event: e.RunFinished, nodes: Sequence[p.NodeSnapshot] | None) -> None:
        """Record the run's end, with what each node did (`nodes`; None: not known)."""
        self(event)
        if nodes is not None:
            self._save_nodes(event.run_id, nodes)
        counts, error, paused = event.counts, self.error, event.paused
        status: str = event.status
        if self.interrupted and status == "stopped":
            status, error = "interrupted", INTERRUPTED
        run_id = event.run_id
        self.recorder.submit(lambda s: s.finish_run(run_id, status, counts, error, paused))

    def outputs(self, kept: dict[str, Any]) -> None:
        """Record previews of the first dicts the run's nodes handed on (sent before its end)."""
        run_id = self.run_id
        self.recorder.submit(lambda s: s.save_run_outputs(run_id, kept))

    def _report(self, rows: list[Row]) -> None:
        run_id = self.run_id
        self.recorder.submit(lambda s: s.report_metric_rows(run_id, rows))

    def _save_nodes(self, run_id: str, snapshots: Sequence[p.NodeSnapshot]) -> None:
        # Outputs are left out: their previews point at images kept in memory only.
        nodes = [p.to_json(node) | {"outputs": {}} for node in snapshots]
        self.recorder.submit(lambda s: s.save_run_nodes(run_id, nodes))


INTERRUPTED = "the server ended while it ran"


def mark_interrupted(store: Store) -> None:
    """Runs left `running` by a server that stopped without finishing them."""
    for record in store.list_runs(KIND, limit=1000):
        if record.status == "running":
            store.finish_run(record.id, "interrupted", record.counts, "the server stopped")


def run_info(record: RunRecord, search: str | None = None, metrics: int = 0) -> p.RunRecordInfo:
    config = record.config
    params = config.get("params", {}) if record.kind == KIND else config.get("hparams", {})
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
        params=params if isinstance(params, dict) else {},
        paused=record.paused,
        kind=record.kind,
        search=search,
        metrics=metrics,
    )


def run_snapshot(record: RunRecord, saved: list[p.NodeSnapshot] | None = None) -> p.RunSnapshot:
    """A past run, from its record, as a page shows a run: its status and time, and its nodes:
    those `saved` with it (state, counts, seconds, last logs and errors), or for a run recorded
    without them each node that counted dicts with its counts (the node its error names marked
    failed). Outputs are not in the store."""
    ended: p.NodeState = "done" if record.status == "completed" else "stopped"
    failed = _error_node(record.error)
    nodes = saved or [
        p.NodeSnapshot(node_id, node_id, "failed" if node_id == failed else ended, counts=counts)
        for node_id, counts in record.counts.items()
        if isinstance(counts, dict)
    ]
    if not saved and failed is not None and failed not in record.counts:
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


def run_infos(store: Store, records: list[RunRecord]) -> list[p.RunRecordInfo]:
    """The records as the browser lists them: each trial with its search's id, and how many
    metric rows each run has."""
    searches = {r.name: r.id for r in reversed(records) if r.kind == "search"}
    counts = store.metric_counts([r.id for r in records])

    def search_of(record: RunRecord) -> str | None:
        if record.kind != "train" or TRIAL_MARK not in record.name:
            return None
        name = record.name.rsplit(TRIAL_MARK, 1)[0]
        if name not in searches:
            found = store.latest_run("search", name)
            searches[name] = found.id if found is not None else ""
        return searches[name] or None

    return [run_info(r, search_of(r), counts.get(r.id, 0)) for r in records]


def run_details(
    store: Store, record: RunRecord, current: Callable[[str], dict[str, Any] | None]
) -> p.RunDetails:
    """A past run opened: `current(workflow)` reads the workflow file as it is now (None if
    it is gone), to say how it differs from what the run ran."""
    (info,) = run_infos(store, [record])
    nodes = saved_nodes(store, record.id)
    graph = record.config.get(GRAPH) if record.kind == KIND else None
    changes = workflow_changes(graph, current(record.name)) if isinstance(graph, dict) else []
    config = {k: v for k, v in record.config.items() if k not in (GRAPH, "params")}
    return p.RunDetails(info, nodes, config, isinstance(graph, dict), changes)


def saved_nodes(store: Store, run_id: str) -> list[p.NodeSnapshot]:
    """What each node of a workflow run did, as saved when it ended (none for other runs)."""
    return [p.from_json(p.NodeSnapshot, node, "node") for node in store.run_nodes(run_id) or []]


def rerun_request(record: RunRecord) -> p.RunRequest:
    """The request that runs a past workflow run again as it was: its workflow, parameters,
    wires, mode and node (what RunConfig.to_json stored)."""
    graph = record.config.get(GRAPH)
    if record.kind != KIND or not isinstance(graph, dict):
        raise ValueError(
            f"run {record.id} cannot be run again from here: "
            + (
                f"it is a {record.kind} run (run its script again)"
                if record.kind != KIND
                else "its workflow was not recorded with it (runs before this version); "
                f"open {record.name} and run it"
            )
        )
    config = record.config
    return p.RunRequest(
        workflow=record.name,
        mode=config.get("mode", "all"),
        node=config.get("node"),
        graph=graph,
        continue_on_error=bool(config.get("continue_on_error", False)),
        overrides=config.get("overrides") or None,
        inputs=config.get("inputs"),
    )


def workflow_changes(then: dict[str, Any], now: dict[str, Any] | None) -> list[str]:
    """What differs, for a run, between the workflow it ran and the file now: nodes added or
    removed, their types, parameters and settings, and wires; layout is ignored."""
    if now is None:
        return ["the file no longer exists"]
    if "unreadable" in now:
        return [f"the file cannot be read as a workflow now: {now['unreadable']}"]
    before, after = _nodes(then), _nodes(now)
    changes = [f"node {n!r} added" for n in after if n not in before]
    changes += [f"node {n!r} removed" for n in before if n not in after]
    for node_id in (n for n in before if n in after):
        changes += _node_changes(node_id, before[node_id], after[node_id])
    wires_then, wires_now = _wires(then), _wires(now)
    added, removed = len(wires_now - wires_then), len(wires_then - wires_now)
    if added or removed:
        changes.append(f"wires: {added} added, {removed} removed")
    return changes


def _nodes(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    nodes = workflow.get("nodes", [])
    return {str(n.get("id")): n for n in nodes if isinstance(n, dict)}


def _wires(workflow: dict[str, Any]) -> set[str]:
    edges = workflow.get("edges", [])
    return {repr(sorted(e.items())) for e in edges if isinstance(e, dict)}


def _node_changes(node_id: str, then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    if then.get("type") != now.get("type"):
        return [f"node {node_id!r}: type {then.get('type')} → {now.get('type')}"]
    changes = []
    params_then, params_now = then.get("params", {}), now.get("params", {})
    for name in sorted({*params_then, *params_now}):
        if params_then.get(name) != params_now.get(name):
            old, new = params_then.get(name, "(unset)"), params_now.get(name, "(unset)")
            changes.append(f"{node_id}.{name}: {_short(old)} → {_short(new)}")
    settings = sorted(
        k for k in {*then, *now} - LAYOUT - {"id", "type", "params"} if then.get(k) != now.get(k)
    )
    if settings:
        changes.append(f"node {node_id!r}: {', '.join(settings)} changed")
    return changes


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
