"""Component nodes in an edit batch: a library component added by name (`components/NAME`, as
list_nodes names it, or a `{"library": NAME, "version": ...}` reference), its exposed
parameters set and its ports wired, each checked against the component's inside."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphbook.components import ExposedParam, Library, exposed_params
from graphbook.errors import Problem, WorkflowFormatError
from graphbook.graph import param_problem
from graphbook.registry import Registry
from graphbook.workflow import ComponentBody, ComponentRef, Node

PREFIX = "components/"
"""How the catalog (list_nodes) names a library component: `components/NAME`."""


@dataclass(frozen=True)
class Inside:
    """What an agent's edit may use of a component node: its ports and exposed parameters."""

    inputs: frozenset[str]
    outputs: frozenset[str]
    params: dict[str, ExposedParam]
    origin: str


def library_name(type_name: str) -> str | None:
    """The library component a node type names (`components/NAME`), else None."""
    return type_name[len(PREFIX) :] if type_name.startswith(PREFIX) else None


def reference(library: Library, name: str, version: str | None) -> ComponentRef | str:
    """A reference to the library component `name` at its current version; a message when
    there is no such file or `version` is not the current one."""
    try:
        current = library.ref(name)
    except WorkflowFormatError as exc:
        known = ", ".join(library.names()) or "none"
        return f"{exc} (library components: {known})"
    if version and version != current.version:
        return (
            f"components/{name}.json is at version {current.version}, not {version}; "
            "list_nodes gives the current one (or leave version out)"
        )
    return current


def inside(node: Node, library: Library) -> Inside | str | None:
    """The component node's ports and parameters; None for a plain node, a message when its
    library file does not read."""
    component = node.component
    if component is None:
        return None
    if isinstance(component, ComponentBody):
        body, origin = component, f"component {node.id!r}"
    else:
        try:
            body = library.load(component.library)[0]
        except WorkflowFormatError as exc:
            return str(exc)
        origin = f"components/{component.library}.json"
    params = {p.name: p for p in exposed_params(body, library)}
    return Inside(frozenset(body.inputs), frozenset(body.outputs), params, origin)


def param_check(
    node: Node, found: Inside, registry: Registry, name: str, value: Any
) -> Problem | str | None:
    """What is wrong with setting the component node's exposed parameter `name` to `value`."""
    exposed = found.params.get(name)
    if exposed is None:
        known = ", ".join(sorted(found.params)) or "none"
        return f"{found.origin} exposes no parameter {name!r} (it exposes: {known})"
    if value is None or exposed.node.type not in registry:
        return None
    problem = param_problem(exposed.node, registry.get(exposed.node.type), exposed.param, value)
    if problem is None:
        return None
    return Problem(node.id, f"{name}: {problem.message}", problem.fix)


def port_check(found: Inside, kind: str, port: str) -> str | None:
    """What is wrong with wiring the component node's `port` (an input or an output)."""
    ports = found.inputs if kind == "input" else found.outputs
    if port in ports:
        return None
    known = ", ".join(sorted(ports)) or "none"
    return f"{found.origin} has no {kind} {port!r} (its {kind}s: {known})"
