"""Workflows: building them in Python, and their files (to_json, dumps, save, load, from_json
are the file's face; the format itself, field by field, is workflow_codec.py, and files in
Graphbook 0.13's format are read through it too; writing a file atomically, atomic.py).

A workflow is data: nodes (id, type, parameter values by name, position) and edges from
(node, output) to (node, input), plus the groups drawn around nodes on the canvas, which do not
change how it runs, and its inputs: node parameters named so the workflow can be called like a
function (graphbook/inputs.py). Its parts are workflow_parts.py's records, named here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from graphbook.atomic import TEMPORARY as TEMPORARY
from graphbook.atomic import atomic_write as atomic_write
from graphbook.errors import Problem, WorkflowFormatError
from graphbook.registry import spec_of
from graphbook.workflow_codec import FORMAT as FORMAT
from graphbook.workflow_codec import VERSION as VERSION
from graphbook.workflow_codec import json_of, read, workflow_json, workflow_text
from graphbook.workflow_parts import COMPONENT as COMPONENT
from graphbook.workflow_parts import DATA_INPUT as DATA_INPUT
from graphbook.workflow_parts import GROUP_SIZE as GROUP_SIZE
from graphbook.workflow_parts import INPUT_NAME as INPUT_NAME
from graphbook.workflow_parts import MODES as MODES
from graphbook.workflow_parts import NODE_COLORS as NODE_COLORS
from graphbook.workflow_parts import OUTPUT_KINDS as OUTPUT_KINDS
from graphbook.workflow_parts import Comment as Comment
from graphbook.workflow_parts import ComponentBody as ComponentBody
from graphbook.workflow_parts import ComponentRef as ComponentRef
from graphbook.workflow_parts import Edge as Edge
from graphbook.workflow_parts import Group as Group
from graphbook.workflow_parts import Node as Node
from graphbook.workflow_parts import NodeMode as NodeMode
from graphbook.workflow_parts import OutputKind as OutputKind
from graphbook.workflow_parts import Picker as Picker
from graphbook.workflow_parts import PortMap as PortMap
from graphbook.workflow_parts import WorkflowInput as WorkflowInput
from graphbook.workflow_parts import WorkflowOutput as WorkflowOutput
from graphbook.workflow_parts import bad_input_name, bad_output_name


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
        self.outputs: dict[str, WorkflowOutput] = {}
        """Output name -> the node output it shows (checked when the graph is built); none:
        an app shows its sinks and image nodes (graphbook/outputs.py)."""
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
        self,
        name: str,
        node: NodeRef | str,
        param: str,
        description: str = "",
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        choices: Iterable[Any] = (),
        picker: Picker = "",
        accept: Iterable[str] = (),
    ) -> WorkflowInput:
        """Make `node`'s parameter `param` the workflow input `name`; its value on the node is
        the input's default (no value: the input is required). `minimum`, `maximum` and
        `choices` narrow its values; `picker` ("file", "folder", "image") and `accept` (file
        suffixes) say how an app asks for it."""
        node_id = self._node_id(node, f"input {name!r}", bad_input_name(name), name)
        given = WorkflowInput(
            node_id, param, description, minimum, maximum, tuple(choices), picker, tuple(accept)
        )
        self.inputs[name] = given
        return given

    def output(
        self,
        name: str,
        node: NodeRef | str,
        output: str = "out",
        kind: OutputKind = "table",
        description: str = "",
    ) -> WorkflowOutput:
        """Show the dicts `node` hands on at `output` as the workflow's result `name`: `kind`
        images (a gallery), table, file (the files it wrote) or text."""
        node_id = self._node_id(node, f"output {name!r}", bad_output_name(name), name)
        if kind not in OUTPUT_KINDS:
            raise ValueError(f"output {name!r}: kind is one of {', '.join(OUTPUT_KINDS)}")
        self.outputs[name] = WorkflowOutput(node_id, output, kind, description)
        return self.outputs[name]

    def _node_id(self, node: NodeRef | str, what: str, bad_name: str, name: str) -> str:
        node_id = node if isinstance(node, str) else node.id
        if not INPUT_NAME.fullmatch(name):
            raise ValueError(bad_name)
        if node_id not in self.nodes:
            raise ValueError(f"{what}: the workflow has no node {node_id!r}")
        return node_id

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
        return workflow_json(self)

    def dumps(self) -> str:
        """The file text: one line per edge and per position, so diffs stay small."""
        return workflow_text(self.to_json())

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
        contents = read(data, name, path)
        workflow = cls(contents.doc)
        workflow.nodes, workflow.edges = contents.nodes, contents.edges
        workflow.groups, workflow.comments = contents.groups, contents.comments
        workflow.inputs, workflow.notes = contents.inputs, contents.notes
        workflow.outputs = contents.outputs
        return workflow


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
