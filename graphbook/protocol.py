"""The wire protocol between the server and its clients: every websocket message in both
directions and every HTTP payload, as typed frozen dataclasses with one `encode` and one
`decode`. The messages about a run are the engine's events (graphbook.events), sent as they
are; this module adds the rest. `web/src/protocol.ts` is generated from both (by
tests/web/protocol_ts.py); docs/protocol.md documents them.

A message is a JSON object whose `type` names it. Fields are never renamed or removed within a
protocol `VERSION`; new optional fields may be added.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from functools import partial
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from graphbook.errors import LoadFailure, Problem
from graphbook.events import (  # re-exported (pyproject): the run events are messages too
    ErrorInfo,
    NodeError,
    NodeFinished,
    NodeLog,
    NodeMetrics,
    NodeOutput,
    NodePlan,
    NodeProgress,
    NodeStarted,
    NodeState,
    PauseReason,
    PlanAction,
    PlanCause,
    PoolStats,
    Prompt,
    PromptAnswered,
    RunFinished,
    RunMode,
    RunPaused,
    RunResumed,
    RunStarted,
    RunStatus,
)
from graphbook.plain import plain
from graphbook.text import encodable_json

VERSION = 1
"""Bumped when a message or field changes incompatibly."""

WorkflowAction = Literal["saved", "deleted", "renamed"]
ErrorCode = Literal[
    "bad_json",
    "bad_message",
    "unknown_type",
    "too_large",
    "not_found",
    "bad_path",
    "conflict",
    "invalid_workflow",
    "unauthorized",
    "forbidden",
    "no_run",
    "run_active",
    "store_failed",
    "internal",
]


class ProtocolError(ValueError):
    """A message that is not valid JSON, has an unknown type or a missing or wrong field."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message


# -- shared parts ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ErrorEntry:
    error: ErrorInfo
    item: Any = None
    """A preview of the dict or item the node was working on, if any."""


@dataclass(frozen=True)
class LogEntry:
    level: str
    message: Any


@dataclass(frozen=True)
class OutputPreview:
    index: int
    preview: Any


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


# -- server -> client --------------------------------------------------------------------------
@dataclass(frozen=True)
class Hello:
    """The first message on every connection."""

    version: int
    server: str
    client_id: str
    catalog_version: int
    instance: str
    """This server process's id, new on every start: a page that sees it change resyncs."""
    type: Literal["hello"] = "hello"


@dataclass(frozen=True)
class Snapshot:
    """Sent right after `hello`: the current (or last) run and the open prompts."""

    run: RunSnapshot | None
    prompts: list[Prompt]
    catalog_version: int
    type: Literal["snapshot"] = "snapshot"


@dataclass(frozen=True)
class CatalogChanged:
    """A node file changed; GET /api/catalog for the full catalog."""

    version: int
    added: list[str]
    removed: list[str]
    changed: list[str]
    failures: list[LoadFailure]
    type: Literal["catalog_changed"] = "catalog_changed"


@dataclass(frozen=True)
class CacheCleared:
    workflow: str
    nodes: list[str]
    type: Literal["cache_cleared"] = "cache_cleared"


@dataclass(frozen=True)
class WorkflowsChanged:
    path: str
    action: WorkflowAction
    to: str | None = None
    type: Literal["workflows_changed"] = "workflows_changed"


@dataclass(frozen=True)
class WorkflowChanged:
    """The server wrote a workflow file (an agent's edit, another tab's save): its new `hash`
    (as `WorkflowDocument.hash`) and content, canonical. A page with the file open shows it
    as one undo step, unless the hash is the one it saved itself."""

    path: str
    hash: str
    workflow: dict[str, Any]
    type: Literal["workflow_changed"] = "workflow_changed"


@dataclass(frozen=True)
class WorkflowsListed:
    """Files appeared in or went from the workflows folder outside the server (copied in,
    deleted in a file manager): list it again (GET /api/workflows). Paths are relative to it."""

    added: list[str]
    removed: list[str]
    type: Literal["workflows_listed"] = "workflows_listed"


@dataclass(frozen=True)
class Error:
    """The reply to a message that could not be handled; `ref` echoes the message's `ref`.
    `problems` lists what is wrong with a workflow that a `run` could not start."""

    code: ErrorCode
    message: str
    ref: str | None = None
    problems: list[Problem] = field(default_factory=list)
    type: Literal["error"] = "error"


@dataclass(frozen=True)
class Pong:
    ref: str | None = None
    type: Literal["pong"] = "pong"


# -- the job queue -----------------------------------------------------------------------------
JobState = Literal[
    "queued", "running", "completed", "failed", "stopped", "cancelled", "interrupted"
]
"""`queued` waits its turn; `running` has a run; the rest have ended: its run `completed`,
`failed` or was `stopped`, it was `cancelled` before it ran, or the server ended while it ran
(`interrupted`)."""
JOB_ENDED: frozenset[str] = frozenset(
    {"completed", "failed", "stopped", "cancelled", "interrupted"}
)


@dataclass(frozen=True)
class JobRequest:
    """What a job runs, as `POST /api/jobs` takes it: the fields of `run` (a workflow path, or
    an inline `graph` run under that name) and `retry_interrupted`: a job the server was
    running when it ended goes back to the head of the queue instead of ending `interrupted`."""

    workflow: str
    mode: RunMode = "all"
    node: str | None = None
    graph: dict[str, Any] | None = None
    continue_on_error: bool = False
    overrides: dict[str, dict[str, Any]] | None = None
    inputs: dict[str, Any] | None = None
    """`{input name: value}` for the workflow's inputs, as `Run.inputs`."""
    retry_interrupted: bool = False


@dataclass(frozen=True)
class Job:
    """One job of the queue. `position` is its place among the queued jobs (0 runs next; null
    once it left the queue); `run_id` the run it became (the last one, when retried)."""

    id: str
    state: JobState
    request: JobRequest
    created: float
    """Unix time it was queued."""
    position: int | None = None
    run_id: str | None = None
    started: float | None = None
    ended: float | None = None
    error: str | None = None
    """Why it failed, was stopped or interrupted, or could not start (its workflow invalid)."""
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """The run's counts per node, once it ended."""
    errors: int = 0
    """Errors its run reported."""
    attempts: int = 0
    """Runs started for it (more than one when an interrupted job was retried)."""
    inline: bool = False
    """It runs an inline `graph` (the editor's unsaved edits). Lists of jobs (`GET /api/jobs`,
    the `jobs` message) leave the graph out of `request`; `GET /api/jobs/{id}` has it."""


@dataclass(frozen=True)
class JobList:
    """The queue: `queued` in the order they run, the `running` job, and the most recently
    ended jobs (newest first, at most a bounded number)."""

    queued: list[Job]
    running: Job | None
    finished: list[Job]


@dataclass(frozen=True)
class JobWait:
    """`GET /api/jobs/{id}?wait=SECONDS`: the job, and whether it `ended` before the time was up."""

    job: Job
    ended: bool


@dataclass(frozen=True)
class Jobs:
    """The queue, sent on connect and whenever it changes (a job added, moved, started, ended)."""

    queued: list[Job]
    running: Job | None
    finished: list[Job]
    type: Literal["jobs"] = "jobs"


ServerMessage = Union[  # noqa: UP007 -- a runtime Union that `decode` can take apart
    Hello,
    Snapshot,
    RunStarted,
    NodePlan,
    NodeStarted,
    NodeProgress,
    NodeLog,
    NodeOutput,
    NodeMetrics,
    NodeError,
    NodeFinished,
    RunPaused,
    RunResumed,
    RunFinished,
    Prompt,
    PromptAnswered,
    CatalogChanged,
    CacheCleared,
    WorkflowsChanged,
    WorkflowChanged,
    WorkflowsListed,
    Error,
    Pong,
    Jobs,
]


# -- client -> server --------------------------------------------------------------------------
@dataclass(frozen=True)
class Ping:
    ref: str | None = None
    type: Literal["ping"] = "ping"


ClientMessage = Ping
"""The websocket takes `ping` only: runs are started and controlled over HTTP."""
MOVED_TO_HTTP: dict[str, str] = {
    "run": "POST /api/runs",
    "pause": "POST /api/runs/current/pause",
    "resume": "POST /api/runs/current/resume",
    "step": "POST /api/runs/current/step",
    "stop": "POST /api/runs/current/stop",
    "answer": "POST /api/prompts/{prompt_id}",
    "clear": "POST /api/cache/clear",
}
"""Commands the websocket once took, and the HTTP route that does each."""


# -- HTTP payloads -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """The body of POST /api/runs (and of a job, POST /api/jobs): run `workflow` (a path
    under the workflows folder). `ref` and `type` are accepted and ignored.

    `graph` is the editor's unsaved workflow document, run instead of the file's content
    (its cache is still the file's). `node` is required for `until` and optional for `step`.
    `continue_on_error`: a node that fails on a dict reports it and the run goes on (as
    `graphbook run --continue-on-error`); by default the first error ends the run.
    `overrides`: `{node id or unique title: {parameter: value}}` set for this run only (as
    `graphbook run --set`), checked as the file's values are; the run record keeps them.
    `inputs`: `{input name: value}` for the workflow's inputs (as `graphbook run --input`),
    turned into overrides; one parameter given different values by both is refused.
    """

    workflow: str
    mode: RunMode = "all"
    node: str | None = None
    graph: dict[str, Any] | None = None
    continue_on_error: bool = False
    overrides: dict[str, dict[str, Any]] | None = None
    inputs: dict[str, Any] | None = None
    ref: str | None = None
    type: Literal["run"] = "run"


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
    item: Any


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


@dataclass(frozen=True)
class ErrorReply:
    """Every HTTP error response: `{"error": {"code", "message", "problems"}}`."""

    error: ErrorBody


# -- encode and decode -------------------------------------------------------------------------
T = TypeVar("T")


def _message_types(union: Any) -> dict[str, type[Any]]:
    return {cls.__dataclass_fields__["type"].default: cls for cls in get_args(union)}


SERVER_TYPES: dict[str, type[Any]] = _message_types(ServerMessage)
CLIENT_TYPES: dict[str, type[Any]] = {"ping": Ping}


def to_json(value: Any, leaf: Callable[[Any], Any] | None = None) -> Any:
    """A dataclass (or anything holding them) as plain JSON data; non-finite floats as text.
    `leaf` turns what JSON cannot hold (a tensor, an image) into what it can (`run --json`
    gives the engine's preview); without it such a value is left for `json.dumps` to refuse.
    Messages' and events' use of the one walk (graphbook/plain.py)."""
    return plain(value, _fields_of if leaf is None else partial(_message_part, leaf), str)


def _fields_of(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    return value


def _message_part(leaf: Callable[[Any], Any], value: Any) -> Any:
    as_fields = _fields_of(value)
    if as_fields is not value or isinstance(value, float | Mapping | list | tuple):
        return as_fields
    return leaf(value)


def encode(message: Any) -> str:
    """One message (or HTTP payload) as JSON text that UTF-8 can encode (lone surrogates in
    its strings escaped: graphbook/text.py)."""
    return encodable_json(json.dumps(to_json(message), ensure_ascii=False, allow_nan=False))


def decode_client(text: str | bytes) -> ClientMessage:
    """A client message from JSON text; raises ProtocolError saying what is wrong."""
    return typing.cast(ClientMessage, decode(text, CLIENT_TYPES, MOVED_TO_HTTP))


def decode_server(text: str | bytes) -> ServerMessage:
    """A server message from JSON text (clients and tests use this)."""
    return typing.cast(ServerMessage, decode(text, SERVER_TYPES))


def decode(
    text: str | bytes, types_by_name: dict[str, type[Any]], moved: Mapping[str, str] = {}
) -> Any:
    """A message of one of `types_by_name`; one of `moved` is refused naming the route that
    does what it asked."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError("bad_json", f"a message must be JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", f"a message is a JSON object, not {_kind(data)}")
    name = data.get("type")
    cls = types_by_name.get(name) if isinstance(name, str) else None
    if cls is None:
        known = ", ".join(sorted(types_by_name))
        if isinstance(name, str) and name in moved:
            raise ProtocolError(
                "unknown_type",
                f"the websocket no longer takes {name!r}: use {moved[name]} (HTTP); "
                f"the websocket takes: {known}",
            )
        raise ProtocolError("unknown_type", f"unknown message type {name!r}; known: {known}")
    return from_json(cls, data, str(name))


def from_json(cls: type[T], data: Any, where: str = "") -> T:
    """Build dataclass `cls` from JSON data, checking every field's type."""
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", f"{where or cls.__name__}: expected an object")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            values[f.name] = _check(hints[f.name], data[f.name], f"{where}.{f.name}")
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ProtocolError("bad_message", f"{where}: missing field {f.name!r}")
    return cls(**values)


def _check(hint: Any, value: Any, where: str) -> Any:
    origin = get_origin(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        return _check_union(get_args(hint), value, where)
    if origin is Literal:
        if value not in get_args(hint):
            allowed = ", ".join(map(repr, get_args(hint)))
            raise ProtocolError("bad_message", f"{where}: expected one of {allowed}, got {value!r}")
        return value
    if origin is list:
        items = _expect(value, list, "a list", where)
        return [_check(get_args(hint)[0], v, f"{where}[{i}]") for i, v in enumerate(items)]
    if origin is dict:
        mapping = _expect(value, dict, "an object", where)
        return {k: _check(get_args(hint)[1], v, f"{where}.{k}") for k, v in mapping.items()}
    if is_dataclass(hint):
        return from_json(typing.cast(type[Any], hint), value, where)
    return _check_scalar(hint, value, where)


def _check_union(options: tuple[Any, ...], value: Any, where: str) -> Any:
    if value is None and type(None) in options:
        return None
    errors = []
    for option in (o for o in options if o is not type(None)):
        try:
            return _check(option, value, where)
        except ProtocolError as exc:
            errors.append(exc.message)
    raise ProtocolError("bad_message", errors[0] if errors else f"{where}: must not be null")


_SCALARS: dict[Any, tuple[tuple[type, ...], str]] = {
    str: ((str,), "a string"),
    bool: ((bool,), "true or false"),
    int: ((int,), "a whole number"),
    float: ((int, float), "a number"),
}


def _check_scalar(hint: Any, value: Any, where: str) -> Any:
    accepted, words = _SCALARS.get(hint, ((object,), "a value"))
    if isinstance(value, bool) and hint is not bool:
        accepted = ()
    if not isinstance(value, accepted):
        raise ProtocolError("bad_message", f"{where}: expected {words}, got {_kind(value)}")
    return value


def _expect(value: Any, kind: type[T], words: str, where: str) -> T:
    if not isinstance(value, kind):
        raise ProtocolError("bad_message", f"{where}: expected {words}, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {list: "a list", dict: "an object", str: "a string", type(None): "null", bool: "a bool"}
    return names.get(type(value), type(value).__name__)
