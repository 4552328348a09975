"""Components: a group of nodes used as one node, inline in a workflow or from the library.

A component node (type COMPONENT) holds its inside in its `component` field: its own nodes and
edges and the ports and parameters that cross its edge (graphbook/workflow.py reads and writes
them), or a reference to a library component, `components/NAME.json` beside `workflows/`.

`flatten` turns a workflow with components into the flat workflow the engine runs: an inner
node's id is its path (`comp/inner`, `outer/comp/inner` when nested), the values set on the
component node are set on the inner parameters they lead to, and every wire to or from the
component is rewired to the inner node its port leads to. Everything that runs a workflow goes
through it (build_graph calls it), so problems name inner nodes by their paths, and cache keys
and "run up to here" see inner nodes as nodes of their own.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from graphbook.errors import Problem, WorkflowError, WorkflowFormatError
from graphbook.text import encodable_json
from graphbook.workflow import (
    DATA_INPUT,
    ComponentBody,
    ComponentRef,
    Edge,
    Node,
    NodeRef,
    Port,
    PortMap,
    Workflow,
    WorkflowInput,
    WorkflowOutput,
    atomic_write,
    fresh_id,
)
from graphbook.workflow_codec import body_json, json_of, parse_body

FORMAT = "graphbook.component"
VERSION = 1
SEP = "/"
"""Between a component's id and an inner node's id in the flat graph."""
SUFFIX = ".json"
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")
"""What a library component may be called: its path under `components/`, without `.json`."""


# -- the library ------------------------------------------------------------------------------
def dumps(body: ComponentBody) -> str:
    """A library component file's text."""
    data = {"format": FORMAT, "version": VERSION, **body_json(body)}
    return encodable_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def loads(text: str, name: str) -> ComponentBody:
    """A library component file's inside; WorkflowFormatError naming what is wrong."""
    return from_json(json_of(text, name), name)


def from_json(data: Any, name: str) -> ComponentBody:
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise WorkflowFormatError(f'{name}: not a component file; expected "format": "{FORMAT}"')
    if data.get("version") != VERSION:
        raise WorkflowFormatError(
            f"{name}: component format version {data.get('version')!r} is not supported; "
            f"this Graphbook reads version {VERSION}"
        )
    return parse_body(data, name)


def version_of(text: str | bytes) -> str:
    """A library component's version: the digest of its file (12 hex digits)."""
    raw = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(raw).hexdigest()[:12]


class Library:
    """The library components in a folder (`components/`), by name (`NAME.json`)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def path(self, name: str) -> Path:
        if self.folder is None:
            raise WorkflowFormatError(
                f"library component {name!r}: there is no components folder (components/ "
                "beside the workflows folder); make one and save the component there"
            )
        if not NAME.fullmatch(name) or ".." in name.split(SEP):
            raise WorkflowFormatError(
                f"{name!r} is not a component name: use letters, digits, '_', '-', '.' and "
                "'/' between folders (e.g. clean_rows)"
            )
        return self.folder / f"{name}{SUFFIX}"

    def load(self, name: str) -> tuple[ComponentBody, str]:
        """The component and its current version."""
        path = self.path(name)
        try:
            raw = path.read_bytes()
        except OSError:
            raise WorkflowFormatError(
                f"library component {name!r}: no file {path} (it was renamed or deleted; "
                "save it again, or unpack the nodes that use it)"
            ) from None
        return loads(raw.decode("utf-8", "surrogateescape"), f"components/{name}{SUFFIX}"), (
            version_of(raw)
        )

    def save(self, name: str, body: ComponentBody) -> ComponentRef:
        """Write the component (atomically); a reference to its new version."""
        text = dumps(body)
        atomic_write(self.path(name), text)
        return ComponentRef(name, version_of(text))

    def ref(self, name: str) -> ComponentRef:
        """A reference to the library component `name` at its current version."""
        return ComponentRef(name, self.load(name)[1])

    def names(self) -> list[str]:
        if self.folder is None or not self.folder.is_dir():
            return []
        found = []
        for path in sorted(self.folder.rglob(f"*{SUFFIX}")):
            relative = path.relative_to(self.folder).with_suffix("").as_posix()
            if NAME.fullmatch(relative) and not relative.startswith("."):
                found.append(relative)
        return found


# -- building in Python -------------------------------------------------------------------------
PortLike = NodeRef | Port | tuple[str, str]


def component(
    inner: Workflow,
    inputs: Mapping[str, PortLike] | None = None,
    outputs: Mapping[str, PortLike] | None = None,
    params: Mapping[str, tuple[NodeRef | str, str]] | None = None,
    doc: str = "",
) -> ComponentBody:
    """A component made of the workflow `inner`: `inputs` name the inner ports fed from outside
    (a node: its data input `in`; `node["param"]` or `(id, "param")`: a resource wired in),
    `outputs` the inner outputs given out (a node: its `out`; `node["A"]`), `params` the inner
    parameters set on the component node (`{"threshold": (node, "threshold")}`).

    Add it to a workflow with `workflow.add(body, id=..., threshold=0.3)`, or save it to the
    library (Library(folder).save(name, body)) and add `library.ref(name)`."""

    def port(value: PortLike, default: str) -> PortMap:
        if isinstance(value, NodeRef):
            return PortMap(value.id, default)
        if isinstance(value, Port):
            return PortMap(value.node, value.name)
        return PortMap(value[0], value[1])

    def param(value: tuple[NodeRef | str, str]) -> PortMap:
        node, name = value
        return PortMap(node if isinstance(node, str) else node.id, name)

    body = ComponentBody(
        dict(inner.nodes),
        tuple(inner.edges),
        {k: port(v, DATA_INPUT) for k, v in (inputs or {}).items()},
        {k: port(v, "out") for k, v in (outputs or {}).items()},
        {k: param(v) for k, v in (params or {}).items()},
        doc or inner.doc,
        dict(inner.code),
    )
    for name, where in [*body.inputs.items(), *body.outputs.items(), *body.params.items()]:
        if where.node not in body.nodes:
            raise ValueError(f"component port {name!r} leads to node {where.node!r}, not in it")
    return body


# -- flattening ---------------------------------------------------------------------------------
@dataclass
class _Exposed:
    """A flattened component's ports: outer name -> (flat node id, its port)."""

    inputs: dict[str, tuple[str, str]] = field(default_factory=dict)
    outputs: dict[str, tuple[str, str]] = field(default_factory=dict)
    params: dict[str, tuple[str, str]] = field(default_factory=dict)
    origin: str = "this component"
    """How problems name the component: inline, or its library file and version."""


@dataclass
class _Flat:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def has_components(workflow: Workflow) -> bool:
    return any(node.component is not None for node in workflow.nodes.values())


def flatten(workflow: Workflow) -> tuple[Workflow, list[Problem]]:
    """The flat workflow the engine runs, and what is wrong with its components (each naming
    the node by its path). The workflow itself is not changed; one with no components is
    returned as it is."""
    if not has_components(workflow):
        return workflow, []
    flat = _Flat()
    exposed = _level(workflow.nodes, workflow.edges, "", Library(workflow.library), flat, ())
    result = copy.copy(workflow)
    result.nodes, result.edges = flat.nodes, flat.edges
    result.groups, result.comments = {}, {}
    result.inputs = {k: _input(v, exposed) for k, v in workflow.inputs.items()}
    result.outputs = {k: _output(v, exposed) for k, v in workflow.outputs.items()}
    return result, flat.problems


def expand(workflow: Workflow) -> Workflow:
    """`flatten`, raising WorkflowError when a component is wrong."""
    result, problems = flatten(workflow)
    if problems:
        raise WorkflowError(problems)
    return result


def _input(given: WorkflowInput, exposed: Mapping[str, _Exposed]) -> WorkflowInput:
    ports = exposed.get(given.node)
    if ports is None or given.param not in ports.params:
        return given
    node, param = ports.params[given.param]
    return replace(given, node=node, param=param)


def _output(shown: WorkflowOutput, exposed: Mapping[str, _Exposed]) -> WorkflowOutput:
    ports = exposed.get(shown.node)
    if ports is None or shown.output not in ports.outputs:
        return shown
    node, output = ports.outputs[shown.output]
    return replace(shown, node=node, output=output)


def _level(
    nodes: Mapping[str, Node],
    edges: Iterable[Edge],
    prefix: str,
    library: Library,
    flat: _Flat,
    within: tuple[str, ...],
) -> dict[str, _Exposed]:
    """Flattens one level's nodes and edges into `flat`; the ports of its component nodes."""
    exposed: dict[str, _Exposed] = {}
    broken: set[str] = set()
    for node in nodes.values():
        if node.component is None:
            flat.nodes[prefix + node.id] = replace(node, id=prefix + node.id)
            continue
        ports = _component(node, prefix, library, flat, within)
        if ports is None:
            broken.add(node.id)
        else:
            exposed[node.id] = ports
    for edge in edges:
        if edge.source in broken or edge.target in broken:
            continue
        source = _end(edge, edge.source, edge.output, "output", prefix, exposed, flat)
        target = _end(edge, edge.target, edge.input, "input", prefix, exposed, flat)
        if source is not None and target is not None:
            flat.edges.append(Edge(*source, *target, edge.points))
    return exposed


def _end(
    edge: Edge,
    node: str,
    port: str,
    kind: str,
    prefix: str,
    exposed: Mapping[str, _Exposed],
    flat: _Flat,
) -> tuple[str, str] | None:
    """One end of an edge in the flat graph: a component's port leads to its inner node."""
    ports = exposed.get(node)
    if ports is None:
        return prefix + node, port
    table = ports.outputs if kind == "output" else ports.inputs
    if port in table:
        return table[port]
    other = edge.target if kind == "output" else edge.source
    known = ", ".join(sorted(table)) or "none"
    flat.problems.append(
        Problem(
            prefix + node,
            f"{ports.origin} has no {kind} {port!r} (wired {'to' if kind == 'output' else 'from'} "
            f"{prefix + other!r})",
            f"its {kind}s are: {known}; rewire the edge, or open the component and expose "
            f"{port!r} again",
        )
    )
    return None


def _component(
    node: Node, prefix: str, library: Library, flat: _Flat, within: tuple[str, ...]
) -> _Exposed | None:
    path = prefix + node.id
    found = _body(node, path, library, flat, within)
    if found is None:
        return None
    body, origin, name = found
    inner = _with_values(node, body, path, origin, flat)
    if node.mode != "active":
        inner = {
            i: replace(n, mode=node.mode) if n.mode == "active" else n for i, n in inner.items()
        }
    deeper = (*within, name) if name else within
    sub = _level(inner, body.edges, path + SEP, library, flat, deeper)
    ports = _Exposed(origin=origin)
    for kind, table, target in (
        ("input", body.inputs, ports.inputs),
        ("output", body.outputs, ports.outputs),
        ("param", body.params, ports.params),
    ):
        for outer, where in table.items():
            resolved = _inner_port(where, kind, path, sub, inner)
            if resolved is None:
                flat.problems.append(
                    Problem(
                        path,
                        f"{origin}: its {kind} {outer!r} leads to node {where.node!r}, which is "
                        "not inside it",
                        f"open the component and expose {outer!r} from a node inside it",
                    )
                )
            else:
                target[outer] = resolved
    return ports


def _inner_port(
    where: PortMap, kind: str, path: str, sub: Mapping[str, _Exposed], inner: Mapping[str, Node]
) -> tuple[str, str] | None:
    if where.node not in inner:
        return None
    nested = sub.get(where.node)
    if nested is None:
        return f"{path}{SEP}{where.node}", where.port
    table = {"input": nested.inputs, "output": nested.outputs, "param": nested.params}[kind]
    return table.get(where.port)


def _body(
    node: Node, path: str, library: Library, flat: _Flat, within: tuple[str, ...]
) -> tuple[ComponentBody, str, str] | None:
    """The component's inside, how problems name it, and its library name ("" inline)."""
    if isinstance(node.component, ComponentBody):
        return node.component, "the component", ""
    assert isinstance(node.component, ComponentRef)
    ref = node.component
    if ref.library in within:
        flat.problems.append(
            Problem(
                path,
                f"library component {ref.library!r} contains itself",
                "open it and remove or unpack the component node inside it",
            )
        )
        return None
    try:
        body, version = library.load(ref.library)
    except WorkflowFormatError as exc:
        flat.problems.append(
            Problem(path, str(exc), "save the component to the library again, or unpack it")
        )
        return None
    origin = f"component components/{ref.library}{SUFFIX} (version {version}"
    origin += ")" if ref.version in ("", version) else f"; this node was made from {ref.version})"
    return body, origin, ref.library


def _with_values(
    node: Node, body: ComponentBody, path: str, origin: str, flat: _Flat
) -> dict[str, Node]:
    """The component's inner nodes with the values set on the component node applied."""
    inner = dict(body.nodes)
    for name, value in node.params.items():
        where = body.params.get(name)
        if where is None:
            known = ", ".join(sorted(body.params)) or "none"
            flat.problems.append(
                Problem(
                    path,
                    f"{origin} has no parameter {name!r}",
                    f"its parameters are: {known}; remove the value, or open the component "
                    f"and expose {name!r} again",
                )
            )
        elif where.node in inner and value is not None:
            target = inner[where.node]
            inner[where.node] = replace(target, params={**target.params, where.port: value})
    return inner


# -- unpacking ----------------------------------------------------------------------------------
def unpack(workflow: Workflow, node_id: str) -> Workflow:
    """A copy of `workflow` with the component node `node_id` replaced by its inner nodes
    (their ids kept where free, laid out from the component's position), its exposed values
    set on them and its wires rewired to the inner ports they led to."""
    node = workflow.nodes.get(node_id)
    if node is None or node.component is None:
        raise ValueError(f"{node_id!r} is not a component node of the workflow")
    if isinstance(node.component, ComponentRef):
        body = Library(workflow.library).load(node.component.library)[0]
    else:
        body = node.component
    flat = _Flat()
    inner = _with_values(node, body, node_id, "the component", flat)
    if flat.problems:
        raise WorkflowError(flat.problems)
    taken = set(workflow.nodes) - {node_id}
    ids: dict[str, str] = {}
    for inner_id in inner:
        ids[inner_id] = fresh_id(inner_id, taken)
        taken.add(ids[inner_id])
    result = copy.copy(workflow)
    result.nodes = {k: v for k, v in workflow.nodes.items() if k != node_id}
    left = min((n.position[0] for n in inner.values()), default=0.0)
    top = min((n.position[1] for n in inner.values()), default=0.0)
    for inner_id, inner_node in inner.items():
        x, y = inner_node.position
        position = (node.position[0] + x - left, node.position[1] + y - top)
        result.nodes[ids[inner_id]] = replace(inner_node, id=ids[inner_id], position=position)
    result.edges = [_rewired(e, node_id, body, ids) for e in workflow.edges]
    result.edges += [
        replace(e, source=ids[e.source], target=ids[e.target])
        for e in body.edges
        if e.source in ids and e.target in ids
    ]
    result.groups = {
        k: replace(g, nodes=tuple(n for n in g.nodes if n != node_id))
        for k, g in workflow.groups.items()
    }
    return result


def _rewired(edge: Edge, node_id: str, body: ComponentBody, ids: Mapping[str, str]) -> Edge:
    if edge.source == node_id and edge.output in body.outputs:
        where = body.outputs[edge.output]
        edge = replace(edge, source=ids.get(where.node, where.node), output=where.port)
    if edge.target == node_id and edge.input in body.inputs:
        where = body.inputs[edge.input]
        edge = replace(edge, target=ids.get(where.node, where.node), input=where.port)
    return edge


# -- what a component shows as a node -----------------------------------------------------------
@dataclass(frozen=True)
class ExposedParam:
    """A parameter a component node shows: the inner parameter it sets, and its value there."""

    name: str
    node: Node
    param: str
    value: Any


def exposed_params(body: ComponentBody, library: Library) -> list[ExposedParam]:
    """The component's parameters, each traced to the plain inner node it sets (through
    nested components); one leading nowhere is left out (flattening reports it)."""
    found = []
    for name in sorted(body.params):
        traced = _trace(body, body.params[name], library, 0)
        if traced is not None:
            node, param, value = traced
            found.append(ExposedParam(name, node, param, value))
    return found


def _trace(
    body: ComponentBody, where: PortMap, library: Library, depth: int
) -> tuple[Node, str, Any] | None:
    node = body.nodes.get(where.node)
    if node is None or depth > 16:
        return None
    if node.component is None:
        return node, where.port, node.params.get(where.port)
    try:
        inner = (
            node.component
            if isinstance(node.component, ComponentBody)
            else library.load(node.component.library)[0]
        )
    except WorkflowFormatError:
        return None
    deeper = inner.params.get(where.port)
    traced = None if deeper is None else _trace(inner, deeper, library, depth + 1)
    if traced is None or where.port not in node.params:
        return traced
    return traced[0], traced[1], node.params[where.port]
