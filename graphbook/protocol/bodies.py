"""The bodies of the HTTP API's requests and replies (every /api route's, as app.py's API table
names them), an error reply among them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from graphbook.errors import LoadFailure, Problem
from graphbook.events import PoolStats
from graphbook.previews import Preview
from graphbook.protocol.codec import ErrorCode
from graphbook.protocol.snapshot import NodeSnapshot, RunSnapshot


@dataclass(frozen=True)
class ParamInfo:
    name: str
    type: str
    default: Any
    description: str
    required: bool


@dataclass(frozen=True)
class NodeInfo:
    name: str
    kind: Literal["step", "source", "batch", "prompt", "resource"]
    category: str
    inputs: list[str]
    outputs: list[str]
    params: list[ParamInfo]
    doc: str
    """The node's docstring (Markdown), its help page."""
    code_hash: str
    gives: str = "any"
    """A resource's value type (string, number, ..., object), or "any" when undeclared."""
    pack: str = ""
    """The pack it belongs to: a library module ("images"), an installed node pack's
    distribution, "examples", or "" for a file of a node folder (custom_nodes/)."""
    pack_kind: Literal["builtin", "pack", "custom", "example"] = "custom"
    component: str = ""
    """A library component's name (its file is `components/NAME.json`, its version is
    `code_hash`); a node made from it is `{"type": "Component", "component": {"library": NAME,
    "version": code_hash}}`. "" for a node kind."""


@dataclass(frozen=True)
class Catalog:
    version: int
    nodes: list[NodeInfo]
    failures: list[LoadFailure]
    fits: dict[str, list[str]]
    """What a resource gives -> the parameter types it fits (a list[T] parameter is a list), the
    table the server checks wires with; any other pair does not fit, except `any` and `resource`."""


@dataclass(frozen=True)
class WorkflowFile:
    path: str
    size: int
    modified: float


@dataclass(frozen=True)
class RefusedFile:
    """A file in the workflows folder that the server does not open: `reason` says why."""

    path: str
    reason: str


@dataclass(frozen=True)
class WorkflowList:
    files: list[WorkflowFile]
    refused: list[RefusedFile] = field(default_factory=list)
    """Files listed but not offered: a symlink leading outside the folder, or one that loops."""


@dataclass(frozen=True)
class WorkflowDocument:
    """A workflow file: always in the canonical format, whatever format the file is in."""

    path: str
    hash: str
    """sha256 of the file's bytes; send it back as `If-Match` to refuse overwriting changes."""
    source_format: Literal["graphbook", "graphbook0"]
    workflow: dict[str, Any]
    problems: list[Problem]
    """Validation problems against the current catalog; the file opens anyway."""


@dataclass(frozen=True)
class ComponentDocument:
    """A library component file (`components/NAME.json`)."""

    path: str
    name: str
    """The name a workflow's component node refers to it by (the path without `.json`)."""
    hash: str
    """sha256 of the file's bytes; send it back as `If-Match` to refuse overwriting changes."""
    version: str
    """Its version, as a component node records it (the first 12 digits of `hash`)."""
    component: dict[str, Any]
    problems: list[Problem]
    """What is wrong inside it, against the current catalog (node ids are paths `NAME/inner`)."""


@dataclass(frozen=True)
class WorkflowInputs:
    """`GET /api/workflows/{path}/inputs`: what the workflow takes when it is run."""

    workflow: str
    schema: dict[str, Any]
    """A JSON Schema object: a property per input (type, default, description), `required`
    listing those without a default; give the values as `inputs` of `POST /api/runs`."""


@dataclass(frozen=True)
class TemplateInfo:
    """A template (graphbook/templates/): a small workflow built from the node library."""

    name: str
    """What `POST /api/templates/{name}` and `graphbook new --template` take."""
    title: str
    description: str
    """One line: what it does."""
    workflow: dict[str, Any]
    """The workflow file as written (canonical format), for a picture of the graph."""


@dataclass(frozen=True)
class TemplateList:
    templates: list[TemplateInfo]


@dataclass(frozen=True)
class TemplateCreated:
    """`POST /api/templates/{name}`: the workflow written and the sample data it reads."""

    path: str
    """The workflow file, relative to the workflows folder."""
    samples: list[str]
    """Sample files and folders written, relative to the server's working directory (where
    runs start, so the template's relative paths find them); those there already are kept."""


@dataclass(frozen=True)
class RunAccepted:
    run_id: str


@dataclass(frozen=True)
class RunRecordInfo:
    run_id: str
    workflow: str
    status: str
    mode: str
    node: str | None
    started: float
    ended: float | None
    counts: dict[str, Any]
    error: str | None
    params: dict[str, Any]
    paused: float = 0.0
    """Seconds of `ended - started` the run spent paused."""
    kind: str = "workflow"
    """`workflow` (run by the server), `train` (a training run), `search` (a hyperparameter
    search, whose trials are `train` runs) or `batch` (torch_batch_process)."""
    search: str | None = None
    """A search's trial: the id of the search run it belongs to."""
    metrics: int = 0
    """How many metric rows the run reported (training runs, batch jobs)."""


@dataclass(frozen=True)
class LastRun:
    """`GET /api/runs/last?workflow=NAME`: the workflow's last run as a page shows it, or null.
    `source` says where it comes from: `live` (the server's view since it started: logs,
    outputs, errors) or `history` (the run store: status, times and counts; each node's state,
    seconds, last logs and errors for runs recorded with them)."""

    workflow: str
    run: RunSnapshot | None
    source: Literal["live", "history"] | None = None


@dataclass(frozen=True)
class RunList:
    runs: list[RunRecordInfo]


@dataclass(frozen=True)
class RunDetails:
    """One past run opened: its record, what each node did (the run's last state: counts,
    seconds, logs, errors), what it was asked to do, and how its workflow file differs now."""

    run: RunRecordInfo
    nodes: list[NodeSnapshot]
    """Empty for runs that are not workflow runs, and for runs recorded before nodes were."""
    config: dict[str, Any]
    """What the run was started with (a training run: hparams, seed, data, ...), without the
    workflow itself."""
    rerun: bool
    """Whether the run can be run again as it was (its workflow was recorded with it)."""
    changes: list[str]
    """How the workflow file differs now from what this run ran (empty: unchanged)."""


@dataclass(frozen=True)
class MetricSeries:
    """One metric of one group (`training`, `validation`, ...) over a run's steps."""

    group: str
    name: str
    steps: list[int]
    """Batches (steps) completed when each value was reported, in order."""
    values: list[float | None]
    """The values at `steps`; null where the metric was missing or not a finite number."""
    dropped: int = 0
    """Points left out to keep the series at most MAX_METRIC_POINTS long (every k-th kept)."""


@dataclass(frozen=True)
class RunMetrics:
    run_id: str
    name: str
    series: list[MetricSeries]


@dataclass(frozen=True)
class MetricsList:
    runs: list[RunMetrics]


@dataclass(frozen=True)
class OutputItem:
    workflow: str
    node_id: str
    output: str
    index: int
    total: int
    item: Preview
    """The dict, previewed large (deeper, longer text and more items than a live preview)."""


@dataclass(frozen=True)
class GalleryRow:
    """One dict of a node's output in the results gallery."""

    index: int
    """Its place among the dicts the node handed on (as GET /api/outputs numbers them)."""
    thumb: str | None
    """A small picture of its image (made by the server, for a file anywhere on disk)."""
    url: str | None
    """The full image, served only from the server's roots; null with `reason` otherwise."""
    reason: str | None
    """Why the full image is not served (it lies outside the roots, ...); null when it is."""
    path: str | None
    """The image file, when the image is one."""
    fields: dict[str, Any]
    """Its plain fields: numbers, text, booleans, null."""


@dataclass(frozen=True)
class GalleryPage:
    """A page of a node's output dicts, filtered and sorted (GET /api/outputs/gallery)."""

    workflow: str
    node_id: str
    output: str
    total: int
    """Dicts the node has handed on so far."""
    matched: int
    """Of those, the ones the filter keeps."""
    offset: int
    rows: list[GalleryRow]
    fields: list[str]
    """The plain fields the dicts have (from the first ones), for the filter and the hover."""
    numeric: list[str]
    """Of those, the ones holding numbers, to sort by."""


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    memory_used: int
    memory_total: int


@dataclass(frozen=True)
class CacheInfo:
    used_bytes: int
    budget_bytes: int
    entries: int


@dataclass(frozen=True)
class SystemStats:
    cpu_percent: float
    memory_used: int
    memory_total: int
    gpus: list[GpuInfo]
    pool: PoolStats | None
    cache: CacheInfo


@dataclass(frozen=True)
class ErrorBody:
    code: ErrorCode
    message: str
    problems: list[Problem] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    """What is wrong with each field of a form, by its name (an app's inputs): shown beside it."""


@dataclass(frozen=True)
class ErrorReply:
    """Every HTTP error response: `{"error": {"code", "message", "problems"}}`."""

    error: ErrorBody
