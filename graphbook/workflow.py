"""Workflows: building them in Python, and their files in the canonical JSON format (files in
Graphbook 0.13's format are read through graphbook/formats/graphbook013.py). How the format is
written and read, field by field, is workflow_codec.py; writing a file atomically, atomic.py.

A workflow is data: nodes (id, type, parameter values by name, position) and edges from
(node, output) to (node, input), plus the groups drawn around nodes on the canvas, which do not
change how it runs, and its inputs: node parameters named so the workflow can be called like a
function (graphbook/inputs.py). The file is written with a stable order so it diffs well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from graphbook.atomic import TEMPORARY as TEMPORARY
from graphbook.atomic import atomic_write as atomic_write
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
        from graphbook.workflow_codec import body_json

        return body_json(self)


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
        from graphbook.workflow_codec import (
            _comment_json,
            _edge_json,
            _group_json,
            _input_json,
            _node_json,
        )

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
        from graphbook.workflow_codec import _format

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
        return cls.from_json(json_of(text, name), name, path)

    @classmethod
    def from_json(cls, data: Any, name: str = "<workflow>", path: Path | None = None) -> Workflow:
        """Read the canonical format, or Graphbook 0.13's (`{"type": "workflow", ...}`);
        `path` is the file it came from (a 0.13 file's docs are found beside it)."""
        from graphbook.workflow_codec import _parse

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


def parse_body(data: Mapping[str, Any], where: str) -> ComponentBody:
    """A component's inside as a file holds it (a node's `component`, or a library file)."""
    from graphbook.workflow_codec import parse_body as parse

    return parse(data, where)


def json_of(text: str, name: str) -> Any:
    """The JSON in the file `name` holds; WorkflowFormatError saying where it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkflowFormatError(
            f"{name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None


def _bad_input_name(name: Any) -> str:
    return (
        f"input name {name!r:.40} is not a word: use letters, digits, '_' and '-', "
        "starting with a letter or '_' (e.g. images)"
    )


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


def _kind(value: Any) -> str:
    names = {list: "a list", dict: "an object", str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def natural(text: str) -> tuple[Any, ...]:
    """Sort key that puts `n2` before `n10`; ties (`1` and `01`) are broken by the text."""
    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))
    return (parts, text)
