"""The run's view, folded in one place: RunState (the fold: apply a message) holds the run
(RunView) and its nodes (NodeRun) as the messages so far describe them; the same three names as
the browser's fold (web/src/store/runState.ts).

The server folds every message it sends, so a client that connects mid-run gets a snapshot the
next message continues exactly; `graphbook run` folds the engine's events into its table. The
browser's fold (web/src/store/runState.ts) must agree: tests/fixtures/runview/ holds message
sequences with the state expected after each, run by pytest and vitest alike.

The rules a person sees: a node that never started stays `waiting` (shown as "not run"); one
still running when its run ends is `done` if the run completed, else `stopped`; clearing the
cache of a finished run's workflow forgets what the run showed of the cleared nodes.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from dataclasses import dataclass, field

from graphbook import protocol as p

MAX_LOGS = 200
MAX_ERRORS = 20


@dataclass
class NodeRun:
    node_id: str
    title: str
    state: p.NodeState = "waiting"
    action: p.PlanAction | None = None
    cause: p.PlanCause | None = None
    reason: str = ""
    received: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    rate: float = 0.0
    seconds: float = 0.0
    errors: deque[p.ErrorEntry] = field(default_factory=lambda: deque(maxlen=MAX_ERRORS))
    error_count: int = 0
    """Every error of the node (`errors` keeps the last MAX_ERRORS)."""
    logs: deque[p.LogEntry] = field(default_factory=lambda: deque(maxlen=MAX_LOGS))
    outputs: dict[str, p.OutputPreview] = field(default_factory=dict)
    logs_dropped: int = 0
    """Lines not in `logs`: older than the last MAX_LOGS, or left out by the server."""
    timing: p.BatchTiming | None = None
    """A batch step's compute and wait seconds, as last reported."""

    def snapshot(self) -> p.NodeSnapshot:
        return p.NodeSnapshot(
            self.node_id,
            self.title,
            self.state,
            self.action,
            self.cause,
            self.reason,
            self.received,
            dict(self.counts),
            self.rate,
            self.seconds,
            list(self.errors),
            list(self.logs),
            dict(self.outputs),
            self.logs_dropped,
            self.timing,
        )


@dataclass
class RunView:
    started: p.RunStarted
    nodes: dict[str, NodeRun]
    status: p.RunStatus = "running"
    seconds: float | None = None
    pause_reason: p.PauseReason | None = None
    paused_node: str | None = None
    errors: int = 0
    paused: float = 0.0
    """Seconds paused, up to the last resume: the run's clock does not count them."""
    paused_at: float | None = None
    """Unix time the current pause began: the clock stands still since."""

    @property
    def active(self) -> bool:
        return self.status in ("running", "paused")

    def clock(self, now: float) -> float:
        """Seconds run, not counting pauses."""
        if self.seconds is not None:
            return self.seconds
        end = self.paused_at if self.paused_at is not None else now
        return max(0.0, end - self.started.started - self.paused)


class RunState:
    """Folds messages into the current (or last) run and the prompts still open."""

    def __init__(self) -> None:
        self.run: RunView | None = None
        self.prompts: dict[str, p.Prompt] = {}

    @property
    def active(self) -> bool:
        return self.run is not None and self.run.active

    def node(self, node_id: str) -> NodeRun | None:
        return self.run.nodes.get(node_id) if self.run is not None else None

    def title(self, node_id: str) -> str:
        node = self.node(node_id)
        return node.title if node is not None else node_id

    def apply(self, message: p.ServerMessage) -> None:
        """Fold one message in; messages about another run, or not about runs, change nothing."""
        match message:
            case p.RunStarted():
                nodes = {n.node_id: NodeRun(n.node_id, n.title) for n in message.nodes}
                self.run = RunView(message, nodes)
                self.prompts.clear()
            case p.Prompt():
                self.prompts[message.prompt_id] = message
            case p.PromptAnswered():
                self.prompts.pop(message.prompt_id, None)
            case p.CacheCleared():
                self._cleared(message)
            case p.RunFinished():
                self.prompts = {k: v for k, v in self.prompts.items() if v.run_id != message.run_id}
                if self.run is not None and self.run.started.run_id == message.run_id:
                    self._finished(self.run, message)
            case p.RunPaused() | p.RunResumed() if self._is_current(message.run_id):
                self._pause(message)
            case (
                p.NodePlan()
                | p.NodeStarted()
                | p.NodeProgress()
                | p.NodeLog()
                | p.NodeOutput()
                | p.NodeError()
                | p.NodeFinished()
            ) if self.run is not None and self._is_current(message.run_id):
                if isinstance(message, p.NodeError):
                    self.run.errors += 1
                self._apply_to_node(self.run.nodes.get(message.node_id), message)

    def _is_current(self, run_id: str) -> bool:
        return self.run is not None and self.run.started.run_id == run_id

    def _pause(self, message: p.RunPaused | p.RunResumed) -> None:
        assert self.run is not None
        if isinstance(message, p.RunPaused):
            self.run.status, self.run.pause_reason = "paused", message.reason
            self.run.paused_node = message.node_id
            self.run.paused, self.run.paused_at = message.paused, message.at
        else:
            self.run.status, self.run.pause_reason, self.run.paused_node = "running", None, None
            self.run.paused, self.run.paused_at = message.paused, None

    def _apply_to_node(self, node: NodeRun | None, message: p.ServerMessage) -> None:
        if node is None:
            return
        match message:
            case p.NodePlan():
                node.action, node.cause, node.reason = message.action, message.cause, message.reason
            case p.NodeStarted():
                node.state = "running"
            case p.NodeProgress():
                node.state = "running" if node.state == "waiting" else node.state
                node.received, node.counts, node.rate = (
                    message.received,
                    dict(message.counts),
                    message.rate,
                )
                node.timing = message.timing or node.timing
            case p.NodeLog():
                node.logs_dropped += message.skipped + (len(node.logs) == MAX_LOGS)
                node.logs.append(p.LogEntry(message.level, message.message))
            case p.NodeOutput():
                node.outputs[message.output] = p.OutputPreview(message.index, message.preview)
            case p.NodeError():
                node.errors.append(p.ErrorEntry(message.error, message.item))
                node.error_count += 1
            case p.NodeFinished():
                node.state, node.counts, node.seconds = (
                    message.status,
                    dict(message.counts),
                    message.seconds,
                )
                node.rate = average_rate(message.counts, message.seconds)
                node.timing = message.timing or node.timing

    def _finished(self, run: RunView, message: p.RunFinished) -> None:
        run.status, run.seconds, run.errors = message.status, message.seconds, message.errors
        run.pause_reason = run.paused_node = None
        run.paused, run.paused_at = message.paused, None
        for node in run.nodes.values():
            _end_node(node, message)

    def nodes_after(self, end: p.RunFinished) -> list[p.NodeSnapshot] | None:
        """What each node of the run did once `end` is folded in, without folding it (the
        run's record is written before clients are told); None if the view is of another run."""
        if self.run is None or not self._is_current(end.run_id):
            return None
        return [_end_node(copy.copy(node), end).snapshot() for node in self.run.nodes.values()]

    def _cleared(self, message: p.CacheCleared) -> None:
        run = self.run
        if run is None or run.active or run.started.workflow != message.workflow:
            return
        for node_id in message.nodes:
            node = run.nodes.get(node_id)
            if node is not None:
                run.nodes[node_id] = NodeRun(node_id, node.title)

    def snapshot(self) -> p.RunSnapshot | None:
        run = self.run
        if run is None:
            return None
        started = run.started
        seconds = run.clock(time.time())
        return p.RunSnapshot(
            started.run_id,
            started.workflow,
            started.mode,
            started.node,
            run.status,
            started.started,
            seconds,
            [n.snapshot() for n in run.nodes.values()],
            run.pause_reason,
            run.errors,
            run.paused_node,
            run.paused,
            run.paused_at,
        )


def _end_node(node: NodeRun, end: p.RunFinished) -> NodeRun:
    """A node still running when its run ends is `done` if the run completed, else `stopped`."""
    if node.state == "running":  # the run ended before the node could finish
        node.state, node.rate = ("done" if end.status == "completed" else "stopped"), 0.0
    return node


def average_rate(counts: dict[str, int], seconds: float) -> float:
    """Dicts handed on per second over a node's whole run."""
    return sum(counts.values()) / seconds if seconds > 0 else 0.0
