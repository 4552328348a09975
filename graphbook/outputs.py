"""Workflow outputs: the node outputs a workflow shows as its results (an app's gallery, tables,
files and text). Declared in the file (`outputs`), else found: its sinks (the nodes that write
files) and its last image nodes. Their problems, and the files its nodes write (an app's run
writes them into a folder of its own)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from graphbook.errors import Problem
from graphbook.registry import Registry
from graphbook.spec import NodeSpec
from graphbook.workflow import DATA_INPUT, OutputKind, Workflow, WorkflowOutput

TABLE_SUFFIXES = (".csv", ".jsonl", ".parquet")
"""The files a sink writes that an app shows as a table."""
IMAGES_CATEGORY = "Images"


@dataclass(frozen=True)
class Written:
    """A file or folder a node writes: the parameter that names it, and the value it has."""

    node: str
    param: str
    path: str


def output_problems(workflow: Workflow, registry: Registry) -> list[Problem]:
    """What is wrong with the workflow's outputs: a node or an output that does not exist."""
    problems = []
    for name, shown in sorted(workflow.outputs.items()):
        node = workflow.nodes.get(shown.node)
        if node is None:
            problems.append(
                Problem(
                    None,
                    f"output {name!r} shows node {shown.node!r}, which does not exist",
                    "remove the output, or mark an output of another node",
                )
            )
        elif node.type in registry and shown.output not in registry.get(node.type).outputs:
            spec = registry.get(node.type)
            problems.append(
                Problem(
                    node.id,
                    f"output {name!r} shows output {shown.output!r}, which {spec.name} does "
                    "not have",
                    f"its outputs are: {', '.join(spec.outputs) or 'none'}",
                )
            )
    return problems


def shown_outputs(workflow: Workflow, registry: Registry) -> dict[str, WorkflowOutput]:
    """The outputs the workflow shows: those it declares, else its sinks (a table for a file
    of TABLE_SUFFIXES, images for an image node, else files) and its image nodes that feed no
    other image node. Nodes of unknown types, resources and nodes that do not run are left
    out of the found ones."""
    if workflow.outputs:
        return dict(workflow.outputs)
    found: dict[str, WorkflowOutput] = {}
    for node_id, spec in _specs(workflow, registry):
        kind = _kind(workflow, node_id, spec, registry)
        if kind is not None:
            found[_name(node_id, found)] = WorkflowOutput(node_id, spec.outputs[0], kind)
    return found


def _specs(workflow: Workflow, registry: Registry) -> Iterator[tuple[str, NodeSpec]]:
    for node in workflow.nodes.values():
        if node.type in registry and node.mode == "active":
            spec = registry.get(node.type)
            if spec.kind != "resource" and spec.outputs:
                yield node.id, spec


def _kind(
    workflow: Workflow, node_id: str, spec: NodeSpec, registry: Registry
) -> OutputKind | None:
    images = spec.category.split("/")[0] == IMAGES_CATEGORY or "Image" in spec.name
    if spec.writes:
        paths = [w.path.lower() for w in written(workflow, registry) if w.node == node_id]
        if any(path.endswith(TABLE_SUFFIXES) for path in paths):
            return "table"
        return "images" if images else "file"
    if spec.category.split("/")[0] == IMAGES_CATEGORY and not _feeds_images(
        workflow, node_id, registry
    ):
        return "images"
    return None


def _feeds_images(workflow: Workflow, node_id: str, registry: Registry) -> bool:
    """Whether an image node lies downstream of `node_id` (along data wires)."""
    seen, todo = {node_id}, [node_id]
    while todo:
        current = todo.pop()
        for edge in workflow.edges:
            if edge.source != current or edge.input != DATA_INPUT or edge.target in seen:
                continue
            seen.add(edge.target)
            todo.append(edge.target)
            if _is_image_node(workflow, edge.target, registry):
                return True
    return False


def _is_image_node(workflow: Workflow, node_id: str, registry: Registry) -> bool:
    node = workflow.nodes.get(node_id)
    if node is None or node.type not in registry:
        return False
    return registry.get(node.type).category.split("/")[0] == IMAGES_CATEGORY


def _name(node_id: str, taken: dict[str, WorkflowOutput]) -> str:
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", node_id)
    stem = stem if re.match(r"[A-Za-z_]", stem) else f"output_{stem}"
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}_{n}", n + 1
    return name


def written(workflow: Workflow, registry: Registry) -> list[Written]:
    """The files and folders the workflow's nodes write (NodeSpec.writes), by the values their
    parameters have (or their defaults); empty values are left out."""
    found = []
    for node in workflow.nodes.values():
        if node.type not in registry:
            continue
        spec = registry.get(node.type)
        for param in spec.writes:
            declared = spec.param(param)
            value = node.params.get(param, declared.default if declared else None)
            if isinstance(value, str) and value:
                found.append(Written(node.id, param, value))
    return found
