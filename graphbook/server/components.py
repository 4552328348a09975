"""Library components under the components folder (`components/` beside `workflows/`): list,
read, write (atomic, `If-Match`), delete; and their entries in the node catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphbook import protocol as p
from graphbook.components import ExposedParam, Library, exposed_params, from_json, version_of
from graphbook.errors import Problem, WorkflowError, WorkflowFormatError
from graphbook.graph import build_graph
from graphbook.registry import Registry
from graphbook.server.catalog import param_info
from graphbook.server.errors import ServerError, conflict, not_found
from graphbook.server.paths import Root
from graphbook.server.workflows import digest, listing
from graphbook.workflow import ComponentBody, ComponentRef, Workflow
from graphbook.workflow_codec import body_json

SUFFIX = ".json"
CATEGORY = "Components"


class ComponentFiles:
    """The components folder, with every path checked to stay inside it."""

    def __init__(self, folder: Path, registry: Registry) -> None:
        self.root = Root(folder)  # made by the first save
        self.library = Library(self.root.folder)
        self.registry = registry

    def name(self, relative: str) -> str:
        """A component's name: its path relative to the folder, without `.json`."""
        path = self.root.resolve(relative)
        if path.suffix != SUFFIX:
            raise ServerError(400, "bad_path", f"{relative!r}: a component file ends in {SUFFIX}")
        return self.root.relative(path)[: -len(SUFFIX)]

    def path(self, relative: str) -> Path:
        name = self.name(relative)
        try:
            return self.library.path(name)
        except WorkflowFormatError as exc:
            raise ServerError(400, "bad_path", str(exc)) from None

    def listing(self) -> p.WorkflowList:
        return listing(self.root)

    def document(self, relative: str, raw: bytes | None = None) -> p.ComponentDocument:
        path = self.path(relative)
        if raw is None:
            if not path.is_file():
                raise not_found(f"no component file {relative!r}")
            raw = path.read_bytes()
        name = self.name(relative)
        try:
            body = from_json(_json(raw, relative), relative)
        except WorkflowFormatError as exc:
            raise ServerError(422, "invalid_workflow", str(exc)) from None
        hash_ = digest(raw)
        return p.ComponentDocument(
            name + SUFFIX, name, hash_, version_of(raw), body_json(body), self.problems(name)
        )

    def problems(self, name: str) -> list[Problem]:
        """What is wrong inside the component: a workflow of it alone, checked."""
        workflow = Workflow()
        workflow.library = self.root.folder
        workflow.add(ComponentRef(name), id=name)
        try:
            build_graph(workflow, self.registry)
        except WorkflowError as exc:
            return [q for q in exc.problems if q.node_id is None or q.node_id.startswith(name)]
        return []

    def write(self, relative: str, body: Any, if_match: str | None) -> p.ComponentDocument:
        path = self.path(relative)
        try:
            component = from_json(body, relative)
        except WorkflowFormatError as exc:
            raise ServerError(400, "invalid_workflow", str(exc)) from None
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            message = f"{relative}: not a component ({type(exc).__name__}: {exc})"
            raise ServerError(400, "invalid_workflow", message) from None
        if if_match is not None:
            _check_unchanged(path, relative, if_match.strip('"'))
        self.library.save(self.name(relative), component)
        return self.document(relative, path.read_bytes())

    def delete(self, relative: str) -> None:
        path = self.path(relative)
        if not path.is_file():
            raise not_found(f"no component file {relative!r}")
        path.unlink()

    def infos(self) -> list[p.NodeInfo]:
        """Each library component as a node of the catalog (category Components); a file that
        does not read is left out (opening it says why)."""
        infos = []
        for name in self.library.names():
            try:
                body, version = self.library.load(name)
            except WorkflowFormatError:
                continue
            infos.append(self._info(name, body, version))
        return infos

    def _info(self, name: str, body: ComponentBody, version: str) -> p.NodeInfo:
        params = [self._param(exposed) for exposed in exposed_params(body, self.library)]
        return p.NodeInfo(
            f"components/{name}",
            "step" if body.inputs else "source",
            CATEGORY,
            sorted(body.inputs),
            sorted(body.outputs),
            params,
            body.doc or f"The library component `components/{name}{SUFFIX}`.",
            version,
            component=name,
        )

    def _param(self, exposed: ExposedParam) -> p.ParamInfo:
        kind = exposed.node.type
        spec = self.registry.get(kind).param(exposed.param) if kind in self.registry else None
        fields = spec.to_json() if spec is not None else {}
        default = exposed.value if exposed.value is not None else fields.get("default")
        fields = {
            "type": "string",
            "description": "",
            "required": False,
            **fields,
            "name": exposed.name,
        }
        return param_info(fields, default)


def _check_unchanged(path: Path, relative: str, tag: str) -> None:
    """Refuse (412) unless the file is still the one `tag` names: its hash or its version (a
    component's version is its hash's first 12 digits); "" names no file yet."""
    raw = path.read_bytes() if path.is_file() else None
    if raw is None and tag == "":
        return
    if raw is not None and tag in (digest(raw), version_of(raw)):
        return
    now = "it was deleted" if raw is None else f"it is now version {version_of(raw)}"
    if tag == "":
        now = "it exists already"
    raise conflict(
        f"components/{relative} changed since it was read ({now}); reload it, keep your edits "
        "as a copy in the workflow, or save over it"
    )


def _json(raw: bytes, name: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ServerError(422, "invalid_workflow", f"{name} is not valid JSON: {exc}") from None
