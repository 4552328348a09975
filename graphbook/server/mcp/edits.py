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
from graphbook.workflow import COMPONENT, Edge, Node, Workflow

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
    type: str | None = Field(
        None,
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


MAX_OPERATIONS = 50_000
"""Operations one edit_workflow call may hold (a batch applies in linear time; more than this
is refused before anything is applied: split it)."""


def apply_all(workflow: Workflow, ops: list[Operation], registry: Registry) -> Workflow:
    """A copy of `workflow` with every operation applied in order; raises EditError naming
    the first operation that cannot be applied (index and what) and why. Library components
    are read from the workflow's components folder (`workflow.library`). The time it takes
    grows with the workflow and the batch, not with their product."""
    if len(ops) > MAX_OPERATIONS:
        raise EditError(
            f"edit_workflow takes at most {MAX_OPERATIONS:,} operations a call (MAX_OPERATIONS), "
            f"not {len(ops):,}; split the batch"
        )
    edit = _Edit(workflow, registry, Library(workflow.library))
    for index, op in enumerate(ops):
        problem = edit.apply(op)
        if problem is not None:
            what = f"operation {index} ({describe(op)})"
            raise EditError(f"{what} refused, nothing applied: {problem}")
    return edit.result()


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


class _Wiring:
    """A workflow's edges as an ordered set, with the edges that touch each node: adding,
    finding and removing a wire, or a node's wires, costs no walk over all of them."""

    def __init__(self, edges: list[Edge]) -> None:
        self.edges: dict[Edge, Edge] = {}
        self.touching: dict[str, set[Edge]] = {}
        for edge in edges:
            self.add(edge)

    def __contains__(self, edge: Edge) -> bool:
        return edge in self.edges

    def add(self, edge: Edge) -> None:
        self.edges.setdefault(edge, edge)
        for end in (edge.source, edge.target):
            self.touching.setdefault(end, set()).add(edge)

    def remove(self, edge: Edge) -> None:
        del self.edges[edge]
        for end in (edge.source, edge.target):
            self.touching.get(end, set()).discard(edge)

    def remove_node(self, node_id: str) -> None:
        for edge in self.touching.pop(node_id, set()):
            self.remove(edge)

    def list(self) -> list[Edge]:
        return list(self.edges.values())


class _Edit:
    """Operations applied to a copy of a workflow, with what they are checked against (the node
    types and the library) and what keeps each one's cost small: the ids taken, the next
    fresh id of each stem, the wiring's index and the rightmost node."""

    def __init__(self, workflow: Workflow, registry: Registry, library: Library) -> None:
        self.registry = registry
        self.library = library
        self.workflow = edited = copy.copy(workflow)
        edited.nodes = dict(workflow.nodes)
        edited.groups, edited.comments = dict(workflow.groups), dict(workflow.comments)
        edited.inputs, edited.outputs = dict(workflow.inputs), dict(workflow.outputs)
        self.wiring = _Wiring(workflow.edges)
        self.taken = {*edited.nodes, *edited.groups, *edited.comments}
        self.stems: dict[str, int] = {}
        self.rightmost: Node | None = None
        self._find_rightmost()

    def result(self) -> Workflow:
        self.workflow.edges = self.wiring.list()
        return self.workflow

    def apply(self, op: Operation) -> Problem | str | None:
        match op:
            case AddNode():
                return self.add(op)
            case RemoveNode():
                return self.remove(op.node)
            case Connect():
                return self.connect(op)
            case Disconnect():
                return self.disconnect(op)
            case SetParam():
                return self.set(op)
            case Move():
                return self.move(op)

    def add(self, op: AddNode) -> Problem | str | None:
        if op.id is not None and (not op.id.strip() or op.id in self.taken):
            return f"id {op.id!r} is taken or blank; choose another, or leave it out"
        if op.type is None and op.component is None:
            return (
                "add_node needs a `type`: a node type as list_nodes names it (e.g. "
                "'LoadJSONL'), or a library component ('components/NAME')"
            )
        node = self.new_node(op)
        if isinstance(node, str):
            return node
        for param, value in op.params.items():
            problem = self.param_problem(node, param, value)
            if problem is not None:
                return problem
        self.place(replace(node, params=dict(op.params)))
        return None

    def new_node(self, op: AddNode) -> Node | str:
        position = op.position or self.free_spot()
        name = op.component.library if op.component else components.library_name(op.type or "")
        if name is not None:
            version = op.component.version if op.component else None
            ref = components.reference(self.library, name, version)
            if isinstance(ref, str):
                return ref
            node_id = op.id or self.fresh_id(name.rsplit("/", 1)[-1].lower())
            node = Node(node_id, COMPONENT, {}, position, op.title or "")
            return replace(node, component=ref)
        kind = op.type or ""
        if kind not in self.registry:
            return f"unknown node type {kind!r}; {self.registry.suggest(kind)}"
        spec = self.registry.get(kind)
        node_id = op.id or self.fresh_id(spec.name.lower())
        return Node(node_id, spec.name, {}, position, op.title or "")

    def place(self, node: Node) -> None:
        self.workflow.nodes[node.id] = node
        self.taken.add(node.id)
        if self.rightmost is None or node.position[0] > self.rightmost.position[0]:
            self.rightmost = node

    def fresh_id(self, stem: str) -> str:
        """`stem`, else `stem_2`, `stem_3`, ... (as workflow.fresh_id), counting on from
        the last one this edit gave."""
        if stem not in self.taken:
            return stem
        n = self.stems.get(stem, 2)
        while f"{stem}_{n}" in self.taken:
            n += 1
        self.stems[stem] = n + 1
        return f"{stem}_{n}"

    def free_spot(self) -> tuple[float, float]:
        right = self.rightmost
        if right is None:
            return (0.0, 0.0)
        return (right.position[0] + NEW_NODE_GAP, right.position[1])

    def _find_rightmost(self) -> None:
        nodes = self.workflow.nodes.values()
        self.rightmost = max(nodes, key=lambda n: n.position[0]) if nodes else None

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

    def remove(self, node_id: str) -> str | None:
        workflow = self.workflow
        if node_id not in workflow.nodes:
            return self.missing(node_id)
        del workflow.nodes[node_id]
        self.taken.discard(node_id)
        self.wiring.remove_node(node_id)
        for group in workflow.groups.values():
            if node_id in group.nodes:
                kept = tuple(n for n in group.nodes if n != node_id)
                workflow.groups[group.id] = replace(group, nodes=kept)
        if any(given.node == node_id for given in workflow.inputs.values()):
            workflow.inputs = {k: v for k, v in workflow.inputs.items() if v.node != node_id}
        if any(shown.node == node_id for shown in workflow.outputs.values()):
            workflow.outputs = {k: v for k, v in workflow.outputs.items() if v.node != node_id}
        if self.rightmost is not None and self.rightmost.id == node_id:
            self._find_rightmost()
        return None

    def connect(self, op: Connect) -> Problem | str | None:
        workflow = self.workflow
        for end in (op.source, op.target):
            if end not in workflow.nodes:
                return self.missing(end)
        edge = Edge(op.source, op.output, op.target, op.input)
        if edge in self.wiring:
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
            self.wiring.add(edge)
        return problem

    def disconnect(self, op: Disconnect) -> str | None:
        edge = Edge(op.source, op.output, op.target, op.input)
        if edge not in self.wiring:
            return f"there is no wire {op.source}.{op.output} -> {op.target}.{op.input}"
        self.wiring.remove(edge)
        return None

    def set(self, op: SetParam) -> Problem | str | None:
        node = self.workflow.nodes.get(op.node)
        if node is None:
            return self.missing(op.node)
        problem = self.param_problem(node, op.param, op.value)
        if problem is not None:
            return problem
        params = {k: v for k, v in node.params.items() if k != op.param}
        if op.value is not None:
            params[op.param] = op.value
        self.workflow.nodes[op.node] = replace(node, params=params)
        return None

    def move(self, op: Move) -> str | None:
        node = self.workflow.nodes.get(op.node)
        if node is None:
            return self.missing(op.node)
        moved = replace(node, position=op.position)
        self.workflow.nodes[op.node] = moved
        if self.rightmost is not None and self.rightmost.id == op.node:
            self._find_rightmost()
        elif self.rightmost is None or moved.position[0] > self.rightmost.position[0]:
            self.rightmost = moved
        return None

    def missing(self, node_id: str) -> str:
        known = ", ".join(sorted(self.workflow.nodes)[:20]) or "none"
        return f"the workflow has no node {node_id!r} (its nodes: {known})"
