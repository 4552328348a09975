"""Edits: a batch of typed operations on a workflow, each checked as the editor checks, applied
all or none."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graphbook.components import Library
from graphbook.errors import GraphbookError, Problem
from graphbook.graph import edge_problem, param_problem
from graphbook.registry import Registry
from graphbook.server.mcp import library as components
from graphbook.spec import DATA_INPUT
from graphbook.workflow import COMPONENT, Edge, Node, Workflow, fresh_id

NEW_NODE_GAP = 300.0
"""How far right of the rightmost node a node added without a position is placed."""


class Op(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LibraryRef(Op):
    library: str = Field(description="the library component's name (components/NAME.json)")
    version: str | None = Field(
        None, description="the version list_nodes gave (its code_hash); refused if not current"
    )


class AddNode(Op):
    op: Literal["add_node"]
    type: str = Field(
        "Component",
        description="a node type from the catalog (list_nodes), e.g. 'LoadJSONL', or a library "
        "component as list_nodes names it, e.g. 'components/clean_rows'",
    )
    component: LibraryRef | None = Field(
        None,
        description='a library component by reference, {"library": NAME, "version": ...} '
        "(the same as type 'components/NAME')",
    )
    id: str | None = Field(None, description="the new node's id; by default a fresh one")
    title: str | None = Field(None, description="the title shown on the canvas")
    params: dict[str, Any] = Field(
        default_factory=dict, description="parameter values, checked against their types"
    )
    position: tuple[float, float] | None = Field(
        None, description="[x, y] on the canvas; by default right of the other nodes"
    )


class RemoveNode(Op):
    op: Literal["remove_node"]
    node: str = Field(description="the id of the node to remove (its wires go with it)")


class Connect(Op):
    op: Literal["connect"]
    source: str = Field(description="the id of the node the wire comes from")
    output: str = Field("out", description="the source node's output")
    target: str = Field(description="the id of the node the wire goes to")
    input: str = Field(
        DATA_INPUT, description="'in' (the data input) or a parameter fed by a resource node"
    )


class Disconnect(Op):
    op: Literal["disconnect"]
    source: str = Field(description="the id of the node the wire comes from")
    output: str = Field("out", description="the source node's output")
    target: str = Field(description="the id of the node the wire goes to")
    input: str = Field(DATA_INPUT, description="the target's input or parameter")


class SetParam(Op):
    op: Literal["set_param"]
    node: str = Field(description="the id of the node")
    param: str = Field(description="the parameter's name")
    value: Any = Field(description="its new value (null: back to the default)")


class Move(Op):
    op: Literal["move"]
    node: str = Field(description="the id of the node")
    position: tuple[float, float] = Field(description="[x, y] on the canvas")


Operation = Annotated[
    AddNode | RemoveNode | Connect | Disconnect | SetParam | Move, Field(discriminator="op")
]


class EditError(GraphbookError):
    """One operation of a batch cannot be applied; nothing of the batch was."""


def apply_all(workflow: Workflow, ops: list[Operation], registry: Registry) -> Workflow:
    """A copy of `workflow` with every operation applied in order; raises EditError naming
    the first operation that cannot be applied (index and what) and why. Library components
    are read from the workflow's components folder (`workflow.library`)."""
    edited = _copy(workflow)
    edit = _Edit(registry, Library(workflow.library))
    for index, op in enumerate(ops):
        problem = edit.apply(edited, op)
        if problem is not None:
            what = f"operation {index} ({describe(op)})"
            raise EditError(f"{what} refused, nothing applied: {problem}")
    return edited


def describe(op: Operation) -> str:
    match op:
        case AddNode():
            kind = f"components/{op.component.library}" if op.component else op.type
            return f"add_node {kind}" + (f" as {op.id!r}" if op.id else "")
        case Connect() | Disconnect():
            return f"{op.op} {op.source}.{op.output} -> {op.target}.{op.input}"
        case SetParam():
            return f"set_param {op.node}.{op.param}"
        case RemoveNode() | Move():
            return f"{op.op} {op.node}"


def _copy(workflow: Workflow) -> Workflow:
    edited = copy.copy(workflow)
    edited.nodes, edited.edges = dict(workflow.nodes), list(workflow.edges)
    edited.groups, edited.comments = dict(workflow.groups), dict(workflow.comments)
    edited.inputs = dict(workflow.inputs)
    return edited


class _Edit:
    """Operations applied with what they are checked against: the node types and the library."""

    def __init__(self, registry: Registry, library: Library) -> None:
        self.registry = registry
        self.library = library

    def apply(self, workflow: Workflow, op: Operation) -> Problem | str | None:
        match op:
            case AddNode():
                return self.add(workflow, op)
            case RemoveNode():
                return _remove(workflow, op.node)
            case Connect():
                return self.connect(workflow, op)
            case Disconnect():
                return _disconnect(workflow, op)
            case SetParam():
                return self.set(workflow, op)
            case Move():
                return _move(workflow, op)

    def add(self, workflow: Workflow, op: AddNode) -> Problem | str | None:
        taken = {*workflow.nodes, *workflow.groups, *workflow.comments}
        if op.id is not None and (not op.id.strip() or op.id in taken):
            return f"id {op.id!r} is taken or blank; choose another, or leave it out"
        name = op.component.library if op.component else components.library_name(op.type)
        if name is not None:
            version = op.component.version if op.component else None
            ref = components.reference(self.library, name, version)
            if isinstance(ref, str):
                return ref
            node_id = op.id or fresh_id(name.rsplit("/", 1)[-1].lower(), taken)
            node = Node(node_id, COMPONENT, {}, op.position or _free_spot(workflow), op.title or "")
            node = replace(node, component=ref)
        elif op.type not in self.registry:
            return f"unknown node type {op.type!r}; {self.registry.suggest(op.type)}"
        else:
            spec = self.registry.get(op.type)
            node_id = op.id or fresh_id(spec.name.lower(), taken)
            node = Node(node_id, spec.name, {}, op.position or _free_spot(workflow), op.title or "")
        for param, value in op.params.items():
            problem = self.param_problem(node, param, value)
            if problem is not None:
                return problem
        workflow.nodes[node_id] = replace(node, params=dict(op.params))
        return None

    def param_problem(self, node: Node, name: str, value: Any) -> Problem | str | None:
        found = components.inside(node, self.library)
        if isinstance(found, str):
            return found
        if found is not None:
            return components.param_check(node, found, self.registry, name, value)
        if node.type not in self.registry:
            known = self.registry.suggest(node.type)
            return f"node {node.id!r} is of unknown type {node.type!r}; {known}"
        return param_problem(node, self.registry.get(node.type), name, value)

    def connect(self, workflow: Workflow, op: Connect) -> Problem | str | None:
        for end in (op.source, op.target):
            if end not in workflow.nodes:
                return _missing(workflow, end)
        edge = Edge(op.source, op.output, op.target, op.input)
        if edge in workflow.edges:
            return f"{op.source}.{op.output} is wired to {op.target}.{op.input} already"
        if op.source == op.target:
            return f"a wire from node {op.source!r} to itself would make a cycle"
        for end, kind, port in ((op.source, "output", op.output), (op.target, "input", op.input)):
            found = components.inside(workflow.nodes[end], self.library)
            if isinstance(found, components.Inside):
                found = components.port_check(found, kind, port)
            if found is not None:
                return f"node {end!r}: {found}"
        problem = edge_problem(edge, workflow, self.registry)
        if problem is None:
            workflow.edges.append(edge)
        return problem

    def set(self, workflow: Workflow, op: SetParam) -> Problem | str | None:
        node = workflow.nodes.get(op.node)
        if node is None:
            return _missing(workflow, op.node)
        problem = self.param_problem(node, op.param, op.value)
        if problem is not None:
            return problem
        params = {k: v for k, v in node.params.items() if k != op.param}
        if op.value is not None:
            params[op.param] = op.value
        workflow.nodes[op.node] = replace(node, params=params)
        return None


def _free_spot(workflow: Workflow) -> tuple[float, float]:
    if not workflow.nodes:
        return (0.0, 0.0)
    right = max(workflow.nodes.values(), key=lambda n: n.position[0])
    return (right.position[0] + NEW_NODE_GAP, right.position[1])


def _remove(workflow: Workflow, node_id: str) -> str | None:
    if node_id not in workflow.nodes:
        return _missing(workflow, node_id)
    del workflow.nodes[node_id]
    workflow.edges = [e for e in workflow.edges if node_id not in (e.source, e.target)]
    for group in workflow.groups.values():
        if node_id in group.nodes:
            kept = tuple(n for n in group.nodes if n != node_id)
            workflow.groups[group.id] = replace(group, nodes=kept)
    workflow.inputs = {k: v for k, v in workflow.inputs.items() if v.node != node_id}
    return None


def _disconnect(workflow: Workflow, op: Disconnect) -> str | None:
    edge = Edge(op.source, op.output, op.target, op.input)
    if edge not in workflow.edges:
        return f"there is no wire {op.source}.{op.output} -> {op.target}.{op.input}"
    workflow.edges = [e for e in workflow.edges if e != edge]
    return None


def _move(workflow: Workflow, op: Move) -> str | None:
    node = workflow.nodes.get(op.node)
    if node is None:
        return _missing(workflow, op.node)
    workflow.nodes[op.node] = replace(node, position=op.position)
    return None


def _missing(workflow: Workflow, node_id: str) -> str:
    known = ", ".join(sorted(workflow.nodes)[:20]) or "none"
    return f"the workflow has no node {node_id!r} (its nodes: {known})"
