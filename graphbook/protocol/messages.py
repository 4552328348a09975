"""The websocket's messages in both directions: what the server sends (the run events of
graphbook.events, and the rest, defined here) and the one a client sends (`ping`), with the
decoders of each direction's set."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args

from graphbook.errors import LoadFailure, Problem
from graphbook.events import (
    NodeError,
    NodeFinished,
    NodeLog,
    NodeMetrics,
    NodeOutput,
    NodePlan,
    NodeProgress,
    NodeStarted,
    Prompt,
    PromptAnswered,
    RunFinished,
    RunPaused,
    RunResumed,
    RunStarted,
)
from graphbook.protocol.codec import ErrorCode, decode
from graphbook.protocol.jobs import Jobs
from graphbook.protocol.snapshot import RunSnapshot

VERSION = 1
"""Bumped when a message or field changes incompatibly."""

WorkflowAction = Literal["saved", "deleted", "renamed"]


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


def _message_types(union: Any) -> dict[str, type[Any]]:
    return {cls.__dataclass_fields__["type"].default: cls for cls in get_args(union)}


SERVER_TYPES: dict[str, type[Any]] = _message_types(ServerMessage)
CLIENT_TYPES: dict[str, type[Any]] = {"ping": Ping}


def decode_client(text: str | bytes) -> ClientMessage:
    """A client message from JSON text; raises ProtocolError saying what is wrong."""
    return typing.cast(ClientMessage, decode(text, CLIENT_TYPES, MOVED_TO_HTTP))


def decode_server(text: str | bytes) -> ServerMessage:
    """A server message from JSON text (clients and tests use this)."""
    return typing.cast(ServerMessage, decode(text, SERVER_TYPES))
