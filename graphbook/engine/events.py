"""The one event stream that describes a run; the CLI and the server are sinks of it."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

RunStatus = Literal["completed", "failed", "stopped"]
NodeStatus = Literal["done", "failed", "stopped"]


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


Event = (
    RunStarted
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
