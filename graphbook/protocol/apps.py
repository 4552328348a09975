"""Apps on the wire: a workflow as a form (its inputs' JSON Schema, the outputs it shows), the
runs an app made with their progress and results, and the pickers' and uploads' replies
(graphbook/server/routes/apps.py serves them; docs/apps.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from graphbook.errors import Problem
from graphbook.events import NodeState
from graphbook.protocol.jobs import Job
from graphbook.workflow_parts import OutputKind


@dataclass(frozen=True)
class AppOutput:
    """An output the app shows: the dicts `node` hands on at `output`, as `kind`."""

    name: str
    node: str
    output: str
    kind: OutputKind
    description: str = ""


@dataclass(frozen=True)
class AppSummary:
    workflow: str
    title: str
    doc: str
    inputs: list[str]
    outputs: list[str]
    problems: int
    """How many problems the workflow has (an app with problems cannot run)."""


@dataclass(frozen=True)
class AppList:
    """`GET /api/apps`: every workflow file as an app."""

    apps: list[AppSummary]
    apps_only: bool
    """The server serves apps only (`graphbook serve --apps`): graphs are read-only."""


@dataclass(frozen=True)
class AppInfo:
    """`GET /api/apps/{workflow}`: what the app's form asks for and what it shows."""

    workflow: str
    title: str
    doc: str
    schema: dict[str, Any]
    """The inputs' JSON Schema (graphbook/inputs.py): a property per input, with `minimum`,
    `maximum`, `enum`, `format` (file, folder, image) and `x-accept` where the input says."""
    outputs: list[AppOutput]
    problems: list[Problem] = field(default_factory=list)
    """What is wrong with the workflow; an app with problems is shown, not run."""
    apps_only: bool = False
    roots: list[str] = field(default_factory=list)
    """The folders the pickers browse, by name."""
    max_upload: int = 0
    """Bytes an upload may have."""


@dataclass(frozen=True)
class AppStage:
    """One node of a running app's run, as its progress shows it."""

    node_id: str
    title: str
    state: NodeState
    received: int = 0
    sent: int = 0
    """Dicts handed on, over all its outputs."""
    rate: float = 0.0


@dataclass(frozen=True)
class AppFile:
    """A file a run wrote (or a download of a result)."""

    name: str
    url: str
    size: int


@dataclass(frozen=True)
class AppResult:
    """One output of an app's run, as it ended: its dicts kept (`count`), and for a table its
    columns and downloads, for files the files, for text the texts."""

    name: str
    kind: OutputKind
    node: str
    output: str
    count: int
    description: str = ""
    note: str = ""
    """Why the output is missing or cut short (the node did not run, too many dicts)."""
    columns: list[str] = field(default_factory=list)
    downloads: list[AppFile] = field(default_factory=list)
    files: list[AppFile] = field(default_factory=list)
    text: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AppRun:
    """`GET /api/apps/runs/{job_id}`: a run an app asked for, as it is now: queued (its place
    in `job.position`), running (`stages`), or ended (`results`)."""

    job: Job
    app: str
    inputs: dict[str, Any]
    link: str
    """The page that shows this run (share it: it is behind the server's token)."""
    stages: list[AppStage] = field(default_factory=list)
    results: list[AppResult] = field(default_factory=list)


@dataclass(frozen=True)
class AppRunList:
    """`GET /api/apps/{workflow}/runs`: the runs the app made, newest first."""

    app: str
    runs: list[Job]


@dataclass(frozen=True)
class AppTablePage:
    """A page of a table result: rows (values in `columns`' order), sorted as asked."""

    columns: list[str]
    rows: list[list[Any]]
    total: int
    offset: int
    sort: str | None = None
    order: Literal["asc", "desc"] = "asc"


@dataclass(frozen=True)
class BrowseEntry:
    name: str
    folder: bool
    size: int = 0


@dataclass(frozen=True)
class BrowseListing:
    """`GET /api/apps/browse`: a folder under one of the server's roots."""

    root: str
    path: str
    """Relative to the root ("" for the root itself)."""
    absolute: str
    """What a picker sets the input to when this folder is chosen."""
    entries: list[BrowseEntry]
    roots: list[str]


@dataclass(frozen=True)
class Uploaded:
    """A file uploaded for an input: where it was kept (the value the input takes)."""

    path: str
    name: str
    size: int
