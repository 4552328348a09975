"""Workflows: building them in Python, and their files in the canonical JSON format (files in
Graphbook 0.13's format are read through graphbook/formats/graphbook013.py).

A workflow is data: nodes (id, type, parameter values by name, position) and edges from
(node, output) to (node, input), plus the groups drawn around nodes on the canvas, which do not
change how it runs, and its inputs: node parameters named so the workflow can be called like a
function (graphbook/inputs.py). The file is written with a stable order so it diffs well.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from graphbook.errors import Problem, WorkflowFormatError
from graphbook.formats import graphbook013
from graphbook.registry import spec_of
from graphbook.text import encodable_json

FORMAT = "graphbook.workflow"
VERSION = 1
DATA_INPUT = "in"
NodeMode = Literal["active", "bypass", "mute"]
"""`bypass`: the node does not run and its input passes through to its outputs; `mute`: it
does not run and nothing flows from it (graphbook/modes.py)."""
MODES: tuple[NodeMode, ...] = get_args(NodeMode)
NODE_COLORS = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "grey")
"""The colours a node may be given on the canvas (web/src/workflow/format.ts has the same list)."""
INPUT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
"""What a workflow input may be called: a word (it is a JSON Schema property and `--input NAME`)."""
COMPONENT = "Component"
"""The type of a component node: its inside is in the node's `component` field."""
GROUP_SIZE = (300.0, 200.0)
"""A group's size when the file gives none, as the browser draws it."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Node:
    """One node of a workflow: which kind it is and the parameter values set on it."""

    id: str
    type: str
    params: Mapping[str, Any] = field(default_factory=dict)
    position: tuple[float, float] = (0.0, 0.0)
    label: str = ""
    module: str = ""
    """The Python module that defines the node kind, when a file says so (Graphbook 0.13's
    `data.module`, e.g. a plugin's); it is imported if no node folder defines the kind."""
    width: float | None = None
    """The node's width on the canvas when it was resized there; running ignores it."""
    collapsed: bool = False
    """Folded on the canvas to its title and ports; running ignores it."""
    mode: NodeMode = "active"
    """Whether it runs: `bypass` and `mute` leave it out of the run (graphbook/modes.py)."""
    color: str = ""
    """The node's colour on the canvas, one of NODE_COLORS ("" for none); running ignores it."""
    component: ComponentBody | ComponentRef | None = None
    """A component node's inside (type COMPONENT): its own nodes and edges, or a reference to a
    library component (graphbook/components.py expands it before a run)."""


@dataclass(frozen=True)
class Edge:
    """A wire from a node's output to another node's input (`in`) or parameter."""

    source: str
    output: str
    target: str
    input: str = DATA_INPUT
    points: tuple[tuple[float, float], ...] = field(default=(), compare=False)
    """Reroute points the wire passes through on the canvas, in order; running ignores them,
    and two edges between the same ends are one edge whatever their points."""

    def sort_key(self) -> tuple[Any, ...]:
        return (natural(self.source), self.output, natural(self.target), self.input)


@dataclass(frozen=True)
class Group:
    """A labelled box around nodes on the canvas; it only arranges them, never changes a run."""

    id: str
    label: str = ""
    nodes: tuple[str, ...] = ()
    position: tuple[float, float] = (0.0, 0.0)
    size: tuple[float, float] = GROUP_SIZE


@dataclass(frozen=True)
class WorkflowInput:
    """A node parameter the workflow takes as an input: its value can be given for a run by the
    input's name (graphbook/inputs.py); the value saved on the node is the default."""

    node: str
    param: str
    description: str = ""


@dataclass(frozen=True)
class Comment:
    """A note on the canvas (Markdown text in a box); running ignores it."""

    id: str
    text: str = ""
    position: tuple[float, float] = (0.0, 0.0)
    width: float = 240.0


@dataclass(frozen=True)
class PortMap:
    """Where a component's exposed input, output or parameter leads inside it: an inner node
    and one of its ports (an input: `in` or a parameter wired from outside; an output; or a
    parameter whose value is set on the component node)."""

    node: str
    port: str


@dataclass(frozen=True)
class ComponentBody:
    """A component's inside: its nodes and edges, and the ports and parameters that cross its
    edge, each by the outer name the component node shows."""

    nodes: Mapping[str, Node]
    edges: tuple[Edge, ...] = ()
    inputs: Mapping[str, PortMap] = field(default_factory=dict)
    outputs: Mapping[str, PortMap] = field(default_factory=dict)
    params: Mapping[str, PortMap] = field(default_factory=dict)
    doc: str = ""
    code: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Node classes/functions its nodes were added by object (as Workflow.code); never in a
    file: a workflow the component is added to registers them when it runs."""

    def to_json(self) -> dict[str, Any]:
        """The body as a file holds it (inside a node's `component`, or a library file)."""
        data: dict[str, Any] = {"doc": self.doc} if self.doc else {}
        data["inputs"] = _ports_json(self.inputs, "input")
        data["outputs"] = _ports_json(self.outputs, "output")
        data["params"] = _ports_json(self.params, "param")
        nodes = sorted(self.nodes.values(), key=lambda n: natural(n.id))
        data["nodes"] = [_node_json(n) for n in nodes]
        data["edges"] = [_edge_json(e) for e in sorted(set(self.edges), key=Edge.sort_key)]
        return data


@dataclass(frozen=True)
class ComponentRef:
    """A library component (`components/NAME.json`) by name, with the version (its content's
    digest) the node was made from: the library's current file is what runs."""

    library: str
    version: str = ""


class Workflow:
    """A graph of nodes to run; build it in code, or load it from a file."""

    def __init__(self, doc: str = "") -> None:
        self.doc = doc
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self.groups: dict[str, Group] = {}
        self.comments: dict[str, Comment] = {}
        self.inputs: dict[str, WorkflowInput] = {}
        """Input name -> the node parameter it sets (checked when the graph is built)."""
        self.code: dict[str, Any] = {}
        """Node classes/functions added by object, registered when the workflow runs."""
        self.notes: list[Problem] = []
        """What reading the file left out or could not carry over (of a Graphbook 0.13 file),
        to tell the person; never written to a file."""
        self.library: Path | None = None
        """The components folder its library components are read from (`components/` beside
        the workflows folder); never written to a file."""

    # -- building -------------------------------------------------------------------------
    def add(self, kind: Any, id: str | None = None, **params: Any) -> NodeRef:
        """Add a node of `kind` (a registered name, a node class or decorated function, or a
        component: a ComponentBody or a library ComponentRef, see graphbook/components.py).

        A parameter given another node (`model=model_ref`) is wired from that resource.
        """
        node_id = id or self._new_id()
        if node_id in self.nodes or node_id in self.groups:
            raise ValueError(f"a node with id {node_id!r} already exists; choose another id")
        values = {k: v for k, v in params.items() if not isinstance(v, NodeRef)}
        if isinstance(kind, ComponentBody | ComponentRef):
            self.nodes[node_id] = Node(node_id, COMPONENT, values, component=kind)
            self.code.update(kind.code if isinstance(kind, ComponentBody) else {})
        else:
            type_name = kind if isinstance(kind, str) else self._remember(kind)
            self.nodes[node_id] = Node(node_id, type_name, values)
        for name, value in params.items():
            if isinstance(value, NodeRef):
                self.edges.append(Edge(value.id, "resource", node_id, name))
        return NodeRef(self, node_id)

    def connect(self, source: NodeRef | Port, target: NodeRef | Port) -> None:
        """Wire `source` (a node, or `node["output"]`) to `target` (its data input by default)."""
        src = source if isinstance(source, Port) else Port(source.workflow, source.id, "out")
        dst = target if isinstance(target, Port) else Port(target.workflow, target.id, DATA_INPUT)
        self.edges.append(Edge(src.node, src.name, dst.node, dst.name))

    def set(self, node_id: str, **params: Any) -> None:
        node = self.nodes[node_id]
        self.nodes[node_id] = replace(node, params={**node.params, **params})

    def input(
        self, name: str, node: NodeRef | str, param: str, description: str = ""
    ) -> WorkflowInput:
        """Make `node`'s parameter `param` the workflow input `name`; its value on the node is
        the input's default (no value: the input is required)."""
        node_id = node if isinstance(node, str) else node.id
        if not INPUT_NAME.fullmatch(name):
            raise ValueError(_bad_input_name(name))
        if node_id not in self.nodes:
            raise ValueError(f"input {name!r}: the workflow has no node {node_id!r}")
        self.inputs[name] = WorkflowInput(node_id, param, description)
        return self.inputs[name]

    def set_mode(self, node: NodeRef | str, mode: NodeMode) -> None:
        """Bypass (`"bypass"`), mute (`"mute"`) or run again (`"active"`) a node."""
        node_id = node if isinstance(node, str) else node.id
        if mode not in MODES:
            raise ValueError(f"a node's mode is one of {', '.join(MODES)}, not {mode!r}")
        self.nodes[node_id] = replace(self.nodes[node_id], mode=mode)

    def group(
        self,
        label: str,
        nodes: Iterable[NodeRef | str],
        id: str | None = None,
        position: tuple[float, float] | None = None,
        size: tuple[float, float] | None = None,
    ) -> Group:
        """Draw a group labelled `label` around `nodes`; by default a box around their positions.

        A group only arranges the canvas: running the workflow ignores it.
        """
        members = tuple(dict.fromkeys(n if isinstance(n, str) else n.id for n in nodes))
        for node_id in members:
            self._check_groupable(node_id)
        group_id = id or fresh_id("group", {*self.nodes, *self.groups})
        if group_id in self.nodes or group_id in self.groups:
            raise ValueError(f"a node or group with id {group_id!r} already exists; choose another")
        box = _box_around([self.nodes[m].position for m in members])
        group = Group(group_id, label, members, position or box[0], size or box[1])
        self.groups[group_id] = group
        return group

    def _check_groupable(self, node_id: str) -> None:
        if node_id not in self.nodes:
            raise ValueError(f"cannot group node {node_id!r}: the workflow has no such node")
        for other in self.groups.values():
            if node_id in other.nodes:
                raise ValueError(
                    f"node {node_id!r} is in group {other.id!r} already; a node can be in one "
                    "group only"
                )

    def _remember(self, kind: Any) -> str:
        spec = spec_of(kind)
        self.code[spec.name] = kind
        return spec.name

    def _new_id(self) -> str:
        taken = {int(i) for i in self.nodes if i.isdigit()}
        return str(max(taken, default=-1) + 1)

    # -- files ----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The canonical file content, in a stable order."""
        nodes = sorted(self.nodes.values(), key=lambda n: natural(n.id))
        data: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        if self.doc:
            data["doc"] = self.doc
        if self.inputs:
            data["inputs"] = {k: _input_json(self.inputs[k]) for k in sorted(self.inputs)}
        data["nodes"] = [_node_json(n) for n in nodes]
        data["edges"] = [_edge_json(e) for e in sorted(set(self.edges), key=Edge.sort_key)]
        if self.groups:
            groups = sorted(self.groups.values(), key=lambda g: natural(g.id))
            data["groups"] = [_group_json(g, self.nodes) for g in groups]
        if self.comments:
            comments = sorted(self.comments.values(), key=lambda c: natural(c.id))
            data["comments"] = [_comment_json(c) for c in comments]
        return data

    def dumps(self) -> str:
        """The file text: one line per edge and per position, so diffs stay small."""
        return encodable_json(_format(self.to_json())) + "\n"

    def save(self, path: Path | str) -> Path:
        """Write the file atomically: readers see the old or the new file, never half of one."""
        text = self.dumps()
        return atomic_write(Path(path), text)

    @classmethod
    def load(cls, path: Path | str) -> Workflow:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise WorkflowFormatError(f"cannot read workflow {str(path)!r}: {exc}") from None
        workflow = cls.loads(text, name=str(path), path=path)
        workflow.library = library_beside(path)
        return workflow

    @classmethod
    def loads(cls, text: str, name: str = "<workflow>", path: Path | None = None) -> Workflow:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise WorkflowFormatError(
                f"{name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            ) from None
        return cls.from_json(data, name, path)

    @classmethod
    def from_json(cls, data: Any, name: str = "<workflow>", path: Path | None = None) -> Workflow:
        """Read the canonical format, or Graphbook 0.13's (`{"type": "workflow", ...}`);
        `path` is the file it came from (a 0.13 file's docs are found beside it)."""
        if not isinstance(data, Mapping):
            raise WorkflowFormatError(f"{name}: a workflow is a JSON object, not {_kind(data)}")
        if graphbook013.is_graphbook013(data):
            canonical, notes = graphbook013.to_canonical(data, name, path)
            workflow = _parse(canonical, name)
            workflow.notes.extend(notes)
            return workflow
        if data.get("format") != FORMAT:
            raise WorkflowFormatError(
                f'{name}: not a workflow file; expected "format": "{FORMAT}" (or a Graphbook '
                'file with "type": "workflow")'
            )
        if data.get("version") != VERSION:
            raise WorkflowFormatError(
                f"{name}: workflow format version {data.get('version')!r} is not supported; "
                f"this Graphbook reads version {VERSION}"
            )
        return _parse(data, name)


@dataclass(frozen=True)
class NodeRef:
    """A node added to a workflow in Python; `ref["A"]` names one of its outputs."""

    workflow: Workflow
    id: str

    def __getitem__(self, output: str) -> Port:
        return Port(self.workflow, self.id, output)


@dataclass(frozen=True)
class Port:
    workflow: Workflow
    node: str
    name: str


LIBRARY = "components"
"""The library folder's name: `components/` beside `workflows/`."""


def library_beside(path: Path) -> Path | None:
    """The components folder for a workflow file: the nearest `components/` folder in the
    file's folder or up to three above it; None when there is none."""
    for folder in path.resolve().parents[:4]:
        if (folder / LIBRARY).is_dir():
            return folder / LIBRARY
    return None


def atomic_write(path: Path, text: str) -> Path:
    """Write `text` to a hidden temporary file next to `path`, then rename it over `path`: a
    reader sees the old file or the new one, never half of one. The file keeps its mode (a new
    one gets 0666 less the umask, as `open` would give it). A save killed midway leaves a
    `.NAME.XXXXXXXX.tmp` file (`TEMPORARY` matches its name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


TEMPORARY = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
"""The name of a temporary file `atomic_write` makes (tempfile's 8 random characters)."""


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it (os.umask would, for a moment, in every
    thread); 0o022 where it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _node_json(node: Node) -> dict[str, Any]:
    data: dict[str, Any] = {"id": node.id, "type": node.type}
    if node.label:
        data["label"] = node.label
    if node.module:
        data["module"] = node.module
    data["params"] = {k: _jsonable(node, k, node.params[k]) for k in sorted(node.params)}
    data["position"] = {"x": _coordinate(node.position[0]), "y": _coordinate(node.position[1])}
    if node.width:
        data["width"] = _coordinate(node.width)
    if node.collapsed:
        data["collapsed"] = True
    if node.mode != "active":
        data["mode"] = node.mode
    if node.color:
        data["color"] = node.color
    if isinstance(node.component, ComponentBody):
        data["component"] = node.component.to_json()
    elif isinstance(node.component, ComponentRef):
        data["component"] = {"library": node.component.library, "version": node.component.version}
    return data


def _ports_json(ports: Mapping[str, PortMap], port: str) -> dict[str, Any]:
    return {k: {"node": ports[k].node, port: ports[k].port} for k in sorted(ports)}


def _input_json(given: WorkflowInput) -> dict[str, Any]:
    data = {"node": given.node, "param": given.param}
    return data | ({"description": given.description} if given.description else {})


def _bad_input_name(name: Any) -> str:
    return (
        f"input name {name!r:.40} is not a word: use letters, digits, '_' and '-', "
        "starting with a letter or '_' (e.g. images)"
    )


def _comment_json(comment: Comment) -> dict[str, Any]:
    x, y = comment.position
    return {
        "id": comment.id,
        "text": comment.text,
        "position": {"x": _coordinate(x), "y": _coordinate(y)},
        "width": _coordinate(comment.width),
    }


def _group_json(group: Group, nodes: Mapping[str, Node]) -> dict[str, Any]:
    (x, y), (width, height) = group.position, group.size
    return {
        "id": group.id,
        "label": group.label,
        "position": {"x": _coordinate(x), "y": _coordinate(y)},
        "size": {"width": _coordinate(width), "height": _coordinate(height)},
        "nodes": sorted((n for n in set(group.nodes) if n in nodes), key=natural),
    }


# The browser's default node box and the margins it leaves around a group's nodes.
_NODE_SIZE, _PAD, _HEADER = (240.0, 120.0), 32.0, 28.0


def _box_around(
    positions: list[tuple[float, float]],
) -> tuple[tuple[float, float], tuple[float, float]]:
    if not positions:
        return (0.0, 0.0), GROUP_SIZE
    x = min(p[0] for p in positions) - _PAD
    y = min(p[1] for p in positions) - _PAD - _HEADER
    right = max(p[0] for p in positions) + _NODE_SIZE[0] + _PAD
    bottom = max(p[1] for p in positions) + _NODE_SIZE[1] + _PAD
    return (x, y), (right - x, bottom - y)


def fresh_id(stem: str, taken: set[str]) -> str:
    """`stem`, else `stem_2`, `stem_3`, ...: the browser's readable ids."""
    if stem not in taken:
        return stem
    n = 2
    while f"{stem}_{n}" in taken:
        n += 1
    return f"{stem}_{n}"


def _coordinate(value: float) -> float | int:
    rounded = round(float(value), 1)
    return int(rounded) if rounded.is_integer() else rounded


def _format(data: dict[str, Any]) -> str:
    """JSON with nested structure indented, but positions and edges each on one line."""

    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = ["{"]
    entries: list[str] = []
    for key, value in data.items():
        if key == "nodes":
            body = ",\n".join(_format_node(n) for n in value)
            entries.append(f'  "nodes": [\n{body}\n  ]' if value else '  "nodes": []')
        elif key == "edges":
            body = ",\n".join(f"    {dump(e)}" for e in value)
            entries.append(f'  "edges": [\n{body}\n  ]' if value else '  "edges": []')
        elif key == "inputs":
            body = ",\n".join(f"    {dump(k)}: {dump(v)}" for k, v in value.items())
            entries.append(f'  "inputs": {{\n{body}\n  }}')
        elif key in ("groups", "comments"):
            body = ",\n".join(_format_node(g) for g in value)
            entries.append(f"  {dump(key)}: [\n{body}\n  ]")
        else:
            entries.append(f"  {dump(key)}: {dump(value)}")
    lines.append(",\n".join(entries))
    lines.append("}")
    return "\n".join(lines)


def _format_node(node: dict[str, Any]) -> str:
    parts = []
    for key, value in node.items():
        if key in ("params", "component") and value:
            inner = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n      ")
            parts.append(f"      {json.dumps(key)}: {inner}")
        else:
            parts.append(f"      {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "    {\n" + ",\n".join(parts) + "\n    }"


def _jsonable(node: Node, name: str, value: Any) -> Any:
    """The value as it will read back from the file (tuples become lists, and so on)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        raise WorkflowFormatError(
            f"node {node.id!r}: parameter {name!r} holds {type(value).__name__} {value!r:.60}, "
            "which cannot be saved in a workflow file; give a JSON value (NaN and infinity "
            "are not JSON) or wire a resource node to it"
        ) from None


def _edge_json(edge: Edge) -> dict[str, Any]:
    data: dict[str, Any] = {
        "source": edge.source,
        "output": edge.output,
        "target": edge.target,
        "input": edge.input,
    }
    if edge.points:
        data["points"] = [{"x": _coordinate(x), "y": _coordinate(y)} for x, y in edge.points]
    return data


def _parse(data: Mapping[str, Any], name: str) -> Workflow:
    workflow = Workflow(doc=str(data.get("doc", "")))
    for index, raw in enumerate(_list(data, "nodes", name)):
        node = _parse_node(raw, f"{name}: nodes[{index}]")
        if node.id in workflow.nodes:
            raise WorkflowFormatError(f"{name}: two nodes have id {node.id!r}; ids must be unique")
        workflow.nodes[node.id] = node
    for index, raw in enumerate(_list(data, "edges", name)):
        workflow.edges.append(_parse_edge(raw, f"{name}: edges[{index}]"))
    for index, raw in enumerate(_list(data, "groups", name)):
        _add_group(workflow, _parse_group(raw, f"{name}: groups[{index}]"), name)
    for index, raw in enumerate(_list(data, "comments", name)):
        comment = _parse_comment(raw, f"{name}: comments[{index}]")
        if comment.id in workflow.comments or comment.id in workflow.nodes:
            raise WorkflowFormatError(
                f"{name}: comment id {comment.id!r} is taken; ids must be unique in a file"
            )
        workflow.comments[comment.id] = comment
    workflow.inputs = _parse_inputs(data.get("inputs", {}), name)
    return workflow


def _parse_inputs(raw: Any, name: str) -> dict[str, WorkflowInput]:
    """The `inputs` object; whether each names a real node parameter is checked by build_graph."""
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(
            f'{name}: \'inputs\' must be an object {{"NAME": {{"node": ID, "param": NAME}}}}, '
            f"not {_kind(raw)}"
        )
    inputs: dict[str, WorkflowInput] = {}
    for key, entry in raw.items():
        where = f"{name}: inputs[{key!r}]"
        if not INPUT_NAME.fullmatch(key):
            raise WorkflowFormatError(f"{name}: {_bad_input_name(key)}")
        if not isinstance(entry, Mapping):
            raise WorkflowFormatError(f"{where} must be an object, not {_kind(entry)}")
        node, param, description = entry.get("node"), entry.get("param"), entry.get("description")
        if not isinstance(node, str) or not node or not isinstance(param, str) or not param:
            raise WorkflowFormatError(
                f'{where} needs a node id and a parameter name: {{"node": ID, "param": NAME}}'
            )
        if description is not None and not isinstance(description, str):
            raise WorkflowFormatError(f"{where}: 'description' must be a string")
        inputs[key] = WorkflowInput(node, param, description or "")
    return inputs


def _parse_comment(raw: Any, where: str) -> Comment:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where} must be an object, not {_kind(raw)}")
    comment_id, text, width = raw.get("id"), raw.get("text", ""), raw.get("width", 240.0)
    if not isinstance(comment_id, str) or not comment_id:
        raise WorkflowFormatError(f"{where} needs a non-empty string 'id'")
    where = f"{where} (id {comment_id!r})"
    if not isinstance(text, str):
        raise WorkflowFormatError(f"{where}: 'text' must be a string")
    if isinstance(width, bool) or not isinstance(width, int | float) or width <= 0:
        raise WorkflowFormatError(f"{where}: 'width' must be a positive number")
    position = _pair(raw, "position", ("x", "y"), where) or (0.0, 0.0)
    return Comment(comment_id, text, position, float(width))


def _add_group(workflow: Workflow, group: Group, name: str) -> None:
    """Adds a group read from a file; ids naming no node are dropped, as the canvas drops them."""
    if group.id in workflow.groups:
        raise WorkflowFormatError(f"{name}: two groups have id {group.id!r}; ids must be unique")
    if group.id in workflow.nodes:
        raise WorkflowFormatError(
            f"{name}: group {group.id!r} has the id of a node; give the group another id"
        )
    members = tuple(dict.fromkeys(group.nodes))
    for node_id in members:
        if node_id not in workflow.nodes:
            _log.warning(
                "%s: group %r names node %r, which does not exist; it is left out of the group "
                "(the next save removes it from the file)",
                name,
                group.id,
                node_id,
            )
        owner = next((g.id for g in workflow.groups.values() if node_id in g.nodes), None)
        if owner is not None:
            raise WorkflowFormatError(
                f"{name}: node {node_id!r} is in groups {owner!r} and {group.id!r}; a node can "
                "be in one group only, so remove it from one of them"
            )
    kept = tuple(n for n in members if n in workflow.nodes)
    workflow.groups[group.id] = replace(group, nodes=kept)


def _parse_group(raw: Any, where: str) -> Group:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where} must be an object, not {_kind(raw)}")
    group_id, label, nodes = raw.get("id"), raw.get("label", ""), raw.get("nodes")
    if not isinstance(group_id, str) or not group_id:
        raise WorkflowFormatError(f"{where} needs a non-empty string 'id'")
    where = f"{where} (id {group_id!r})"
    if not isinstance(label, str):
        raise WorkflowFormatError(f"{where}: 'label' must be a string")
    if not isinstance(nodes, list) or not all(isinstance(n, str) and n for n in nodes):
        raise WorkflowFormatError(f"{where}: 'nodes' must be a list of node ids (strings)")
    position = _pair(raw, "position", ("x", "y"), where) or (0.0, 0.0)
    size = _pair(raw, "size", ("width", "height"), where) or GROUP_SIZE
    if min(size) <= 0:
        raise WorkflowFormatError(f"{where}: 'size' must have a positive width and height")
    return Group(group_id, label, tuple(nodes), position, size)


def _pair(
    raw: Mapping[str, Any], key: str, names: tuple[str, str], where: str
) -> tuple[float, float] | None:
    """`raw[key]` as two numbers named `names`; None when the key is absent."""
    value = raw.get(key)
    return None if value is None else _xy(value, repr(key), names, where)


def _xy(value: Any, what: str, names: tuple[str, str], where: str) -> tuple[float, float]:
    """`value` as two numbers named `names` (an object {names[0]: x, names[1]: y})."""
    numbers: list[Any] = [value.get(n) for n in names] if isinstance(value, Mapping) else []
    if len(numbers) != 2 or not all(_is_number(v) for v in numbers):
        shape = ", ".join(f'"{n}": number' for n in names)
        raise WorkflowFormatError(f"{where}: {what} must be {{{shape}}}, not {value!r:.60}")
    return (float(numbers[0]), float(numbers[1]))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _list(data: Mapping[str, Any], key: str, name: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise WorkflowFormatError(f"{name}: {key!r} must be a list, not {_kind(value)}")
    return value


def _parse_node(raw: Any, where: str) -> Node:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where} must be an object, not {_kind(raw)}")
    node_id, type_ = raw.get("id"), raw.get("type")
    if not isinstance(node_id, str) or not node_id:
        raise WorkflowFormatError(f"{where} needs a non-empty string 'id'")
    if not isinstance(type_, str) or not type_:
        raise WorkflowFormatError(f"{where} (id {node_id!r}) needs a string 'type' (a node name)")
    params = raw.get("params", {})
    if not isinstance(params, Mapping):
        raise WorkflowFormatError(f"{where} (id {node_id!r}): 'params' must be an object")
    label, module = raw.get("label", ""), raw.get("module", "")
    if not isinstance(label, str):
        raise WorkflowFormatError(f"{where} (id {node_id!r}): 'label' must be a string")
    if not isinstance(module, str):
        raise WorkflowFormatError(f"{where} (id {node_id!r}): 'module' must be a string")
    width, collapsed, color = _canvas_look(raw, f"{where} (id {node_id!r})")
    mode = raw.get("mode", "active")
    if mode not in MODES:
        raise WorkflowFormatError(
            f'{where} (id {node_id!r}): \'mode\' must be "bypass" or "mute" (or left out to '
            f"run the node), not {mode!r:.40}"
        )
    position = _position(raw.get("position"))
    component = _parse_component(raw, type_, f"{where} (id {node_id!r})")
    return Node(
        node_id,
        type_,
        dict(params),
        position,
        label,
        module,
        width,
        collapsed,
        mode,
        color,
        component,
    )


def _parse_component(
    raw: Mapping[str, Any], type_: str, where: str
) -> ComponentBody | ComponentRef | None:
    """A component node's `component`: a library reference or an inline body."""
    value = raw.get("component")
    if type_ != COMPONENT:
        if value is not None:
            raise WorkflowFormatError(
                f"{where}: only a node of type \"{COMPONENT}\" has a 'component'; remove it "
                f'or set "type": "{COMPONENT}"'
            )
        return None
    if not isinstance(value, Mapping):
        raise WorkflowFormatError(
            f"{where}: a \"{COMPONENT}\" node needs 'component': its nodes, edges and ports, "
            'or {"library": NAME, "version": ...} for a library component'
        )
    if "library" in value:
        library, version = value.get("library"), value.get("version", "")
        if not isinstance(library, str) or not library or not isinstance(version, str):
            raise WorkflowFormatError(
                f"{where}: 'component' names a library component as "
                '{"library": NAME, "version": DIGEST} (strings)'
            )
        return ComponentRef(library, version)
    return parse_body(value, f"{where}: component")


def parse_body(data: Mapping[str, Any], where: str) -> ComponentBody:
    """A component's inside as a file holds it (a node's `component`, or a library file)."""
    nodes: dict[str, Node] = {}
    for index, raw in enumerate(_list(data, "nodes", where)):
        node = _parse_node(raw, f"{where}: nodes[{index}]")
        if node.id in nodes:
            raise WorkflowFormatError(f"{where}: two nodes have id {node.id!r}; ids must be unique")
        nodes[node.id] = node
    edges = [
        _parse_edge(raw, f"{where}: edges[{i}]")
        for i, raw in enumerate(_list(data, "edges", where))
    ]
    doc = data.get("doc", "")
    if not isinstance(doc, str):
        raise WorkflowFormatError(f"{where}: 'doc' must be a string")
    return ComponentBody(
        nodes,
        tuple(edges),
        _parse_ports(data.get("inputs", {}), "input", where),
        _parse_ports(data.get("outputs", {}), "output", where),
        _parse_ports(data.get("params", {}), "param", where),
        doc,
    )


def _parse_ports(raw: Any, port: str, where: str) -> dict[str, PortMap]:
    key = {"input": "inputs", "output": "outputs", "param": "params"}[port]
    shape = f'{{"NAME": {{"node": ID, "{port}": NAME}}}}'
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where}: {key!r} must be an object {shape}, not {_kind(raw)}")
    ports: dict[str, PortMap] = {}
    for name, entry in raw.items():
        node = entry.get("node") if isinstance(entry, Mapping) else None
        inner = entry.get(port) if isinstance(entry, Mapping) else None
        if not (isinstance(node, str) and node and isinstance(inner, str) and inner):
            raise WorkflowFormatError(f"{where}: {key}[{name!r}] must be {shape}")
        ports[str(name)] = PortMap(node, inner)
    return ports


def _canvas_look(raw: Mapping[str, Any], where: str) -> tuple[float | None, bool, str]:
    """A node's width, fold and colour on the canvas, checked (running ignores them)."""
    width, collapsed, color = raw.get("width"), raw.get("collapsed", False), raw.get("color", "")
    number = isinstance(width, int | float) and not isinstance(width, bool)
    if width is not None and not (number and width > 0):
        raise WorkflowFormatError(f"{where}: 'width' must be a positive number")
    if not isinstance(collapsed, bool):
        raise WorkflowFormatError(f"{where}: 'collapsed' must be true or false")
    if color and color not in NODE_COLORS:
        raise WorkflowFormatError(
            f"{where}: 'color' must be one of {', '.join(NODE_COLORS)} (or left out), "
            f"not {color!r:.40}"
        )
    return width, collapsed, color or ""


def _position(raw: Any) -> tuple[float, float]:
    if isinstance(raw, Mapping):
        x, y = raw.get("x", 0), raw.get("y", 0)
        if isinstance(x, int | float) and isinstance(y, int | float):
            return (float(x), float(y))
    return (0.0, 0.0)


def _parse_edge(raw: Any, where: str) -> Edge:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where} must be an object, not {_kind(raw)}")
    fields = {k: raw.get(k) for k in ("source", "output", "target")}
    missing = [k for k, v in fields.items() if not isinstance(v, str) or not v]
    if missing:
        raise WorkflowFormatError(f"{where} needs string field(s): {', '.join(missing)}")
    points = _points(raw.get("points", []), where)
    return Edge(
        raw["source"], raw["output"], raw["target"], str(raw.get("input", DATA_INPUT)), points
    )


def _points(raw: Any, where: str) -> tuple[tuple[float, float], ...]:
    """An edge's reroute points: a list of {"x": number, "y": number}."""
    if not isinstance(raw, list):
        raise WorkflowFormatError(f'{where}: \'points\' must be a list of {{"x", "y"}} points')
    return tuple(_xy(point, f"points[{i}]", ("x", "y"), where) for i, point in enumerate(raw))


def _kind(value: Any) -> str:
    names = {list: "a list", dict: "an object", str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def natural(text: str) -> tuple[Any, ...]:
    """Sort key that puts `n2` before `n10`; ties (`1` and `01`) are broken by the text."""
    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))
    return (parts, text)
