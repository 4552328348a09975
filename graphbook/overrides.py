"""Overrides: parameter values given for one run (`--set NODE.PARAM=VALUE`, `overrides=` of
`run_workflow`), put on a copy of the workflow before its graph is built.

Because they are applied to the workflow itself, validation checks an overridden value as it
checks the file's (an unknown parameter or a wrong type is a problem naming the node), and the
cache sees a changed parameter, so the node and what is downstream run again. The file and the
workflow given are never changed.

A node is named by its id, else by its title (its label, or its type when it has none) when
exactly one node has that title.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from graphbook.errors import GraphbookError, ParamError, Problem, WorkflowError
from graphbook.params import ParamSpec, coerce, expected
from graphbook.registry import Registry
from graphbook.workflow import Workflow
from graphbook.workflow_parts import natural

Overrides = Mapping[str, Mapping[str, Any]]
"""Node id or unique title -> parameter name -> value (as a workflow file would hold it)."""

_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


def title_of(node_label: str, node_type: str) -> str:
    """What the editor shows as a node's title: its label, else its type."""
    return node_label or node_type


def find_node(workflow: Workflow, key: str) -> str:
    """The id of the node `key` names: an id, else the title of exactly one node.

    Raises WorkflowError naming the known nodes (unknown) or the matching ids (ambiguous)."""
    if key in workflow.nodes:
        return key
    matches = sorted(
        (n.id for n in workflow.nodes.values() if title_of(n.label, n.type) == key), key=natural
    )
    if len(matches) == 1:
        return matches[0]
    if matches:
        ids = ", ".join(repr(i) for i in matches)
        raise WorkflowError(
            [
                Problem(
                    None,
                    f"override {key!r}: {len(matches)} nodes have that title",
                    f"use one of their ids: {ids}",
                )
            ]
        )
    raise WorkflowError(
        [Problem(None, f"override {key!r}: no node has that id or title", _known(workflow))]
    )


def _known(workflow: Workflow) -> str:
    nodes = sorted(workflow.nodes.values(), key=lambda n: natural(n.id))
    names = ", ".join(f"{n.id!r} ({title_of(n.label, n.type)})" for n in nodes)
    return f"the nodes are: {names or 'none'}"


def with_overrides(workflow: Workflow, overrides: Overrides | None) -> Workflow:
    """A copy of `workflow` with the parameter values of `overrides` set on its nodes.

    The values are checked when the graph is built, as the file's are; a node that cannot be
    found (or whose title is ambiguous) raises WorkflowError here. `workflow` is not changed."""
    if not overrides:
        return workflow
    if not isinstance(overrides, Mapping):
        raise GraphbookError(
            "overrides must be an object: {node id or title: {parameter: value}}, "
            f"not {type(overrides).__name__}"
        )
    changed = copy.copy(workflow)
    changed.nodes = dict(workflow.nodes)
    problems: list[Problem] = []
    for key, params in overrides.items():
        try:
            node_id = find_node(workflow, key)
        except WorkflowError as exc:
            problems.extend(exc.problems)
            continue
        if not isinstance(params, Mapping):
            problems.append(
                Problem(
                    node_id,
                    f"override {key!r}: give an object of parameter values, "
                    f"not {type(params).__name__}",
                )
            )
            continue
        node = changed.nodes[node_id]
        changed.nodes[node_id] = replace(node, params={**node.params, **params})
    if problems:
        raise WorkflowError(problems)
    return changed


# -- `--set NODE.PARAM=VALUE` -------------------------------------------------------------
def parse_setting(text: str) -> tuple[str, str, str]:
    """`NODE.PARAM=VALUE` -> (NODE, PARAM, VALUE); NODE may hold dots (a title), PARAM not."""
    target, eq, value = text.partition("=")
    node, dot, name = target.rpartition(".")
    if not eq or not dot or not node or not name:
        raise GraphbookError(
            f"--set {text!r}: write NODE.PARAM=VALUE (NODE an id or a title, e.g. "
            "--set load.limit=10)"
        )
    return node, name, value


def parse_value(spec: ParamSpec, text: str) -> Any:
    """Text typed for a parameter, as a value of its declared type (as a file holds it):
    numbers, true/false/1/0/yes/no, lists and dicts as JSON, strings and function source as
    they are. Raises ParamError saying what the type expects."""
    kind = spec.type
    if kind == "resource":
        raise ParamError(f"parameter {spec.name!r} takes a resource node wired to it, not a value")
    if kind == "boolean":
        word = text.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ParamError(
            f"parameter {spec.name!r} expects true or false (or yes/no, 1/0), got {text!r:.80}"
        )
    if kind in ("list", "dict") or kind.startswith("list["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParamError(
                f"parameter {spec.name!r} expects {expected(kind)} written as JSON, "
                f"got {text!r:.80} ({exc.msg})"
            ) from None
    elif kind in ("int", "float", "number"):
        return coerce(spec, text.strip())
    else:
        value = text
    coerce(spec, value)  # checked now; kept as the file would hold it (function as source)
    return value


def parse_settings(
    workflow: Workflow, registry: Registry, settings: list[str]
) -> dict[str, dict[str, Any]]:
    """`--set` arguments as overrides by node id, each value parsed as its parameter's type.

    A parameter the node does not declare (or a node of an unknown kind) keeps its text: building
    the graph reports it with the known ones. A value that does not parse raises GraphbookError
    naming the node, the parameter and its type."""
    overrides: dict[str, dict[str, Any]] = {}
    for text in settings:
        key, name, raw = parse_setting(text)
        node_id = find_node(workflow, key)
        node = workflow.nodes[node_id]
        spec = registry.get(node.type).param(name) if node.type in registry else None
        value: Any = raw
        if spec is not None:
            try:
                value = parse_value(spec, raw)
            except ParamError as exc:
                raise GraphbookError(
                    f"--set {text!r}: node {node_id!r} ({node.type}): {exc} (type {spec.type})"
                ) from None
        overrides.setdefault(node_id, {})[name] = value
    return overrides
