"""What a run says: every event the engine emits, defined once.

The same dataclasses are the engine's event stream (`Executor.run(graph, sink)`), the lines
`graphbook run --json` prints, and the run messages the server sends on its websocket
(graphbook.protocol adds the messages that are not about a run). A message is a JSON object
whose `type` names it; docs/protocol.md describes each one. The values the events carry, and
the worker pool's figures, live here too, so the engine and the protocol import one module.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from graphbook.previews import Preview

RunMode = Literal["all", "until", "step", "trigger"]
"""`all`: the whole graph; `until`: only what `node` needs; `step`: pause after each unit;
`trigger`: `node` runs again (never from the cache) and so does everything it feeds."""
RunStatus = Literal["running", "paused", "completed", "failed", "stopped"]
EndStatus = Literal["completed", "failed", "stopped"]
"""How a run ended."""
NodeState = Literal["waiting", "running", "cached", "done", "failed", "stopped"]
NodeStatus = Literal["done", "failed", "stopped", "cached"]
"""How a node ended; `cached`: it did not run, its cached outputs were reused."""
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
    "lost",
    "needed",
    "unchanged",
    "triggered",
    "output_missing",
]
"""Why a node runs again, or (`unchanged`) why its cached outputs are reused."""
PauseReason = Literal["pause", "step"]


# -- values ------------------------------------------------------------------------------------
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
class NodeTitle:
    node_id: str
    title: str


@dataclass(frozen=True)
class KindStats:
    waiting: int
    """Tasks not yet handed to a worker."""
    running: int
    """Tasks handed to a worker whose outcome has not come back."""
    workers: int
    """Worker processes alive."""


@dataclass(frozen=True)
class MetricRow:
    """Metrics a node reported at one step, by name."""

    step: int
    values: dict[str, float]


@dataclass(frozen=True)
class PoolStats:
    """The worker pool's load, per kind of work (load and dump functions)."""

    workers: int
    """Workers per kind, as asked for."""
    load: KindStats
    dump: KindStats


# -- events ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunStarted:
    run_id: str
    workflow: str
    """The workflow file's name, or "" for a graph run from Python."""
    mode: RunMode
    node: str | None
    """With mode `until` or `step`: the node the run goes up to; with `trigger`: the node
    re-triggered."""
    nodes: list[NodeTitle]
    """Every node of the run, sources first."""
    started: float
    """Unix time."""
    type: Literal["run_started"] = "run_started"


@dataclass(frozen=True)
class NodePlan:
    """With a cache: whether the node runs or reuses its cached outputs, and why."""

    run_id: str
    node_id: str
    action: PlanAction
    cause: PlanCause
    reason: str
    type: Literal["node_plan"] = "node_plan"


@dataclass(frozen=True)
class NodeStarted:
    run_id: str
    node_id: str
    type: Literal["node_started"] = "node_started"


@dataclass(frozen=True)
class BatchTiming:
    """Where a batch step's time went so far (graphbook/engine/timing.py)."""

    batches: int
    compute: float
    """Seconds in on_item_batch."""
    waited: float
    """Seconds with no batch to run while items were still to come: waiting for input."""
    device: str = ""
    """The CUDA device the batches ran on, when they did ("cuda:0")."""
    device_busy: float | None = None
    """Seconds that device worked on the batches (CUDA events); None off a GPU."""


@dataclass(frozen=True)
class NodeProgress:
    """A few per second per node while it runs (the server sends at most ~10)."""

    run_id: str
    node_id: str
    received: int
    counts: dict[str, int]
    rate: float
    """Dicts handed on per second since the node started."""
    timing: BatchTiming | None = None
    """A batch step's compute and wait seconds."""
    type: Literal["node_progress"] = "node_progress"


@dataclass(frozen=True)
class NodeLog:
    run_id: str
    node_id: str
    level: str
    """info, warning, error, json or image."""
    message: Any
    """What the node logged: text, or (as the server and `run --json` send it) its Preview."""
    skipped: int = 0
    """Lines logged just before this one that are not sent: over the server's rate limit, or
    older than the last lines a cache kept."""
    type: Literal["node_log"] = "node_log"


@dataclass(frozen=True)
class NodeOutput:
    """A preview of one dict a node handed on; fetch others with GET /api/outputs."""

    run_id: str
    node_id: str
    output: str
    index: int
    preview: Preview
    type: Literal["node_output"] = "node_output"


@dataclass(frozen=True)
class NodeMetrics:
    """Metrics a node reported (`log_metric`) since its last NodeMetrics, in step order:
    gathered by the engine and sent about once a second, and as the node and the run
    end. The run store keeps them with the node's id as their group; browsers are not sent them
    (they read the store)."""

    run_id: str
    node_id: str
    rows: list[MetricRow]
    type: Literal["node_metrics"] = "node_metrics"


@dataclass(frozen=True)
class NodeError:
    """A node raised; `item` previews the dict or item it was working on, if any."""

    run_id: str
    node_id: str
    error: ErrorInfo
    item: Preview = None
    type: Literal["node_error"] = "node_error"


@dataclass(frozen=True)
class NodeFinished:
    run_id: str
    node_id: str
    status: NodeStatus
    counts: dict[str, int]
    errors: int
    seconds: float
    timing: BatchTiming | None = None
    """A batch step's compute and wait seconds."""
    type: Literal["node_finished"] = "node_finished"


@dataclass(frozen=True)
class RunPaused:
    """`reason` is "pause" (asked to) or "step" (`node_id` finished one unit of work). The
    run's clock stops at `at` (unix time); `paused` is the seconds it was paused before."""

    run_id: str
    reason: PauseReason
    node_id: str | None = None
    at: float = 0.0
    paused: float = 0.0
    type: Literal["run_paused"] = "run_paused"


@dataclass(frozen=True)
class RunResumed:
    """The run's clock goes on; `paused` is every second it has been paused so far."""

    run_id: str
    paused: float = 0.0
    type: Literal["run_resumed"] = "run_resumed"


@dataclass(frozen=True)
class Prompt:
    """A prompt node asks about a dict (previewed in `data`) and waits for the answer."""

    run_id: str
    prompt_id: str
    node_id: str
    prompt: dict[str, Any]
    """`{"type", "msg", "def", "options", "show_images"}` as graphbook.prompts builds it."""
    data: Preview
    type: Literal["prompt"] = "prompt"


@dataclass(frozen=True)
class PromptAnswered:
    run_id: str
    prompt_id: str
    node_id: str
    answer: Any
    type: Literal["prompt_answered"] = "prompt_answered"


@dataclass(frozen=True)
class RunFinished:
    """`seconds` the run ran, not counting the `paused` seconds it was paused or stepped."""

    run_id: str
    status: EndStatus
    seconds: float
    counts: dict[str, dict[str, int]]
    errors: int
    paused: float = 0.0
    type: Literal["run_finished"] = "run_finished"


Event = (
    RunStarted
    | NodePlan
    | NodeStarted
    | NodeProgress
    | NodeLog
    | NodeOutput
    | NodeMetrics
    | NodeError
    | NodeFinished
    | RunPaused
    | RunResumed
    | RunFinished
    | Prompt
    | PromptAnswered
)
Sink = Callable[[Event], None]
"""Anything that takes events: `list.append` is a sink."""


def null_sink(event: Event) -> None:
    """A sink that drops everything."""
