"""The parts a workflow is made of: nodes, edges, groups, comments, inputs, outputs, and a
component's inside (its nodes and edges, the ports that cross its edge), as frozen records.

They are the vocabulary both workflow.py (the Workflow that holds them, and builds them in
Python) and workflow_codec.py (their file format) speak; this module knows neither.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

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


Picker = Literal["", "file", "folder", "image"]
"""How an app asks for an input's value: a file or a folder picked under the server's roots, an
image picked there or uploaded; "" by the parameter's type."""
PICKERS: tuple[Picker, ...] = ("file", "folder", "image")
OutputKind = Literal["images", "table", "file", "text"]
"""How an app shows an output: images in a gallery with their fields, a table (paged, sorted,
downloaded as CSV or Parquet), the files a node wrote, text."""
OUTPUT_KINDS: tuple[OutputKind, ...] = get_args(OutputKind)


@dataclass(frozen=True)
class WorkflowInput:
    """A node parameter the workflow takes as an input: its value can be given for a run by the
    input's name (graphbook/inputs.py); the value saved on the node is the default.

    `minimum`, `maximum` and `choices` narrow the values it takes (checked for every run);
    `picker` and `accept` say how an app asks for it (graphbook/apps in the server)."""

    node: str
    param: str
    description: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] = ()
    """The values it may take (an app shows a choice); empty: any value of its type."""
    picker: Picker = ""
    accept: tuple[str, ...] = ()
    """File name suffixes a file or image picker takes (`.csv`); empty: any."""


@dataclass(frozen=True)
class WorkflowOutput:
    """A node output the workflow shows as a result (an app's gallery, table, files or text):
    the dicts node `node` hands on at `output`."""

    node: str
    output: str = "out"
    kind: OutputKind = "table"
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


@dataclass(frozen=True)
class ComponentRef:
    """A library component (`components/NAME.json`) by name, with the version (its content's
    digest) the node was made from: the library's current file is what runs."""

    library: str
    version: str = ""


def bad_input_name(name: Any) -> str:
    return (
        f"input name {name!r:.40} is not a word: use letters, digits, '_' and '-', "
        "starting with a letter or '_' (e.g. images)"
    )


def bad_output_name(name: Any) -> str:
    return (
        f"output name {name!r:.40} is not a word: use letters, digits, '_' and '-', "
        "starting with a letter or '_' (e.g. predictions)"
    )


def natural(text: str) -> tuple[Any, ...]:
    """Sort key that puts `n2` before `n10`; ties (`1` and `01`) are broken by the text."""
    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))
    return (parts, text)
