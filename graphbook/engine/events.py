"""The one event stream that describes a run; the CLI and the server are sinks of it."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

RunStatus = Literal["completed", "failed", "stopped"]
NodeStatus = Literal["done", "failed", "stopped"]
PlanAction = Literal["run", "reuse"]
PlanCause = Literal[
    "new",
    "cleared",
    "evicted",
    "uncacheable",
    "code",
    "params",
    "upstream",
    "upstream_runs",
    "incomplete",
    "needed",
    "unchanged",
]
"""Why a node runs again, or (`unchanged`) why its cached outputs are reused."""


@dataclass(frozen=True)
class ErrorInfo:
    """An exception as a value: it crosses processes and reaches the node it belongs to."""

    type: str
    message: str
    traceback: str

    @classmethod
    def from_exception(cls, exc: BaseException) -> ErrorInfo:
        text = "".join(traceback.format_exception(exc))
        return cls(type(exc).__name__, str(exc), text)

    def __str__(self) -> str:
        return f"{self.type}: {self.message}"


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    nodes: dict[str, str]
    """Node id -> title, in topological order."""
    kind: Literal["run_started"] = "run_started"


@dataclass(frozen=True)
class NodeStarted:
    node_id: str
    kind: Literal["node_started"] = "node_started"


@dataclass(frozen=True)
class NodeProgress:
    node_id: str
    received: int
    counts: dict[str, int]
    rate: float
    """Dicts handed on per second since the node started."""
    kind: Literal["node_progress"] = "node_progress"


@dataclass(frozen=True)
class NodeLog:
    node_id: str
    level: str
    message: Any
    kind: Literal["node_log"] = "node_log"


@dataclass(frozen=True)
class NodeOutput:
    node_id: str
    output: str
    index: int
    preview: Any
    kind: Literal["node_output"] = "node_output"


@dataclass(frozen=True)
class NodeFailed:
    """A node raised; `item` previews the dict or item it was working on, if any."""

    node_id: str
    error: ErrorInfo
    item: Any = None
    kind: Literal["node_failed"] = "node_failed"


@dataclass(frozen=True)
class NodeFinished:
    node_id: str
    status: NodeStatus
    counts: dict[str, int]
    errors: int
    seconds: float
    kind: Literal["node_finished"] = "node_finished"


@dataclass(frozen=True)
class RunFinished:
    run_id: str
    status: RunStatus
    seconds: float
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: int = 0
    kind: Literal["run_finished"] = "run_finished"


@dataclass(frozen=True)
class NodePlanned:
    """With a cache: whether the node runs or reuses its cached outputs, and why."""

    node_id: str
    action: PlanAction
    cause: PlanCause
    reason: str
    kind: Literal["node_planned"] = "node_planned"


@dataclass(frozen=True)
class NodeCached:
    """The node did not run: its cached outputs (these counts) were reused."""

    node_id: str
    counts: dict[str, int]
    kind: Literal["node_cached"] = "node_cached"


@dataclass(frozen=True)
class RunPaused:
    """`reason` is "pause" (asked to) or "step" (`node_id` finished one unit of work)."""

    run_id: str
    reason: Literal["pause", "step"]
    node_id: str | None = None
    kind: Literal["run_paused"] = "run_paused"


@dataclass(frozen=True)
class RunResumed:
    run_id: str
    kind: Literal["run_resumed"] = "run_resumed"


@dataclass(frozen=True)
class NodePrompted:
    """A prompt node asks about a dict (previewed in `data`) and waits for the answer."""

    node_id: str
    prompt_id: str
    prompt: dict[str, Any]
    data: Any
    kind: Literal["node_prompted"] = "node_prompted"


@dataclass(frozen=True)
class NodeAnswered:
    node_id: str
    prompt_id: str
    answer: Any
    kind: Literal["node_answered"] = "node_answered"


Event = (
    RunStarted
    | NodePlanned
    | NodeCached
    | RunPaused
    | RunResumed
    | NodePrompted
    | NodeAnswered
    | NodeStarted
    | NodeProgress
    | NodeLog
    | NodeOutput
    | NodeFailed
    | NodeFinished
    | RunFinished
)
Sink = Callable[[Event], None]
"""Anything that takes events: `list.append` is a sink."""


def null_sink(event: Event) -> None:
    """A sink that drops everything."""
