"""Apps: every workflow file as a form over its inputs (docs/apps.md). What an app's page asks
for and shows (`info`), the values a run is refused for, by field (`field_problems`: the
inputs' own checks, graphbook/inputs.py, and paths kept inside the server's roots), the
pickers' folders (`browse`) and uploads kept in the media root (`upload`)."""

from __future__ import annotations

import io
import re
import uuid
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

from graphbook import protocol as p
from graphbook.errors import WorkflowError
from graphbook.inputs import input_schema, input_value_problems
from graphbook.outputs import shown_outputs
from graphbook.registry import Registry
from graphbook.server.errors import ServerError, bad_message, not_found
from graphbook.server.media import IMAGE_SUFFIXES
from graphbook.server.paths import Root
from graphbook.server.settings import ServerSettings
from graphbook.server.workflows import WorkflowFiles
from graphbook.workflow import Workflow

UPLOADS = "uploads"
"""The folder (in the media root, else the data folder) uploads are kept in, one folder each."""
PICKED = ("file", "folder", "image")
_UNSAFE = re.compile(r"[^\w.-]+")


class Apps:
    """The workflows folder's files as apps, over the server's registry and roots."""

    def __init__(self, settings: ServerSettings, registry: Registry, files: WorkflowFiles) -> None:
        self.settings = settings
        self.registry = registry
        self.files = files
        self.roots = picker_roots(settings)

    # -- what an app is ------------------------------------------------------------------------
    def listing(self) -> p.AppList:
        apps = []
        for file in self.files.listing().files:
            try:
                info = self.info(file.path)
            except ServerError:
                continue  # not a workflow: the editor's file list shows why
            inputs = list(info.schema.get("properties", {}))
            outputs = [o.name for o in info.outputs]
            problems = len(info.problems)
            apps.append(
                p.AppSummary(info.workflow, info.title, info.doc, inputs, outputs, problems)
            )
        return p.AppList(apps, self.settings.apps_only)

    def info(self, relative: str, workflow: Workflow | None = None) -> p.AppInfo:
        """The app of a workflow file (or of `workflow`, its unsaved edits)."""
        name = self.files.name(relative)
        workflow = workflow or self.files.load(name)
        problems = self.files.problems(workflow)
        try:
            schema = input_schema(workflow, self.registry)
        except WorkflowError:
            schema = {"type": "object", "properties": {}, "required": []}
        outputs = [
            p.AppOutput(key, shown.node, shown.output, shown.kind, shown.description)
            for key, shown in shown_outputs(workflow, self.registry).items()
        ]
        return p.AppInfo(
            name, title(name), workflow.doc, schema, outputs, problems,
            self.settings.apps_only, list(self.roots), self.settings.max_upload,
        )  # fmt: skip

    # -- values for a run -------------------------------------------------------------------------
    def field_problems(self, relative: str, values: Mapping[str, Any]) -> dict[str, str]:
        """What is wrong with each value for the app's inputs, by input name: its type,
        bounds and choices (graphbook/inputs.py, as every run checks them), a required one
        left out, and for a file, folder or image input, a path outside the server's roots
        or that is not there (its default, the workflow's own, is taken as it is)."""
        workflow = self.files.load(relative)
        found = {
            name: beside(name, problem.message) + (f" ({problem.fix})" if problem.fix else "")
            for name, problem in input_value_problems(workflow, self.registry, values).items()
        }
        try:
            properties = input_schema(workflow, self.registry)["properties"]
        except WorkflowError:
            return found
        for name, value in values.items():
            prop = properties.get(name, {})
            picker = _picker(prop)
            if name not in found and picker is not None and value != prop.get("default"):
                why = self.path_problem(value, picker)
                if why is not None:
                    found[name] = why
        return found

    def path_problem(self, value: Any, picker: dict[str, Any]) -> str | None:
        """Why a picked path cannot be used: outside the roots, missing, of the wrong kind."""
        for path in value if isinstance(value, list) else [value]:
            if not isinstance(path, str) or not path:
                continue
            why = self._one_path_problem(path, picker)
            if why is not None:
                return why
        return None

    def _one_path_problem(self, text: str, picker: dict[str, Any]) -> str | None:
        kind, accept = picker["format"], picker.get("x-accept", [])
        path = Path(text).expanduser()
        if not any(Root(folder).contains(path) for folder in self.settings.roots().values()):
            return f"{text!r} lies outside the server's folders; pick one from {self._named()}"
        if kind == "folder":
            return None if path.is_dir() else f"there is no folder {text!r}"
        if not path.is_file():
            return f"there is no file {text!r}"
        suffixes = accept or (list(IMAGE_SUFFIXES) if kind == "image" else [])
        if suffixes and path.suffix.lower() not in suffixes:
            return f"{path.name!r} is not a {' or '.join(suffixes)} file"
        return None

    def _named(self) -> str:
        return ", ".join(self.roots)

    # -- pickers and uploads ---------------------------------------------------------------------
    def browse(self, root: str, relative: str, kind: str, accept: list[str]) -> p.BrowseListing:
        """A folder under one of the pickers' roots: its folders, and the files a `kind`
        picker takes (an image picker: images; `accept`: those suffixes)."""
        folder = self._root(root)
        path = folder.resolve(relative) if relative else folder.folder
        if not path.is_dir():
            raise not_found(f"no folder {relative!r} under {root}")
        entries = []
        for child in sorted(path.iterdir(), key=lambda c: (not c.is_dir(), c.name.lower())):
            if child.name.startswith(".") or not folder.contains(child):
                continue
            if child.is_dir():
                entries.append(p.BrowseEntry(child.name, True))
            elif kind != "folder" and _takes(child, kind, accept):
                entries.append(p.BrowseEntry(child.name, False, child.stat().st_size))
        shown = folder.relative(path) if relative else ""
        return p.BrowseListing(root, shown, str(path), entries, list(self.roots))

    def _root(self, name: str) -> Root:
        root = self.roots.get(name)
        if root is None:
            raise not_found(f"no folder {name!r} to pick from; the server's are: {self._named()}")
        return root

    def upload_rules(self, relative: str, input_name: str) -> dict[str, Any]:
        """What an upload for input `input_name` must be: the input's picker (a file or an
        image) and the suffixes it accepts."""
        workflow = self.files.load(relative)
        try:
            properties = input_schema(workflow, self.registry)["properties"]
        except WorkflowError as exc:
            raise ServerError(422, "invalid_workflow", str(exc), exc.problems) from None
        picker = _picker(properties.get(input_name, {}))
        if picker is None or picker["format"] == "folder":
            raise bad_message(f"input {input_name!r} does not take a file: nothing to upload to it")
        return picker

    def upload(self, rules: dict[str, Any], filename: str, data: bytes) -> p.Uploaded:
        """Keep an uploaded file (checked against `rules`) in a folder of its own under the
        uploads folder; its path is the value its input takes."""
        name = safe_name(filename)
        suffixes = rules.get("x-accept") or (
            list(IMAGE_SUFFIXES) if rules["format"] == "image" else []
        )
        if suffixes and PurePath(name).suffix.lower() not in suffixes:
            raise bad_message(f"{filename!r} is not a {' or '.join(suffixes)} file")
        if rules["format"] == "image":
            check_image(filename, data)
        target = self.uploads() / uuid.uuid4().hex[:12] / name
        target.parent.mkdir(parents=True)
        target.write_bytes(data)
        return p.Uploaded(str(target), name, len(data))

    def uploads(self) -> Path:
        media = self.settings.media
        return (media[0] if media else self.settings.data).resolve() / UPLOADS


def beside(name: str, message: str) -> str:
    """A problem's message as its field shows it: without naming the input it stands beside."""
    return re.sub(rf"^input {re.escape(repr(name))}(?: \(parameter '[^']*'\))?:? ", "", message)


def picker_roots(settings: ServerSettings) -> dict[str, Root]:
    """The folders the pickers browse: the media folders, the workflows and the data folder
    (not the node files: they are code)."""
    roots = settings.roots()
    order = [n for n in roots if n.startswith("media")] + ["workflows", "data"]
    return {name: Root(roots[name]) for name in order if name in roots}


def _picker(prop: Any) -> dict[str, Any] | None:
    """A schema property's picker (`format` file, folder, image), on a list's items too."""
    if not isinstance(prop, dict):
        return None
    shown = prop.get("items", prop) if prop.get("type") == "array" else prop
    return shown if isinstance(shown, dict) and shown.get("format") in PICKED else None


def _takes(path: Path, kind: str, accept: list[str]) -> bool:
    suffixes = accept or (list(IMAGE_SUFFIXES) if kind == "image" else [])
    return not suffixes or path.suffix.lower() in suffixes


def safe_name(filename: str) -> str:
    """An uploaded file's name as it is kept: its last part, letters, digits, `_.-` only."""
    name = _UNSAFE.sub("_", PurePath(filename.replace("\\", "/")).name).strip("._")
    return name[-100:] or "upload"


def check_image(filename: str, data: bytes) -> None:
    """Refuse an upload that is not an image PIL can read (call it in a thread)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.verify()
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as exc:
        raise bad_message(f"{filename!r} is not an image that can be read ({exc})") from None


def title(name: str) -> str:
    """A workflow file's name as an app's title: `sub/classify-folder.json` -> Classify folder."""
    words = re.sub(r"[-_]+", " ", PurePath(name).stem).strip()
    return words[:1].upper() + words[1:] if words else name
