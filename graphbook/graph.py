"""The validated graph: a workflow checked against the registry, ready for an executor.

Every problem is collected before anything runs, each naming its node and how to fix it.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from graphbook.components import flatten
from graphbook.errors import ParamError, Problem, WorkflowError
from graphbook.inputs import input_problems
from graphbook.modes import OFF_WORDS, live_edges, off_modes
from graphbook.outputs import output_problems
from graphbook.params import ParamSpec, accepts, coerce, expected, gives_text
from graphbook.registry import Registry
from graphbook.spec import DATA_INPUT, NodeSpec
from graphbook.workflow import Edge, Node, NodeMode, Workflow


@dataclass(frozen=True)
class GraphNode:
    """A node whose kind is known and whose literal parameters are typed."""

    id: str
    spec: NodeSpec
    params: dict[str, Any]
    """The parameters that have a value (given, or the declared default); one with neither is
    left out, as Graphbook 0.13 left it out, so the node's own Python default holds."""
    resources: dict[str, str] = field(default_factory=dict)
    """Parameter name -> id of the resource node wired to it."""
    label: str = ""

    @property
    def title(self) -> str:
        return self.label or self.spec.name


@dataclass(frozen=True)
class Graph:
    """Nodes in topological order, and the data edges between them."""

    nodes: dict[str, GraphNode]
    edges: tuple[Edge, ...]
    off: dict[str, NodeMode] = field(default_factory=dict)
    """The workflow's bypassed and muted nodes, left out of `nodes` (graphbook/modes.py)."""

    def data_edges(self) -> list[Edge]:
        return [e for e in self.edges if e.input == DATA_INPUT]

    def consumers(self, node_id: str, output: str) -> list[str]:
        return [e.target for e in self.data_edges() if (e.source, e.output) == (node_id, output)]

    def upstream(self, node_id: str) -> list[str]:
        """Nodes sending data or resources to `node_id` directly."""
        return [e.source for e in self.edges if e.target == node_id]

    def members(self, node_id: str) -> list[str]:
        """`node_id` itself, or the nodes inside the component `node_id` (`node_id/...`): what
        a run up to it, or a clear of it, is about; empty when the graph has neither."""
        if node_id in self.nodes:
            return [node_id]
        return inner_nodes(node_id, self.nodes)

    def ancestors(self, node_id: str) -> set[str]:
        """`node_id` (a component: the nodes inside it) and every node it depends on, data and
        resources alike."""
        seen: set[str] = set()
        todo = self.members(node_id) or [node_id]
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(self.upstream(current))
        return seen

    def descendants(self, node_id: str) -> set[str]:
        """`node_id` and every node it feeds, data and resources alike."""
        seen, todo = set(), [node_id]
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(e.target for e in self.edges if e.source == current)
        return seen

    def subgraph(self, keep: Iterable[str]) -> Graph:
        kept = set(keep)
        nodes = {i: n for i, n in self.nodes.items() if i in kept}
        edges = tuple(e for e in self.edges if {e.source, e.target} <= kept)
        return Graph(nodes, edges, self.off)


def build_graph(workflow: Workflow, registry: Registry) -> Graph:
    """Check `workflow` against `registry`; raise WorkflowError listing every problem.

    Components are expanded first (graphbook/components.py): the graph's inner nodes have
    their paths as ids. Bypassed and muted nodes are taken out next (graphbook/modes.py): they
    are not checked, and the graph is the wiring that is left."""
    for code in workflow.code.values():
        registry.add(code)
    workflow, problems = flatten(workflow)
    off = off_modes(workflow.nodes)
    problems += input_problems(workflow, registry) + output_problems(workflow, registry)
    workflow = _running_part(workflow, off)
    specs = _specs(workflow, registry, problems)
    wired = _check_edges(workflow, specs, problems)
    nodes = {
        node.id: _graph_node(node, specs[node.id], wired.get(node.id, {}), problems)
        for node in workflow.nodes.values()
        if node.id in specs
    }
    order = _topological(workflow, problems)
    if problems:
        raise WorkflowError(problems)
    return Graph({i: nodes[i] for i in order}, tuple(workflow.edges), off)


def edge_problem(edge: Edge, workflow: Workflow, registry: Registry) -> Problem | None:
    """What is wrong with adding `edge` to `workflow` (its ends, ports and value type), as
    build_graph would say it; None if nothing. An editor checks one wire with it."""
    specs = {
        end: registry.get(workflow.nodes[end].type)
        for end in (edge.source, edge.target)
        if end in workflow.nodes and workflow.nodes[end].type in registry
    }
    problem = _edge_problem(edge, workflow, specs)
    if problem is None and edge.input != DATA_INPUT:
        problem = _value_type_problem(edge, specs)
    return problem


def param_problem(node: Node, spec: NodeSpec, name: str, value: Any) -> Problem | None:
    """What is wrong with giving `node` (of `spec`) the value `value` for parameter `name`,
    as build_graph would say it; None if nothing."""
    param = spec.param(name)
    if param is None:
        return _unknown_param(node, spec, name)
    if value is None or param.is_resource:
        return None
    try:
        coerce(param, value)
    except ParamError as exc:
        return Problem(node.id, str(exc), f"give {param.name!r} {expected(param.type)}")
    return None


def _running_part(workflow: Workflow, off: dict[str, NodeMode]) -> Workflow:
    if not off:
        return workflow
    running = Workflow(workflow.doc)
    running.nodes = {i: n for i, n in workflow.nodes.items() if i not in off}
    running.edges = live_edges(workflow.edges, off)
    return running


def _specs(workflow: Workflow, registry: Registry, problems: list[Problem]) -> dict[str, NodeSpec]:
    specs: dict[str, NodeSpec] = {}
    for node in workflow.nodes.values():
        if node.type in registry:
            specs[node.id] = registry.get(node.type)
        else:
            message = f"unknown node type {node.type!r}"
            fix, module = registry.suggest(node.type), node.module
            if module:
                fix = f"the file says it comes from Python module {module!r}, install it; {fix}"
            problems.append(Problem(node.id, message, fix))
    return specs


def _check_edges(
    workflow: Workflow, specs: dict[str, NodeSpec], problems: list[Problem]
) -> dict[str, dict[str, str]]:
    """Check every edge; return, per node, the resources wired to its parameters."""
    wired: dict[str, dict[str, str]] = defaultdict(dict)
    for edge in workflow.edges:
        problem = _edge_problem(edge, workflow, specs)
        if problem is not None:
            problems.append(problem)
        elif edge.input != DATA_INPUT:
            if edge.input in wired[edge.target]:
                problems.append(
                    Problem(
                        edge.target,
                        f"parameter {edge.input!r} is wired twice",
                        "remove one of the two resource edges",
                    )
                )
            wired[edge.target][edge.input] = edge.source
            mismatch = _value_type_problem(edge, specs)
            if mismatch is not None:
                problems.append(mismatch)
    return wired


def _edge_problem(edge: Edge, workflow: Workflow, specs: dict[str, NodeSpec]) -> Problem | None:
    for end in (edge.source, edge.target):
        if end not in workflow.nodes:
            other = edge.target if end == edge.source else edge.source
            return Problem(
                other,
                f"an edge connects it to node {end!r}, which does not exist",
                "delete the edge or add the node",
            )
    source, target = specs.get(edge.source), specs.get(edge.target)
    if source is None or target is None:
        return None  # the unknown node type is already reported
    if edge.output not in source.outputs:
        return Problem(
            edge.source,
            f"has no output {edge.output!r} (edge to {edge.target!r})",
            f"its outputs are: {', '.join(source.outputs) or 'none'}",
        )
    if edge.input == DATA_INPUT:
        return _data_edge_problem(edge, source, target)
    return _param_edge_problem(edge, source, target)


def _data_edge_problem(edge: Edge, source: NodeSpec, target: NodeSpec) -> Problem | None:
    if source.is_resource:
        return Problem(
            edge.target,
            f"resource {edge.source!r} is wired to its data input 'in'",
            "wire resources to a parameter, and step outputs to 'in'",
        )
    if not target.inputs:
        return Problem(
            edge.target,
            f"takes no input, but {edge.source!r} is wired into it",
            "a source or resource has no data input; delete the edge",
        )
    return None


def _param_edge_problem(edge: Edge, source: NodeSpec, target: NodeSpec) -> Problem | None:
    if target.param(edge.input) is None:
        names = ", ".join(p.name for p in target.params) or "none"
        return Problem(
            edge.target,
            f"has no input or parameter {edge.input!r} (edge from {edge.source!r})",
            f"its parameters are: {names}",
        )
    if not source.is_resource:
        return Problem(
            edge.target,
            f"parameter {edge.input!r} is wired from the step output {edge.source}.{edge.output}",
            "only resource nodes can feed parameters; wire the step into 'in' instead",
        )
    return None


def _value_type_problem(edge: Edge, specs: dict[str, NodeSpec]) -> Problem | None:
    """A resource wired into a parameter that cannot take what it gives (a model into a path)."""
    source, target = specs.get(edge.source), specs.get(edge.target)
    param = target.param(edge.input) if target is not None else None
    if source is None or param is None or accepts(param.type, source.gives):
        return None
    return Problem(
        edge.target,
        f"parameter {edge.input!r} expects {expected(param.type)}, but resource "
        f"{edge.source!r} ({source.name}) gives {gives_text(source.gives)}",
        f"delete the wire and give {edge.input!r} a value, or wire a resource that "
        f"gives {expected(param.type)}",
    )


def _graph_node(
    node: Node, spec: NodeSpec, wired: dict[str, str], problems: list[Problem]
) -> GraphNode:
    problems.extend(
        _unknown_param(node, spec, name) for name in node.params if not spec.param(name)
    )
    values: dict[str, Any] = {}
    for param in spec.params:
        if param.name in wired:
            continue
        raw = node.params.get(param.name)
        value = param.default if raw is None else raw
        if value is None:  # no value and no default: left out, so the node's own default holds
            if param.required:
                problems.append(_missing(node, param))
            continue
        try:
            values[param.name] = coerce(param, value) if not param.is_resource else value
        except ParamError as exc:
            problems.append(
                Problem(node.id, str(exc), f"give {param.name!r} {expected(param.type)}")
            )
    return GraphNode(node.id, spec, values, dict(wired), node.label)


def _unknown_param(node: Node, spec: NodeSpec, name: str) -> Problem:
    names = [p.name for p in spec.params]
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    known = ", ".join(names) or "none"
    return Problem(
        node.id, f"{spec.name} has no parameter {name!r}", f"{hint}its parameters are: {known}"
    )


def _missing(node: Node, param: ParamSpec) -> Problem:
    if param.is_resource:
        how = f"wire a resource node to {param.name!r}"
    else:
        how = f"give {param.name!r} {expected(param.type)}, or wire a resource node to it"
    return Problem(node.id, f"required parameter {param.name!r} has no value", how)


def _topological(workflow: Workflow, problems: list[Problem]) -> list[str]:
    """Node ids sources-first (Kahn's algorithm); a cycle is reported with its nodes."""
    ids = list(workflow.nodes)
    indegree = dict.fromkeys(ids, 0)
    children: dict[str, list[str]] = defaultdict(list)
    for edge in workflow.edges:
        if edge.source in indegree and edge.target in indegree:
            indegree[edge.target] += 1
            children[edge.source].append(edge.target)
    ready = [i for i in ids if indegree[i] == 0]
    order: list[str] = []
    while ready:
        current = ready.pop(0)
        order.append(current)
        for child in children[current]:
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
    stuck = set(ids) - set(order)
    if stuck:
        cycle = _cycle(stuck, children)
        problems.append(
            Problem(
                cycle[0],
                "is part of a cycle: " + " -> ".join(cycle),
                "remove one of these edges so that data flows one way",
            )
        )
    return order


def _cycle(stuck: set[str], children: dict[str, list[str]]) -> list[str]:
    """One cycle among the nodes Kahn's algorithm could not order, as `a, b, ..., a`.

    Every stuck node is on a cycle or downstream of one; walking backwards from any of
    them along stuck parents must come round to a node already seen.
    """
    parents: dict[str, list[str]] = defaultdict(list)
    for parent in sorted(stuck):
        for child in children[parent]:
            if child in stuck:
                parents[child].append(parent)
    path, current = [], min(stuck)
    while current not in path:
        path.append(current)
        current = parents[current][0]
    cycle = path[path.index(current) :]
    return [*reversed(cycle), cycle[-1]]


def target_problem(graph: Graph, node: str, *, retrigger: bool = False) -> str | None:
    """Why `node` cannot be the node a run runs up to (with `retrigger`, the node it runs
    again); None when it can. Every front end and the executor check a target with this."""
    off = node if node in graph.off else None
    if off is None and not graph.members(node):  # a component all of it off
        off = next(iter(inner_nodes(node, graph.off)), None)
    if off is not None:
        word = OFF_WORDS[graph.off[off]]
        return f"node {node!r} is {word}, so it does not run; turn it back on first"
    members = graph.members(node)
    if not members:
        known = ", ".join(graph.nodes) or "none"
        return f"the workflow has no node {node!r}; its nodes are: {known}"
    if retrigger and node not in graph.nodes:
        return f"node {node!r} is a component; re-trigger a node inside it ({members[0]!r}, ...)"
    if retrigger and graph.nodes[node].spec.is_resource:
        return f"node {node!r} is a resource; re-trigger a source or a step"
    return None


def inner_nodes(component: str, nodes: Iterable[str]) -> list[str]:
    """The ids among `nodes` of the nodes inside the component `component` (its path first)."""
    prefix = f"{component}/"
    return [node for node in nodes if node.startswith(prefix)]
