"""RunView: the state of the current (or last) run as the messages sent so far describe it,
from which a client that connects mid-run gets its snapshot. Used on the event loop only."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphbook import events as e
from graphbook import protocol as p

MAX_LOGS = 200
MAX_ERRORS = 20


@dataclass
class NodeView:
    node_id: str
    title: str
    state: e.NodeState = "waiting"
    action: e.PlanAction | None = None
    cause: e.PlanCause | None = None
    reason: str = ""
    received: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    rate: float = 0.0
    seconds: float = 0.0
    errors: deque[p.ErrorEntry] = field(default_factory=lambda: deque(maxlen=MAX_ERRORS))
    logs: deque[p.LogEntry] = field(default_factory=lambda: deque(maxlen=MAX_LOGS))
    outputs: dict[str, p.OutputPreview] = field(default_factory=dict)

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
        )


@dataclass
class RunState:
    started: e.RunStarted
    status: e.RunStatus = "running"
    seconds: float | None = None
    pause_reason: e.PauseReason | None = None
    errors: int = 0
    nodes: dict[str, NodeView] = field(default_factory=dict)


class RunView:
    """Folds server messages into the current run's state."""

    def __init__(self) -> None:
        self.run: RunState | None = None
        self.prompts: dict[str, e.Prompt] = {}
        self._apply: dict[str, Callable[[Any], None]] = {
            "run_started": self._run_started,
            "node_plan": self._node_plan,
            "node_started": self._node_started,
            "node_progress": self._node_progress,
            "node_log": self._node_log,
            "node_output": self._node_output,
            "node_error": self._node_error,
            "node_finished": self._node_finished,
            "run_paused": self._run_paused,
            "run_resumed": self._run_resumed,
            "run_finished": self._run_finished,
            "prompt": self._prompt,
            "prompt_answered": self._prompt_answered,
        }

    @property
    def active(self) -> bool:
        return self.run is not None and self.run.status in ("running", "paused")

    def apply(self, message: Any) -> None:
        apply = self._apply.get(message.type)
        if apply is not None:
            apply(message)

    def snapshot(self) -> p.RunSnapshot | None:
        run = self.run
        if run is None:
            return None
        seconds = run.seconds if run.seconds is not None else time.time() - run.started.started
        return p.RunSnapshot(
            run.started.run_id,
            run.started.workflow,
            run.started.mode,
            run.started.node,
            run.status,
            run.started.started,
            seconds,
            [n.snapshot() for n in run.nodes.values()],
            run.pause_reason,
            run.errors,
        )

    def _node(self, message: Any) -> NodeView | None:
        if self.run is None or self.run.started.run_id != message.run_id:
            return None
        return self.run.nodes.get(message.node_id)

    def _run_started(self, m: e.RunStarted) -> None:
        self.run = RunState(m, nodes={n.node_id: NodeView(n.node_id, n.title) for n in m.nodes})
        self.prompts.clear()

    def _node_plan(self, m: e.NodePlan) -> None:
        node = self._node(m)
        if node is not None:
            node.action, node.cause, node.reason = m.action, m.cause, m.reason

    def _node_started(self, m: e.NodeStarted) -> None:
        node = self._node(m)
        if node is not None:
            node.state = "running"

    def _node_progress(self, m: e.NodeProgress) -> None:
        node = self._node(m)
        if node is not None:
            node.received, node.counts, node.rate = m.received, dict(m.counts), m.rate

    def _node_log(self, m: e.NodeLog) -> None:
        node = self._node(m)
        if node is not None:
            node.logs.append(p.LogEntry(m.level, m.message))

    def _node_output(self, m: e.NodeOutput) -> None:
        node = self._node(m)
        if node is not None:
            node.outputs[m.output] = p.OutputPreview(m.index, m.preview)

    def _node_error(self, m: e.NodeError) -> None:
        node = self._node(m)
        if node is not None:
            node.errors.append(p.ErrorEntry(m.error, m.item))
        if self.run is not None:
            self.run.errors += 1

    def _node_finished(self, m: e.NodeFinished) -> None:
        node = self._node(m)
        if node is not None:
            node.state, node.counts, node.seconds = m.status, dict(m.counts), m.seconds

    def _run_paused(self, m: e.RunPaused) -> None:
        if self.run is not None and self.run.started.run_id == m.run_id:
            self.run.status, self.run.pause_reason = "paused", m.reason

    def _run_resumed(self, m: e.RunResumed) -> None:
        if self.run is not None and self.run.started.run_id == m.run_id:
            self.run.status, self.run.pause_reason = "running", None

    def _run_finished(self, m: e.RunFinished) -> None:
        if self.run is not None and self.run.started.run_id == m.run_id:
            self.run.status, self.run.seconds, self.run.pause_reason = m.status, m.seconds, None
            self.run.errors = m.errors
            for node in self.run.nodes.values():
                if node.state == "waiting":  # resources, and nodes that never got to start
                    node.state = _unstarted_state(node, m.status)
        self.prompts = {k: v for k, v in self.prompts.items() if v.run_id != m.run_id}

    def _prompt(self, m: e.Prompt) -> None:
        self.prompts[m.prompt_id] = m

    def _prompt_answered(self, m: e.PromptAnswered) -> None:
        self.prompts.pop(m.prompt_id, None)


def _unstarted_state(node: NodeView, status: str) -> e.NodeState:
    if node.action == "reuse":
        return "cached"
    return "done" if status == "completed" else "stopped"
