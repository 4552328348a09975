"""Reading workflow files written by Graphbook 0.13 (React Flow nodes and edges) as ours.

Step and resource nodes become nodes; parameter `value`s become parameter values. Groups are
flattened: a child's position is made absolute, and a wire through a group's handles (`h`
outside, `h_inner` inside) becomes a direct wire. Export nodes only matter when the file is used
as a subflow, so they are left out, as Graphbook does; subflow nodes are refused.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from graphbook.errors import WorkflowFormatError
from graphbook.workflow import Edge, Node, Workflow

RUNNABLE = ("step", "resource")
KNOWN = (*RUNNABLE, "group", "export", "subflow")
INNER = "_inner"
MAX_DEPTH = 32
"""Groups nest a few levels at most; the bound stops a parentId or handle cycle."""

Pin = tuple[str, str]
"""(node id, handle)."""


def from_graphbook(data: Mapping[str, Any], name: str = "<workflow>") -> Workflow:
    """Convert a Graphbook-format workflow; groups are flattened, subflows are refused."""
    raw_nodes, raw_edges = data.get("nodes", []), data.get("edges", [])
    if not isinstance(raw_nodes, list) or not isinstance(raw_edges, list):
        raise WorkflowFormatError(f"{name}: 'nodes' and 'edges' must be lists")
    by_id = _index(raw_nodes, name)
    workflow = Workflow(doc=str(data.get("doc", "")))
    for raw in by_id.values():
        if raw["type"] in RUNNABLE:
            node = _node(raw, by_id, name)
            workflow.nodes[node.id] = node
    edges = [_edge(raw, name) for raw in raw_edges]
    workflow.edges.extend(_flatten(edges, by_id))
    return workflow


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


def _node(raw: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]], name: str) -> Node:
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
    label = data.get("label", "")
    return Node(
        id=node_id,
        type=data["name"],
        params=params,
        position=_absolute_position(raw, by_id),
        label=label if isinstance(label, str) and label != data["name"] else "",
    )


def _absolute_position(
    raw: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]]
) -> tuple[float, float]:
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
    return (x, y)


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
