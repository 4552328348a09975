"""Reading workflow files written by Graphbook 0.13 (React Flow nodes and edges) as ours:
`to_canonical` turns the file's data into the canonical format's (graphbook/workflow.py).

Step and resource nodes become nodes; parameter `value`s become parameter values, and
`data.module` is kept. Groups stay groups (with their step and resource children); a child's
position is made absolute, and a wire through a group's handles (`h` outside, `h_inner` inside)
becomes a direct wire. The `docs/<Workflow>.md` beside a workflow file becomes its `doc`.
Export nodes only matter when the file is used as a subflow, so they are left out, as Graphbook
does, and so are wires to nodes that do not exist: each is said in the notes returned, with
parameter types this Graphbook does not know. Subflow nodes are refused.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from graphbook.errors import Problem, WorkflowFormatError
from graphbook.params import ALIASES, SCALAR_TYPES

RUNNABLE = ("step", "resource")
KNOWN = (*RUNNABLE, "group", "export", "subflow")
INNER = "_inner"
MAX_DEPTH = 32
"""Groups nest a few levels at most; the bound stops a parentId or handle cycle."""

Pin = tuple[str, str]
"""(node id, handle)."""
NO_MODULE = ("", "transient_module", "graphbook.core.decorators", "custom_nodes")
"""What 0.13 wrote as `data.module` when the node came from a node file, not a module."""


class Edge(NamedTuple):
    source: str
    output: str
    target: str
    input: str


def is_graphbook013(data: Mapping[str, Any]) -> bool:
    """A 0.13 workflow file says `"type": "workflow"` and has no canonical `"format"`."""
    return data.get("type") == "workflow" and "format" not in data


def to_canonical(
    data: Mapping[str, Any], name: str = "<workflow>", path: Path | None = None
) -> tuple[dict[str, Any], list[Problem]]:
    """The canonical file data (less its format and version) of a 0.13 workflow read from
    `path` (if from a file), and notes on what was left out; subflows are refused."""
    raw_nodes, raw_edges = data.get("nodes", []), data.get("edges", [])
    if not isinstance(raw_nodes, list) or not isinstance(raw_edges, list):
        raise WorkflowFormatError(f"{name}: 'nodes' and 'edges' must be lists")
    by_id = _index(raw_nodes, name)
    runnable = [raw for raw in by_id.values() if raw["type"] in RUNNABLE]
    nodes = [_node(raw, by_id, name) for raw in runnable]
    notes = [note for raw in runnable for note in _unknown_types(raw)]
    edges = [_edge(raw, name) for raw in raw_edges]
    notes.extend(_left_out(edges, by_id))
    canonical = {
        "doc": str(data.get("doc", "")) or _docs_beside(path),
        "nodes": nodes,
        "edges": [edge._asdict() for edge in _flatten(edges, by_id)],
        "groups": _groups(by_id),
    }
    return canonical, notes


def docs_path(path: Path) -> Path:
    """Where 0.13 kept a workflow's documentation: `docs/<Workflow>.md` beside the file."""
    return path.parent / "docs" / f"{path.stem}.md"


def _docs_beside(path: Path | None) -> str:
    """The docs file beside `path`, if it is one and lies in the file's folder (a `docs`
    symlink that leads elsewhere is not followed: the server reads no file outside its
    folders)."""
    if path is None:
        return ""
    try:
        docs = docs_path(path)
        if not docs.resolve().is_relative_to(path.parent.resolve()) or not docs.is_file():
            return ""
        return docs.read_text(encoding="utf-8").strip()
    except (OSError, RuntimeError, UnicodeDecodeError):
        return ""


def _index(raw_nodes: list[Any], name: str) -> dict[str, Mapping[str, Any]]:
    by_id: dict[str, Mapping[str, Any]] = {}
    for index, raw in enumerate(raw_nodes):
        where = f"{name}: nodes[{index}]"
        if not isinstance(raw, Mapping):
            raise WorkflowFormatError(f"{where} must be an object")
        node_id, kind = raw.get("id"), raw.get("type")
        if not isinstance(node_id, str | int) or node_id == "":
            raise WorkflowFormatError(f"{where} needs an 'id'")
        if kind == "subflow":
            data = raw.get("data")
            filename = data.get("filename") if isinstance(data, Mapping) else None
            raise WorkflowFormatError(
                f"{name}: node {str(node_id)!r} is a subflow of {filename or 'another file'}; "
                "subflows are not supported, so open that file and copy its nodes in"
            )
        if kind not in KNOWN:
            raise WorkflowFormatError(
                f"{where} (id {str(node_id)!r}) has type {kind!r}; Graphbook files hold "
                f"nodes of type {', '.join(KNOWN)}"
            )
        if str(node_id) in by_id:
            raise WorkflowFormatError(f"{name}: two nodes have id {str(node_id)!r}")
        by_id[str(node_id)] = raw
    return by_id


def _node(
    raw: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]], name: str
) -> dict[str, Any]:
    node_id = str(raw["id"])
    data = raw.get("data")
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        raise WorkflowFormatError(f"{name}: node {node_id!r} has no data.name (its node type)")
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, Mapping):
        raise WorkflowFormatError(f"{name}: node {node_id!r}: data.parameters must be an object")
    params = {
        key: spec["value"]
        for key, spec in parameters.items()
        if isinstance(spec, Mapping) and spec.get("value") is not None
    }
    label, module = data.get("label", ""), data.get("module", "")
    return {
        "id": node_id,
        "type": data["name"],
        "params": params,
        "position": _absolute_position(raw, by_id),
        "label": label if isinstance(label, str) and label != data["name"] else "",
        "module": module if isinstance(module, str) and module not in NO_MODULE else "",
    }


def _unknown_types(raw: Mapping[str, Any]) -> list[Problem]:
    """A note for each parameter whose declared type this Graphbook does not know: it becomes
    a resource input, as in 0.13, and a value the file gives it cannot be used."""
    parameters = raw["data"].get("parameters") or {}
    known = (*SCALAR_TYPES, *ALIASES, "list", "dict", "resource", "selection")
    notes = []
    for key, spec in parameters.items():
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        if isinstance(kind, str) and kind.lower() not in known and not kind.startswith("list"):
            notes.append(
                Problem(
                    str(raw["id"]),
                    f"parameter {key!r} has type {kind!r}, which this Graphbook does not know; "
                    "it is a resource input here, as in Graphbook 0.13",
                    "wire a resource to it, or declare a known type (string, number, list, ...)",
                )
            )
    return notes


def _left_out(edges: list[Edge], by_id: Mapping[str, Mapping[str, Any]]) -> list[Problem]:
    """Notes for the export nodes and the wires that are not carried over."""
    notes = []
    wires: dict[str, int] = defaultdict(int)
    for edge in edges:
        for end in (edge.source, edge.target):
            if by_id.get(end, {}).get("type") == "export":
                wires[end] += 1
        missing = [end for end in (edge.source, edge.target) if end not in by_id]
        if missing:
            notes.append(
                Problem(
                    None,
                    f"the wire {edge.source}.{edge.output} -> {edge.target}.{edge.input} was "
                    f"left out: node {missing[0]!r} does not exist",
                )
            )
    for node_id, raw in by_id.items():
        if raw["type"] == "export":
            label = _mapping(raw, "data").get("label") or node_id
            notes.append(
                Problem(
                    None,
                    f"export node {node_id!r} ({label}) and its {wires[node_id]} wire(s) were "
                    "left out: exports are the pins of a subflow, and subflows do not run here",
                    "nothing to do unless another workflow used this one as a subflow",
                )
            )
    return notes


def _groups(by_id: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """0.13's groups, each around its step and resource children."""
    members: dict[str, list[str]] = defaultdict(list)
    for node_id, raw in by_id.items():
        parent = raw.get("parentId") or raw.get("parentNode")
        if parent and raw["type"] in RUNNABLE:
            members[str(parent)].append(node_id)
    groups = []
    for group_id, raw in by_id.items():
        if raw["type"] == "group":
            label = _mapping(raw, "data").get("label", "")
            group = {
                "id": group_id,
                "label": label if isinstance(label, str) else "",
                "position": _absolute_position(raw, by_id),
                "nodes": members.get(group_id, []),
            }
            groups.append(group | _size(raw))
    return groups


def _mapping(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = raw.get(key)
    return value if isinstance(value, Mapping) else {}


def _size(raw: Mapping[str, Any]) -> dict[str, Any]:
    """`{"size": ...}` when the group has one; the canonical format's default otherwise."""
    style = _mapping(raw, "style")
    width = raw.get("width") or style.get("width")
    height = raw.get("height") or style.get("height")
    if isinstance(width, int | float) and isinstance(height, int | float) and width > 0 < height:
        return {"size": {"width": float(width), "height": float(height)}}
    return {}


def _absolute_position(
    raw: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]]
) -> dict[str, float]:
    """Children of a group store positions relative to it; ours are absolute."""
    x, y = 0.0, 0.0
    current: Mapping[str, Any] | None = raw
    for _ in range(MAX_DEPTH):
        if current is None:
            break
        position = current.get("position")
        if isinstance(position, Mapping):
            x += _number(position.get("x"))
            y += _number(position.get("y"))
        parent = current.get("parentId") or current.get("parentNode")
        current = by_id.get(str(parent)) if parent else None
    return {"x": x, "y": y}


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _edge(raw: Any, name: str) -> Edge:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{name}: an edge must be an object")
    for key in ("source", "target"):
        if raw.get(key) in (None, ""):
            raise WorkflowFormatError(f"{name}: an edge has no {key!r}: {dict(raw)!r:.120}")
    return Edge(
        source=str(raw["source"]),
        output=str(raw.get("sourceHandle") or "out"),
        target=str(raw["target"]),
        input=str(raw.get("targetHandle") or "in"),
    )


def _flatten(edges: list[Edge], by_id: Mapping[str, Mapping[str, Any]]) -> list[Edge]:
    """Direct edges between steps and resources, resolving wires that pass through groups.

    An edge into a group's outside handle `h` feeds what leaves its inside handle `h_inner`,
    and an edge into `h_inner` (from a child) feeds what leaves the outside handle `h`. Edges
    to or from export nodes, and to nodes that do not exist, are dropped as Graphbook does.
    """
    kind = {node_id: raw["type"] for node_id, raw in by_id.items()}
    into: dict[Pin, list[Pin]] = defaultdict(list)
    for edge in edges:
        if kind.get(edge.target) == "group":
            into[(edge.target, edge.input)].append((edge.source, edge.output))
    flat: list[Edge] = []
    for edge in edges:
        if kind.get(edge.target) in RUNNABLE:
            for source, output in _sources((edge.source, edge.output), kind, into, 0):
                flat.append(Edge(source, output, edge.target, edge.input))
    return flat


def _sources(
    pin: Pin, kind: Mapping[str, str], into: Mapping[Pin, list[Pin]], depth: int
) -> list[Pin]:
    """The step or resource outputs that reach `pin`, following group handles."""
    node, handle = pin
    if kind.get(node) in RUNNABLE:
        return [pin]
    if kind.get(node) != "group" or depth > MAX_DEPTH:
        return []
    other = handle.removesuffix(INNER) if handle.endswith(INNER) else handle + INNER
    found: list[Pin] = []
    for upstream in into.get((node, other), []):
        found.extend(_sources(upstream, kind, into, depth + 1))
    return found
