"""Workflow files: the canonical JSON format, Graphbook's own format, and building in Python.

A workflow is data: nodes (id, type, parameter values by name, position) and edges from
(node, output) to (node, input). The file is written with a stable order so it diffs well.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from graphbook.errors import WorkflowFormatError

FORMAT = "graphbook.workflow"
VERSION = 1
DATA_INPUT = "in"


@dataclass(frozen=True)
class Node:
    """One node of a workflow: which kind it is and the parameter values set on it."""

    id: str
    type: str
    params: Mapping[str, Any] = field(default_factory=dict)
    position: tuple[float, float] = (0.0, 0.0)
    label: str = ""


@dataclass(frozen=True)
class Edge:
    """A wire from a node's output to another node's input (`in`) or parameter."""

    source: str
    output: str
    target: str
    input: str = DATA_INPUT

    def sort_key(self) -> tuple[Any, ...]:
        return (natural(self.source), self.output, natural(self.target), self.input)


class Workflow:
    """A graph of nodes to run; build it in code, or load it from a file."""

    def __init__(self, doc: str = "") -> None:
        self.doc = doc
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self.code: dict[str, Any] = {}
        """Node classes/functions added by object, registered when the workflow runs."""

    # -- building -------------------------------------------------------------------------
    def add(self, kind: Any, id: str | None = None, **params: Any) -> NodeRef:
        """Add a node of `kind` (a registered name, a node class or decorated function).

        A parameter given another node (`model=model_ref`) is wired from that resource.
        """
        node_id = id or self._new_id()
        if node_id in self.nodes:
            raise ValueError(f"a node with id {node_id!r} already exists; choose another id")
        type_name = kind if isinstance(kind, str) else self._remember(kind)
        values = {k: v for k, v in params.items() if not isinstance(v, NodeRef)}
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

    def _remember(self, kind: Any) -> str:
        from graphbook.registry import spec_of

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
        data["nodes"] = [_node_json(n) for n in nodes]
        data["edges"] = [_edge_json(e) for e in sorted(set(self.edges), key=Edge.sort_key)]
        return data

    def dumps(self) -> str:
        """The file text: one line per edge and per position, so diffs stay small."""
        return _format(self.to_json()) + "\n"

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
        return cls.loads(text, name=str(path))

    @classmethod
    def loads(cls, text: str, name: str = "<workflow>") -> Workflow:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise WorkflowFormatError(
                f"{name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            ) from None
        return cls.from_json(data, name)

    @classmethod
    def from_json(cls, data: Any, name: str = "<workflow>") -> Workflow:
        """Read the canonical format, or Graphbook's own (`{"version": "0", "type": ...}`)."""
        if not isinstance(data, Mapping):
            raise WorkflowFormatError(f"{name}: a workflow is a JSON object, not {_kind(data)}")
        if is_graphbook_format(data):
            from graphbook.graphbook_format import from_graphbook

            return from_graphbook(data, name)
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


def is_graphbook_format(data: Mapping[str, Any]) -> bool:
    return data.get("type") == "workflow" and "format" not in data


def atomic_write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _node_json(node: Node) -> dict[str, Any]:
    data: dict[str, Any] = {"id": node.id, "type": node.type}
    if node.label:
        data["label"] = node.label
    data["params"] = {k: _jsonable(node, k, node.params[k]) for k in sorted(node.params)}
    data["position"] = {"x": _coordinate(node.position[0]), "y": _coordinate(node.position[1])}
    return data


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
        else:
            entries.append(f"  {dump(key)}: {dump(value)}")
    lines.append(",\n".join(entries))
    lines.append("}")
    return "\n".join(lines)


def _format_node(node: dict[str, Any]) -> str:
    parts = []
    for key, value in node.items():
        if key == "params" and value:
            inner = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n      ")
            parts.append(f'      "params": {inner}')
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


def _edge_json(edge: Edge) -> dict[str, str]:
    return {
        "source": edge.source,
        "output": edge.output,
        "target": edge.target,
        "input": edge.input,
    }


def _parse(data: Mapping[str, Any], name: str) -> Workflow:
    workflow = Workflow(doc=str(data.get("doc", "")))
    for index, raw in enumerate(_list(data, "nodes", name)):
        node = _parse_node(raw, f"{name}: nodes[{index}]")
        if node.id in workflow.nodes:
            raise WorkflowFormatError(f"{name}: two nodes have id {node.id!r}; ids must be unique")
        workflow.nodes[node.id] = node
    for index, raw in enumerate(_list(data, "edges", name)):
        workflow.edges.append(_parse_edge(raw, f"{name}: edges[{index}]"))
    return workflow


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
    label = raw.get("label", "")
    if not isinstance(label, str):
        raise WorkflowFormatError(f"{where} (id {node_id!r}): 'label' must be a string")
    return Node(node_id, type_, dict(params), _position(raw.get("position")), label)


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
    return Edge(raw["source"], raw["output"], raw["target"], str(raw.get("input", DATA_INPUT)))


def _kind(value: Any) -> str:
    names = {list: "a list", dict: "an object", str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def natural(text: str) -> tuple[Any, ...]:
    """Sort key that puts `n2` before `n10`; ties (`1` and `01`) are broken by the text."""
    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))
    return (parts, text)
