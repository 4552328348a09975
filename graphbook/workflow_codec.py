"""The canonical workflow file format, field by field: writing a workflow (stable order, one
line per edge and per position, so diffs stay small) and reading one with checks that name
what is wrong and where; a Graphbook 0.13 file is read through formats/graphbook013.py.

It knows the parts a workflow is made of (workflow_parts.py), not the Workflow: what it reads
is Contents, from which Workflow.from_json (workflow.py) makes one, and what it writes is
anything shaped as a workflow (Drawing), as a Workflow is."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from graphbook.errors import Problem, WorkflowFormatError
from graphbook.formats import graphbook013
from graphbook.text import encodable_json
from graphbook.workflow_parts import (
    COMPONENT,
    DATA_INPUT,
    GROUP_SIZE,
    INPUT_NAME,
    MODES,
    NODE_COLORS,
    OUTPUT_KINDS,
    PICKERS,
    Comment,
    ComponentBody,
    ComponentRef,
    Edge,
    Group,
    Node,
    PortMap,
    WorkflowInput,
    WorkflowOutput,
    bad_input_name,
    bad_output_name,
    natural,
)

FORMAT = "graphbook.workflow"
VERSION = 1


class Drawing(Protocol):
    """What a workflow file holds, as a Workflow has it."""

    @property
    def doc(self) -> str: ...
    @property
    def nodes(self) -> Mapping[str, Node]: ...
    @property
    def edges(self) -> list[Edge]: ...
    @property
    def groups(self) -> Mapping[str, Group]: ...
    @property
    def comments(self) -> Mapping[str, Comment]: ...
    @property
    def inputs(self) -> Mapping[str, WorkflowInput]: ...
    @property
    def outputs(self) -> Mapping[str, WorkflowOutput]: ...


@dataclass
class Contents:
    """A workflow file's contents, read and checked; `notes`: what reading a Graphbook 0.13 file
    left out or could not carry over, to tell the person."""

    doc: str = ""
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    groups: dict[str, Group] = field(default_factory=dict)
    comments: dict[str, Comment] = field(default_factory=dict)
    inputs: dict[str, WorkflowInput] = field(default_factory=dict)
    outputs: dict[str, WorkflowOutput] = field(default_factory=dict)
    notes: list[Problem] = field(default_factory=list)


def workflow_json(workflow: Drawing) -> dict[str, Any]:
    """The canonical file content, in a stable order."""
    data: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    if workflow.doc:
        data["doc"] = workflow.doc
    if workflow.inputs:
        inputs = workflow.inputs
        data["inputs"] = {k: _input_json(inputs[k]) for k in sorted(inputs)}
    if workflow.outputs:
        outputs = workflow.outputs
        data["outputs"] = {k: _output_json(outputs[k]) for k in sorted(outputs)}
    nodes = sorted(workflow.nodes.values(), key=lambda n: natural(n.id))
    data["nodes"] = [_node_json(n) for n in nodes]
    data["edges"] = [_edge_json(e) for e in sorted(set(workflow.edges), key=Edge.sort_key)]
    if workflow.groups:
        groups = sorted(workflow.groups.values(), key=lambda g: natural(g.id))
        data["groups"] = [_group_json(g, workflow.nodes) for g in groups]
    if workflow.comments:
        comments = sorted(workflow.comments.values(), key=lambda c: natural(c.id))
        data["comments"] = [_comment_json(c) for c in comments]
    return data


def workflow_text(data: dict[str, Any]) -> str:
    """The file text of `workflow_json`'s content: one line per edge and per position."""
    return encodable_json(_format(data)) + "\n"


def read(data: Any, name: str = "<workflow>", path: Path | None = None) -> Contents:
    """Read the canonical format, or Graphbook 0.13's (`{"type": "workflow", ...}`); `path` is
    the file it came from (a 0.13 file's docs are found beside it)."""
    if not isinstance(data, Mapping):
        raise WorkflowFormatError(f"{name}: a workflow is a JSON object, not {kind_of(data)}")
    if graphbook013.is_graphbook013(data):
        canonical, notes = graphbook013.to_canonical(data, name, path)
        contents = _parse(canonical, name)
        contents.notes.extend(notes)
        return contents
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


def json_of(text: str, name: str) -> Any:
    """The JSON in the file `name` holds; WorkflowFormatError saying where it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise WorkflowFormatError(
            f"{name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None


def kind_of(value: Any) -> str:
    """A JSON value's kind, as a message names it ("a list", "null", ...)."""
    names = {list: "a list", dict: "an object", str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


_log = logging.getLogger("graphbook.workflow")


def _node_json(node: Node) -> dict[str, Any]:
    data: dict[str, Any] = {"id": node.id, "type": node.type}
    if node.label:
        data["label"] = node.label
    if node.module:
        data["module"] = node.module
    data["params"] = {k: _jsonable(node, k, node.params[k]) for k in sorted(node.params)}
    data["position"] = {"x": _coordinate(node.position[0]), "y": _coordinate(node.position[1])}
    if node.width:
        data["width"] = _coordinate(node.width)
    if node.collapsed:
        data["collapsed"] = True
    if node.mode != "active":
        data["mode"] = node.mode
    if node.color:
        data["color"] = node.color
    if isinstance(node.component, ComponentBody):
        data["component"] = body_json(node.component)
    elif isinstance(node.component, ComponentRef):
        data["component"] = {"library": node.component.library, "version": node.component.version}
    return data


def body_json(body: ComponentBody) -> dict[str, Any]:
    """A component's inside as a file holds it (inside a node's `component`, or a library
    file)."""
    data: dict[str, Any] = {"doc": body.doc} if body.doc else {}
    data["inputs"] = _ports_json(body.inputs, "input")
    data["outputs"] = _ports_json(body.outputs, "output")
    data["params"] = _ports_json(body.params, "param")
    nodes = sorted(body.nodes.values(), key=lambda n: natural(n.id))
    data["nodes"] = [_node_json(n) for n in nodes]
    data["edges"] = [_edge_json(e) for e in sorted(set(body.edges), key=Edge.sort_key)]
    return data


def _ports_json(ports: Mapping[str, PortMap], port: str) -> dict[str, Any]:
    return {k: {"node": ports[k].node, port: ports[k].port} for k in sorted(ports)}


def _input_json(given: WorkflowInput) -> dict[str, Any]:
    data: dict[str, Any] = {"node": given.node, "param": given.param}
    extras = {
        "description": given.description,
        "minimum": _number(given.minimum),
        "maximum": _number(given.maximum),
        "choices": list(given.choices),
        "picker": given.picker,
        "accept": list(given.accept),
    }
    return data | {k: v for k, v in extras.items() if v not in (None, "", [])}


def _number(value: float | None) -> float | int | None:
    """A bound as it reads back the same in Python and in the browser (2.0 written 2)."""
    if value is None or not float(value).is_integer():
        return value
    return int(value)


def _output_json(shown: WorkflowOutput) -> dict[str, Any]:
    data: dict[str, Any] = {"node": shown.node, "output": shown.output, "kind": shown.kind}
    return data | ({"description": shown.description} if shown.description else {})


def _comment_json(comment: Comment) -> dict[str, Any]:
    x, y = comment.position
    return {
        "id": comment.id,
        "text": comment.text,
        "position": {"x": _coordinate(x), "y": _coordinate(y)},
        "width": _coordinate(comment.width),
    }


def _group_json(group: Group, nodes: Mapping[str, Node]) -> dict[str, Any]:
    (x, y), (width, height) = group.position, group.size
    return {
        "id": group.id,
        "label": group.label,
        "position": {"x": _coordinate(x), "y": _coordinate(y)},
        "size": {"width": _coordinate(width), "height": _coordinate(height)},
        "nodes": sorted((n for n in set(group.nodes) if n in nodes), key=natural),
    }


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
        elif key in ("inputs", "outputs"):
            body = ",\n".join(f"    {dump(k)}: {dump(v)}" for k, v in value.items())
            entries.append(f"  {dump(key)}: {{\n{body}\n  }}")
        elif key in ("groups", "comments"):
            body = ",\n".join(_format_node(g) for g in value)
            entries.append(f"  {dump(key)}: [\n{body}\n  ]")
        else:
            entries.append(f"  {dump(key)}: {dump(value)}")
    lines.append(",\n".join(entries))
    lines.append("}")
    return "\n".join(lines)


def _format_node(node: dict[str, Any]) -> str:
    parts = []
    for key, value in node.items():
        if key in ("params", "component") and value:
            inner = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n      ")
            parts.append(f"      {json.dumps(key)}: {inner}")
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


def _edge_json(edge: Edge) -> dict[str, Any]:
    data: dict[str, Any] = {
        "source": edge.source,
        "output": edge.output,
        "target": edge.target,
        "input": edge.input,
    }
    if edge.points:
        data["points"] = [{"x": _coordinate(x), "y": _coordinate(y)} for x, y in edge.points]
    return data


def _parse(data: Mapping[str, Any], name: str) -> Contents:
    workflow = Contents(doc=str(data.get("doc", "")))
    for index, raw in enumerate(_list(data, "nodes", name)):
        node = _parse_node(raw, f"{name}: nodes[{index}]")
        if node.id in workflow.nodes:
            raise WorkflowFormatError(f"{name}: two nodes have id {node.id!r}; ids must be unique")
        workflow.nodes[node.id] = node
    for index, raw in enumerate(_list(data, "edges", name)):
        workflow.edges.append(_parse_edge(raw, f"{name}: edges[{index}]"))
    for index, raw in enumerate(_list(data, "groups", name)):
        _add_group(workflow, _parse_group(raw, f"{name}: groups[{index}]"), name)
    for index, raw in enumerate(_list(data, "comments", name)):
        comment = _parse_comment(raw, f"{name}: comments[{index}]")
        if comment.id in workflow.comments or comment.id in workflow.nodes:
            raise WorkflowFormatError(
                f"{name}: comment id {comment.id!r} is taken; ids must be unique in a file"
            )
        workflow.comments[comment.id] = comment
    workflow.inputs = _parse_inputs(data.get("inputs", {}), name)
    workflow.outputs = _parse_outputs(data.get("outputs", {}), name)
    return workflow


def _named_entries(
    raw: Any, name: str, what: str, shape: str, bad_name: Callable[[str], str]
) -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """The entries of a file's `inputs` or `outputs` object (`what`), each with where it is
    for messages; a value that is not an object of objects, or a bad name, is refused."""
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{name}: {what!r} must be an object {shape}, not {kind_of(raw)}")
    for key, entry in raw.items():
        where = f"{name}: {what}[{key!r}]"
        if not INPUT_NAME.fullmatch(key):
            raise WorkflowFormatError(f"{name}: {bad_name(key)}")
        if not isinstance(entry, Mapping):
            raise WorkflowFormatError(f"{where} must be an object, not {kind_of(entry)}")
        yield key, entry, where


def _parse_inputs(raw: Any, name: str) -> dict[str, WorkflowInput]:
    """The `inputs` object; whether each names a real node parameter is checked by build_graph."""
    shape = '{"NAME": {"node": ID, "param": NAME}}'
    inputs: dict[str, WorkflowInput] = {}
    for key, entry, where in _named_entries(raw, name, "inputs", shape, bad_input_name):
        node, param = entry.get("node"), entry.get("param")
        if not isinstance(node, str) or not node or not isinstance(param, str) or not param:
            raise WorkflowFormatError(
                f'{where} needs a node id and a parameter name: {{"node": ID, "param": NAME}}'
            )
        inputs[key] = replace(WorkflowInput(node, param), **_input_extras(entry, where))
    return inputs


def _input_extras(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An input's optional fields: its description, bounds, choices, picker and accepted
    file types, each checked."""
    extras: dict[str, Any] = {"description": _text(entry, "description", where)}
    for bound in ("minimum", "maximum"):
        value = entry.get(bound)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise WorkflowFormatError(f"{where}: {bound!r} must be a number, not {kind_of(value)}")
        extras[bound] = value
    low, high = extras["minimum"], extras["maximum"]
    if low is not None and high is not None and low > high:
        raise WorkflowFormatError(f"{where}: 'minimum' {low} is above 'maximum' {high}")
    extras["choices"] = tuple(_list_of(entry, "choices", where, (str, int, float, bool)))
    picker = entry.get("picker", "")
    if picker not in ("", *PICKERS):
        raise WorkflowFormatError(
            f"{where}: 'picker' is one of {', '.join(PICKERS)} (or left out), not {picker!r:.40}"
        )
    extras["picker"] = picker
    accept = tuple(_list_of(entry, "accept", where, (str,)))
    if any(not suffix.startswith(".") for suffix in accept):
        raise WorkflowFormatError(f"{where}: 'accept' lists file suffixes such as \".csv\"")
    extras["accept"] = accept
    return extras


def _text(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise WorkflowFormatError(f"{where}: {key!r} must be a string")
    return value or ""


def _list_of(entry: Mapping[str, Any], key: str, where: str, kinds: tuple[type, ...]) -> list[Any]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, kinds) for v in value):
        names = " or ".join(k.__name__ for k in kinds)
        raise WorkflowFormatError(f"{where}: {key!r} must be a list of {names} values")
    return value


def _parse_outputs(raw: Any, name: str) -> dict[str, WorkflowOutput]:
    """The `outputs` object; whether each names a real node output is checked by build_graph."""
    shape = '{"NAME": {"node": ID, "output": NAME, "kind": KIND}}'
    outputs: dict[str, WorkflowOutput] = {}
    for key, entry, where in _named_entries(raw, name, "outputs", shape, bad_output_name):
        node, output, kind = entry.get("node"), entry.get("output", "out"), entry.get("kind")
        if not isinstance(node, str) or not node or not isinstance(output, str) or not output:
            raise WorkflowFormatError(
                f'{where} needs a node id and one of its outputs: {{"node": ID, "output": NAME}}'
            )
        if kind not in OUTPUT_KINDS:
            raise WorkflowFormatError(
                f"{where}: 'kind' is one of {', '.join(OUTPUT_KINDS)}, not {kind!r:.40}"
            )
        outputs[key] = WorkflowOutput(node, output, kind, _text(entry, "description", where))
    return outputs


def _parse_comment(raw: Any, where: str) -> Comment:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where} must be an object, not {kind_of(raw)}")
    comment_id, text, width = raw.get("id"), raw.get("text", ""), raw.get("width", 240.0)
    if not isinstance(comment_id, str) or not comment_id:
        raise WorkflowFormatError(f"{where} needs a non-empty string 'id'")
    where = f"{where} (id {comment_id!r})"
    if not isinstance(text, str):
        raise WorkflowFormatError(f"{where}: 'text' must be a string")
    if isinstance(width, bool) or not isinstance(width, int | float) or width <= 0:
        raise WorkflowFormatError(f"{where}: 'width' must be a positive number")
    position = _pair(raw, "position", ("x", "y"), where) or (0.0, 0.0)
    return Comment(comment_id, text, position, float(width))


def _add_group(workflow: Contents, group: Group, name: str) -> None:
    """Adds a group read from a file; ids naming no node are dropped, as the canvas drops them."""
    if group.id in workflow.groups:
        raise WorkflowFormatError(f"{name}: two groups have id {group.id!r}; ids must be unique")
    if group.id in workflow.nodes:
        raise WorkflowFormatError(
            f"{name}: group {group.id!r} has the id of a node; give the group another id"
        )
    members = tuple(dict.fromkeys(group.nodes))
    for node_id in members:
        if node_id not in workflow.nodes:
            _log.warning(
                "%s: group %r names node %r, which does not exist; it is left out of the group "
                "(the next save removes it from the file)",
                name,
                group.id,
                node_id,
            )
        owner = next((g.id for g in workflow.groups.values() if node_id in g.nodes), None)
        if owner is not None:
            raise WorkflowFormatError(
                f"{name}: node {node_id!r} is in groups {owner!r} and {group.id!r}; a node can "
                "be in one group only, so remove it from one of them"
            )
    kept = tuple(n for n in members if n in workflow.nodes)
    workflow.groups[group.id] = replace(group, nodes=kept)


def _parse_group(raw: Any, where: str) -> Group:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where} must be an object, not {kind_of(raw)}")
    group_id, label, nodes = raw.get("id"), raw.get("label", ""), raw.get("nodes")
    if not isinstance(group_id, str) or not group_id:
        raise WorkflowFormatError(f"{where} needs a non-empty string 'id'")
    where = f"{where} (id {group_id!r})"
    if not isinstance(label, str):
        raise WorkflowFormatError(f"{where}: 'label' must be a string")
    if not isinstance(nodes, list) or not all(isinstance(n, str) and n for n in nodes):
        raise WorkflowFormatError(f"{where}: 'nodes' must be a list of node ids (strings)")
    position = _pair(raw, "position", ("x", "y"), where) or (0.0, 0.0)
    size = _pair(raw, "size", ("width", "height"), where) or GROUP_SIZE
    if min(size) <= 0:
        raise WorkflowFormatError(f"{where}: 'size' must have a positive width and height")
    return Group(group_id, label, tuple(nodes), position, size)


def _pair(
    raw: Mapping[str, Any], key: str, names: tuple[str, str], where: str
) -> tuple[float, float] | None:
    """`raw[key]` as two numbers named `names`; None when the key is absent."""
    value = raw.get(key)
    return None if value is None else _xy(value, repr(key), names, where)


def _xy(value: Any, what: str, names: tuple[str, str], where: str) -> tuple[float, float]:
    """`value` as two numbers named `names` (an object {names[0]: x, names[1]: y})."""
    numbers: list[Any] = [value.get(n) for n in names] if isinstance(value, Mapping) else []
    if len(numbers) != 2 or not all(_is_number(v) for v in numbers):
        shape = ", ".join(f'"{n}": number' for n in names)
        raise WorkflowFormatError(f"{where}: {what} must be {{{shape}}}, not {value!r:.60}")
    return (float(numbers[0]), float(numbers[1]))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _list(data: Mapping[str, Any], key: str, name: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise WorkflowFormatError(f"{name}: {key!r} must be a list, not {kind_of(value)}")
    return value


def _parse_node(raw: Any, where: str) -> Node:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where} must be an object, not {kind_of(raw)}")
    node_id, type_ = raw.get("id"), raw.get("type")
    if not isinstance(node_id, str) or not node_id:
        raise WorkflowFormatError(f"{where} needs a non-empty string 'id'")
    if not isinstance(type_, str) or not type_:
        raise WorkflowFormatError(f"{where} (id {node_id!r}) needs a string 'type' (a node name)")
    params = raw.get("params", {})
    if not isinstance(params, Mapping):
        raise WorkflowFormatError(f"{where} (id {node_id!r}): 'params' must be an object")
    label, module = raw.get("label", ""), raw.get("module", "")
    if not isinstance(label, str):
        raise WorkflowFormatError(f"{where} (id {node_id!r}): 'label' must be a string")
    if not isinstance(module, str):
        raise WorkflowFormatError(f"{where} (id {node_id!r}): 'module' must be a string")
    width, collapsed, color = _canvas_look(raw, f"{where} (id {node_id!r})")
    mode = raw.get("mode", "active")
    if mode not in MODES:
        raise WorkflowFormatError(
            f'{where} (id {node_id!r}): \'mode\' must be "bypass" or "mute" (or left out to '
            f"run the node), not {mode!r:.40}"
        )
    position = _position(raw.get("position"))
    component = _parse_component(raw, type_, f"{where} (id {node_id!r})")
    return Node(
        node_id,
        type_,
        dict(params),
        position,
        label,
        module,
        width,
        collapsed,
        mode,
        color,
        component,
    )


def _parse_component(
    raw: Mapping[str, Any], type_: str, where: str
) -> ComponentBody | ComponentRef | None:
    """A component node's `component`: a library reference or an inline body."""
    value = raw.get("component")
    if type_ != COMPONENT:
        if value is not None:
            raise WorkflowFormatError(
                f"{where}: only a node of type \"{COMPONENT}\" has a 'component'; remove it "
                f'or set "type": "{COMPONENT}"'
            )
        return None
    if not isinstance(value, Mapping):
        raise WorkflowFormatError(
            f"{where}: a \"{COMPONENT}\" node needs 'component': its nodes, edges and ports, "
            'or {"library": NAME, "version": ...} for a library component'
        )
    if "library" in value:
        library, version = value.get("library"), value.get("version", "")
        if not isinstance(library, str) or not library or not isinstance(version, str):
            raise WorkflowFormatError(
                f"{where}: 'component' names a library component as "
                '{"library": NAME, "version": DIGEST} (strings)'
            )
        return ComponentRef(library, version)
    return parse_body(value, f"{where}: component")


def parse_body(data: Mapping[str, Any], where: str) -> ComponentBody:
    """A component's inside as a file holds it (a node's `component`, or a library file)."""
    nodes: dict[str, Node] = {}
    for index, raw in enumerate(_list(data, "nodes", where)):
        node = _parse_node(raw, f"{where}: nodes[{index}]")
        if node.id in nodes:
            raise WorkflowFormatError(f"{where}: two nodes have id {node.id!r}; ids must be unique")
        nodes[node.id] = node
    edges = [
        _parse_edge(raw, f"{where}: edges[{i}]")
        for i, raw in enumerate(_list(data, "edges", where))
    ]
    doc = data.get("doc", "")
    if not isinstance(doc, str):
        raise WorkflowFormatError(f"{where}: 'doc' must be a string")
    return ComponentBody(
        nodes,
        tuple(edges),
        _parse_ports(data.get("inputs", {}), "input", where),
        _parse_ports(data.get("outputs", {}), "output", where),
        _parse_ports(data.get("params", {}), "param", where),
        doc,
    )


def _parse_ports(raw: Any, port: str, where: str) -> dict[str, PortMap]:
    key = {"input": "inputs", "output": "outputs", "param": "params"}[port]
    shape = f'{{"NAME": {{"node": ID, "{port}": NAME}}}}'
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where}: {key!r} must be an object {shape}, not {kind_of(raw)}")
    ports: dict[str, PortMap] = {}
    for name, entry in raw.items():
        node = entry.get("node") if isinstance(entry, Mapping) else None
        inner = entry.get(port) if isinstance(entry, Mapping) else None
        if not (isinstance(node, str) and node and isinstance(inner, str) and inner):
            raise WorkflowFormatError(f"{where}: {key}[{name!r}] must be {shape}")
        ports[str(name)] = PortMap(node, inner)
    return ports


def _canvas_look(raw: Mapping[str, Any], where: str) -> tuple[float | None, bool, str]:
    """A node's width, fold and colour on the canvas, checked (running ignores them)."""
    width, collapsed, color = raw.get("width"), raw.get("collapsed", False), raw.get("color", "")
    number = isinstance(width, int | float) and not isinstance(width, bool)
    if width is not None and not (number and width > 0):
        raise WorkflowFormatError(f"{where}: 'width' must be a positive number")
    if not isinstance(collapsed, bool):
        raise WorkflowFormatError(f"{where}: 'collapsed' must be true or false")
    if color and color not in NODE_COLORS:
        raise WorkflowFormatError(
            f"{where}: 'color' must be one of {', '.join(NODE_COLORS)} (or left out), "
            f"not {color!r:.40}"
        )
    return width, collapsed, color or ""


def _position(raw: Any) -> tuple[float, float]:
    if isinstance(raw, Mapping):
        x, y = raw.get("x", 0), raw.get("y", 0)
        if isinstance(x, int | float) and isinstance(y, int | float):
            return (float(x), float(y))
    return (0.0, 0.0)


def _parse_edge(raw: Any, where: str) -> Edge:
    if not isinstance(raw, Mapping):
        raise WorkflowFormatError(f"{where} must be an object, not {kind_of(raw)}")
    fields = {k: raw.get(k) for k in ("source", "output", "target")}
    missing = [k for k, v in fields.items() if not isinstance(v, str) or not v]
    if missing:
        raise WorkflowFormatError(f"{where} needs string field(s): {', '.join(missing)}")
    points = _points(raw.get("points", []), where)
    return Edge(
        raw["source"], raw["output"], raw["target"], str(raw.get("input", DATA_INPUT)), points
    )


def _points(raw: Any, where: str) -> tuple[tuple[float, float], ...]:
    """An edge's reroute points: a list of {"x": number, "y": number}."""
    if not isinstance(raw, list):
        raise WorkflowFormatError(f'{where}: \'points\' must be a list of {{"x", "y"}} points')
    return tuple(_xy(point, f"points[{i}]", ("x", "y"), where) for i, point in enumerate(raw))
