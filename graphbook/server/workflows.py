"""Workflow files under the workflows folder: list, read, write (atomic), rename, delete."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from graphbook import protocol as p
from graphbook.errors import Problem, WorkflowError, WorkflowFormatError
from graphbook.formats.graphbook013 import is_graphbook013
from graphbook.graph import build_graph
from graphbook.inputs import input_schema
from graphbook.registry import Registry
from graphbook.server.errors import ServerError, conflict, not_found
from graphbook.server.paths import Root
from graphbook.workflow import TEMPORARY, Workflow, atomic_write

logger = logging.getLogger(__name__)
SUFFIX = ".json"


class WorkflowFiles:
    """The workflows folder, with every path checked to stay inside it."""

    def __init__(self, folder: Path, registry: Registry, library: Path | None = None) -> None:
        self.root = Root(folder)
        self.registry = registry
        self.library = library
        """The components folder the workflows' library components are read from."""
        self.lock = asyncio.Lock()
        """Held while writing, so that `If-Match` checks and renames do not interleave."""
        removed = remove_temporaries(self.root.folder)
        if removed:
            logger.info("removed %d temporary file(s) left by interrupted saves", removed)

    def name(self, relative: str) -> str:
        """The canonical name of a workflow file (its path relative to the folder)."""
        path = self.root.resolve(relative)
        if path.suffix != SUFFIX:
            raise ServerError(400, "bad_path", f"{relative!r}: a workflow file ends in {SUFFIX}")
        return self.root.relative(path)

    def path(self, relative: str) -> Path:
        return self.root.folder / self.name(relative)

    def listing(self) -> p.WorkflowList:
        """The workflow files: every `.json` file, except under hidden folders and dunder
        folders (`__pycache__`: with 0.13's --root_dir layout the node folder lies inside the
        workflows folder, and its node index is a JSON file there); a symlink leading outside
        the folder is listed as refused."""
        return listing(self.root)

    def read_bytes(self, relative: str) -> bytes:
        path = self.path(relative)
        if not path.is_file():
            raise not_found(f"no workflow file {relative!r}; GET /api/workflows lists them")
        return path.read_bytes()

    def load(self, relative: str) -> Workflow:
        workflow = parse(self.read_bytes(relative), relative, self.path(relative))[0]
        workflow.library = self.library
        return workflow

    def document(self, relative: str, raw: bytes | None = None) -> p.WorkflowDocument:
        raw = self.read_bytes(relative) if raw is None else raw
        workflow, source = parse(raw, relative, self.path(relative))
        workflow.library = self.library
        problems = self.problems(workflow) + workflow.notes
        name = self.name(relative)
        return p.WorkflowDocument(name, digest(raw), source, workflow.to_json(), problems)

    def inputs(self, relative: str) -> p.WorkflowInputs:
        """The workflow's inputs as a JSON Schema; 422 naming the inputs that are wrong."""
        workflow = self.load(relative)
        try:
            schema = input_schema(workflow, self.registry)
        except WorkflowError as exc:
            raise ServerError(422, "invalid_workflow", str(exc), exc.problems) from None
        return p.WorkflowInputs(self.name(relative), schema)

    def problems(self, workflow: Workflow) -> list[Problem]:
        try:
            build_graph(workflow, self.registry)
        except WorkflowError as exc:
            return exc.problems
        return []

    def write(self, relative: str, body: Any, if_match: str | None) -> p.WorkflowDocument:
        path = self.path(relative)
        workflow = from_body(body, relative)
        text = dump(workflow, relative)
        if if_match is not None:
            current = digest(path.read_bytes()) if path.is_file() else ""
            if current != if_match.strip('"'):
                raise conflict(f"{relative!r} changed since it was read; reload it first")
        atomic_write(path, text)
        return self.document(relative, text.encode())

    def rename(self, relative: str, new: str) -> p.WorkflowDocument:
        source, target = self.path(relative), self.path(new)
        if not source.is_file():
            raise not_found(f"no workflow file {relative!r}; GET /api/workflows lists them")
        if target.exists():
            raise conflict(f"{new!r} already exists; delete it or choose another name")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, target)
        return self.document(new)

    def delete(self, relative: str) -> None:
        path = self.path(relative)
        if not path.is_file():
            raise not_found(f"no workflow file {relative!r}; GET /api/workflows lists them")
        path.unlink()


def listing(root: Root) -> p.WorkflowList:
    """The `.json` files under `root`, but not under hidden or dunder folders; a symlink
    leading outside the folder is listed as refused."""
    files, refused = [], []
    for path in sorted(root.folder.rglob(f"*{SUFFIX}")):
        relative = path.relative_to(root.folder)
        if any(part.startswith((".", "__")) for part in relative.parts):
            continue
        if not root.contains(path):
            reason = "a symlink that leads outside the folder, or loops"
            refused.append(p.RefusedFile(relative.as_posix(), reason))
        elif path.is_file():
            stat = path.stat()
            files.append(p.WorkflowFile(root.relative(path), stat.st_size, stat.st_mtime))
    return p.WorkflowList(files, refused)


def remove_temporaries(folder: Path) -> int:
    """Delete the hidden temporary files of saves that were killed midway (`.NAME.XXXX.tmp`);
    returns how many there were."""
    removed = 0
    for path in folder.rglob(".*.tmp"):
        if TEMPORARY.fullmatch(path.name) and path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
    return removed


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def parse(raw: bytes, name: str, path: Path | None = None) -> tuple[Workflow, Any]:
    """The workflow in a file's bytes (a Graphbook 0.13 file's docs are read beside `path`)."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ServerError(422, "invalid_workflow", f"{name} is not valid JSON: {exc}") from None
    return from_body(data, name, status=422, path=path), source_format(data)


def source_format(data: Any) -> Any:
    return "graphbook0" if isinstance(data, dict) and is_graphbook013(data) else "graphbook"


def from_body(data: Any, name: str, status: int = 400, path: Path | None = None) -> Workflow:
    try:
        return Workflow.from_json(data, name, path)
    except WorkflowFormatError as exc:
        raise ServerError(status, "invalid_workflow", str(exc)) from None
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        message = f"{name}: not a workflow ({type(exc).__name__}: {exc})"
        raise ServerError(status, "invalid_workflow", message) from None


def dump(workflow: Workflow, name: str) -> str:
    try:
        return workflow.dumps()
    except WorkflowFormatError as exc:
        raise ServerError(400, "invalid_workflow", str(exc)) from None
