"""The state of a run as a client is sent it on connect (the `snapshot` message) and as the
server keeps it: each node's counts, its latest errors, logs and output previews."""

from __future__ import annotations

from dataclasses import dataclass, field

from graphbook.events import (
    BatchTiming,
    ErrorInfo,
    NodeState,
    PauseReason,
    PlanAction,
    PlanCause,
    RunMode,
    RunStatus,
)
from graphbook.previews import Preview


@dataclass(frozen=True)
class ErrorEntry:
    error: ErrorInfo
    item: Preview = None
    """A preview of the dict or item the node was working on, if any."""


@dataclass(frozen=True)
class LogEntry:
    level: str
    message: Preview
    """The line, or a preview of what the node logged when it was not text."""


@dataclass(frozen=True)
class OutputPreview:
    index: int
    preview: Preview


@dataclass(frozen=True)
class NodeSnapshot:
    node_id: str
    title: str
    state: NodeState
    action: PlanAction | None = None
    cause: PlanCause | None = None
    reason: str = ""
    received: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    rate: float = 0.0
    seconds: float = 0.0
    errors: list[ErrorEntry] = field(default_factory=list)
    """The most recent errors (at most 20)."""
    logs: list[LogEntry] = field(default_factory=list)
    """The most recent log entries (at most 200)."""
    outputs: dict[str, OutputPreview] = field(default_factory=dict)
    """The latest preview per output."""
    logs_dropped: int = 0
    """Log entries older than `logs` that are no longer kept, or that the server left out."""
    timing: BatchTiming | None = None
    """A batch step's compute and wait seconds (graphbook/engine/timing.py)."""


@dataclass(frozen=True)
class RunSnapshot:
    run_id: str
    workflow: str
    mode: RunMode
    node: str | None
    status: RunStatus
    started: float
    """Unix time."""
    seconds: float
    nodes: list[NodeSnapshot]
    pause_reason: PauseReason | None = None
    errors: int = 0
    paused_node: str | None = None
    """With pause reason `step`: the node whose unit of work ended the step."""
    paused: float = 0.0
    """Seconds paused before the current pause (all of them once it ended); `seconds` leaves
    them out."""
    paused_at: float | None = None
    """While paused: the unix time the run's clock stopped."""
