"""Reading workflow files written by Graphbook 0.13 (React Flow nodes and edges) as ours."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphbook.errors import WorkflowFormatError
from graphbook.workflow import Edge, Node, Workflow

RUNNABLE = ("step", "resource")


def from_graphbook(data: Mapping[str, Any], name: str = "<workflow>") -> Workflow:
    """Convert a Graphbook-format workflow; groups are flattened, subflows are refused."""
    raw_nodes = data.get("nodes", [])
    if not isinstance(raw_nodes, list) or not isinstance(data.get("edges", []), list):
        raise WorkflowFormatError(f"{name}: 'nodes' and 'edges' must be lists")
    by_id = {str(n.get("id")): n for n in raw_nodes if isinstance(n, Mapping)}
    workflow = Workflow(doc=str(data.get("doc", "")))
    for raw in by_id.values():
        kind = raw.get("type")
        if kind in ("subflow", "export"):
            raise WorkflowFormatError(
                f"{name}: node {raw.get('id')!r} is a {kind}; subflows are not supported yet, "
                "so open the subflow's own file and copy its nodes in"
            )
        if kind in RUNNABLE:
            node = _node(raw, by_id, name)
            workflow.nodes[node.id] = node
    for raw in data.get("edges", []):
        edge = _edge(raw, name)
        if edge.source in workflow.nodes and edge.target in workflow.nodes:
            workflow.edges.append(edge)
    return workflow


def _node(raw: Mapping[str, Any], by_id: Mapping[str, Any], name: str) -> Node:
    data = raw.get("data")
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        raise WorkflowFormatError(f"{name}: node {raw.get('id')!r} has no data.name")
    params = {
        key: spec["value"]
        for key, spec in (data.get("parameters") or {}).items()
        if isinstance(spec, Mapping) and "value" in spec
    }
    label = data.get("label", "")
    return Node(
        id=str(raw["id"]),
        type=data["name"],
        params=params,
        position=_absolute_position(raw, by_id),
        label=label if isinstance(label, str) and label != data["name"] else "",
    )


def _absolute_position(raw: Mapping[str, Any], by_id: Mapping[str, Any]) -> tuple[float, float]:
    """Children of a group store positions relative to it; ours are absolute."""
    x, y = 0.0, 0.0
    current: Mapping[str, Any] | None = raw
    for _ in range(32):  # groups nest at most a few levels; the bound stops a cycle
        if current is None:
            break
        position = current.get("position") or {}
        x += float(position.get("x", 0) or 0)
        y += float(position.get("y", 0) or 0)
        current = by_id.get(str(current.get("parentId"))) if current.get("parentId") else None
    return (x, y)


def _edge(raw: Any, name: str) -> Edge:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{name}: an edge must be an object")
    try:
        return Edge(
            source=str(raw["source"]),
            output=str(raw.get("sourceHandle") or "out"),
            target=str(raw["target"]),
            input=str(raw.get("targetHandle") or "in"),
        )
    except KeyError as exc:
        raise WorkflowFormatError(f"{name}: an edge has no {exc.args[0]!r}") from None
