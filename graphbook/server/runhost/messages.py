"""The messages between the server and its run host (NOTE [ Run host ] in parent.py): one frozen
dataclass a kind, pickled over the pipe and dispatched by type on either side.

To the host: its `HostConfig` first, then `RunOrder`s, run controls (`Pause` ... `Stop`),
`Answer`s to prompts, `Call`s (a `Request` with the number its reply names) and `Close`. From
the host: `Ready`, a run's `RunEvent`s (its `RunOutputs` before the last), then `RunCrashed`
(if it ended abnormally) and `RunEnded`, and a `Replied` or `Refused` for each call. Images the
run's previews show stay in the host until someone looks (`ReadImage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from graphbook import protocol as p
from graphbook.engine.executor import Backend
from graphbook.events import Event, PoolStats
from graphbook.previews import Preview
from graphbook.server.gallery import GalleryQuery
from graphbook.workflow import Workflow, WorkflowOutput

R = TypeVar("R")


class Message:
    """Pickled as its class and its fields' values, in order: a frozen dataclass's own pickling
    (a dict of its fields, each set again through object.__setattr__) costs a third more per
    message, and a run sends one for each of its events."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type[Message], tuple[Any, ...]]:
        return type(self), tuple(self.__dict__.values())


# -- what a host runs with -------------------------------------------------------------------
@dataclass(frozen=True)
class HostConfig(Message):
    nodes: Path
    roots: dict[str, Path]
    workers: int
    cache_budget: int
    lost: frozenset[str] = frozenset()
    """Workflows whose cached outputs a host before this one held when it was ended."""
    backend: Backend = "local"
    """Where the pool works: worker processes, or Ray actors (the host is then Ray's driver,
    joining the address given: the server's local Ray, or a cluster)."""
    thumb_secret: bytes | None = None
    """The server's key for thumbnail URLs (thumbnails.py), so previews made here link them."""
    skip: frozenset[str] = frozenset()
    """Node files not to import: those the server's catalog found failing (NOTE [ Node files
    at import ]: one may end or freeze the process that imports it)."""


@dataclass(frozen=True)
class KeepResults(Message):
    """An app's run: the outputs it shows, kept in `folder` as it ends (server/results.py)."""

    folder: Path
    outputs: dict[str, WorkflowOutput]
    files: dict[str, list[str]]
    """The files and folders each node writes (in `folder`: the run placed them there)."""


@dataclass(frozen=True)
class RunOrder(Message):
    run_id: str
    request: p.RunRequest
    """The run's request as the server checked it (its `workflow` the file's name: the cache
    the run uses; its `graph` left out: `workflow` below is what runs)."""
    workflow: Workflow
    """The workflow as it runs (components flattened, overrides and inputs set), checked."""
    skip: frozenset[str] = frozenset()
    """Node files not to import (HostConfig.skip), as the catalog knows them now."""
    keep: KeepResults | None = None
    """An app's run: its results, kept as it ends."""


# -- to the host, without a reply --------------------------------------------------------------
@dataclass(frozen=True)
class Pause(Message):
    run_id: str


@dataclass(frozen=True)
class Resume(Message):
    run_id: str


@dataclass(frozen=True)
class Step(Message):
    run_id: str
    node: str | None
    """The node to step, or None for the one the executor picks."""


@dataclass(frozen=True)
class Stop(Message):
    run_id: str


RunControlMessage = Pause | Resume | Step | Stop


@dataclass(frozen=True)
class Answer(Message):
    """A client's answer to the prompt of node `node_id`."""

    node_id: str
    answer: Any


@dataclass(frozen=True)
class Close(Message):
    """End: stop the run, close the pool, exit."""


# -- requests, each answered by a reply of type R ----------------------------------------------
@dataclass(frozen=True)
class Request(Message, Generic[R]):
    """A question for the host whose answer is an R."""


@dataclass(frozen=True)
class CacheUsage(Message):
    used: int
    """Bytes."""
    entries: int


@dataclass(frozen=True)
class OutputShown(Message):
    count: int
    """How many dicts the node handed on there."""
    shown: Preview
    """The full preview of the dict asked for; None if there is no such dict."""


@dataclass(frozen=True)
class ReadCacheUsage(Request[CacheUsage]):
    pass


@dataclass(frozen=True)
class SetCacheBudget(Request[None]):
    budget: int


@dataclass(frozen=True)
class RenameCached(Request[None]):
    old: str
    new: str


@dataclass(frozen=True)
class ForgetCached(Request[None]):
    name: str


@dataclass(frozen=True)
class ClearCached(Request[list[str]]):
    """Drop a workflow's cached outputs (of `node` and downstream, or all); the ids dropped."""

    name: str
    node: str | None


@dataclass(frozen=True)
class ReadOutput(Request[OutputShown | None]):
    """Dict #index a node handed on at `output`; None if none are kept."""

    name: str
    node: str
    output: str
    index: int
    brief: bool = False
    """Previewed as the live view previews (long texts and lists cut), not in full."""


@dataclass(frozen=True)
class ReadGallery(Request[p.GalleryPage | None]):
    """A page of the gallery over a node's dicts; None if none are kept."""

    name: str
    node: str
    output: str
    query: GalleryQuery


@dataclass(frozen=True)
class ReadPoolStats(Request[PoolStats | None]):
    pass


@dataclass(frozen=True)
class ReadImage(Request[bytes | None]):
    """An image a run made, as PNG bytes (encoded the first time it is asked for); None if
    the host no longer keeps it."""

    media_id: str


@dataclass(frozen=True)
class Call(Message):
    call: int
    """The number the reply names."""
    request: Request[Any]


ToHost = RunOrder | RunControlMessage | Answer | Call | Close
"""What the server sends a host once it has its HostConfig."""


# -- from the host -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Ready(Message):
    """The host has loaded its registry and pool."""


@dataclass(frozen=True)
class Replied(Message):
    call: int
    value: Any


@dataclass(frozen=True)
class Refused(Message):
    """The request raised in the host: its exception, in words."""

    call: int
    error: str


@dataclass(frozen=True)
class RunEvent(Message):
    run_id: str
    event: Event | None
    """The event as it is, when the run history records it (else None)."""
    messages: Sequence[p.ServerMessage]
    """What clients get for it (logs limited, values previewed)."""


KeptOutputs = dict[str, dict[str, dict[str, Any]]]
"""`{node: {output: {"count": N, "items": [preview, ...]}}}`: the first dicts of each output of
a run's nodes, previewed, kept with the run in the store (`RunOutputs`)."""


@dataclass(frozen=True)
class RunOutputs(Message):
    """Previews of the first dicts each node of the run handed on (sent before its end, so
    the run's record has them once it is seen ended)."""

    run_id: str
    outputs: KeptOutputs


@dataclass(frozen=True)
class RunCrashed(Message):
    """The run ended abnormally (a bug, or a graph that no longer builds in the host)."""

    run_id: str
    error: str


@dataclass(frozen=True)
class RunEnded(Message):
    """The run is over in the host (after its last RunEvent, or RunCrashed)."""

    run_id: str


FromHost = Ready | Replied | Refused | RunEvent | RunOutputs | RunCrashed | RunEnded


@dataclass(frozen=True)
class HostExited(Message):
    """Said by the server's reader, not the host: the host's pipe closed, its process ended."""

    code: int | None


Report = RunEvent | RunOutputs | RunCrashed | RunEnded | HostExited
"""What the run manager hears from a host, in order."""
