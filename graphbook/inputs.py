"""Workflow inputs: the node parameters a workflow takes by name, so it can be called like a
function. Their JSON Schema, their problems, and values given for a run turned into overrides
(graphbook/overrides.py sets those on a copy of the workflow, checked as the file's values are).

An input's default is the value saved on its node, else the parameter's declared default; an
input with neither (or an empty string) is required. An input may narrow its values (a minimum,
a maximum, choices): every run's values are checked against them, and the saved default too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from graphbook.errors import GraphbookError, ParamError, Problem, WorkflowError
from graphbook.overrides import Overrides, find_node, parse_value
from graphbook.params import ParamSpec, coerce, expected
from graphbook.registry import Registry
from graphbook.workflow import DATA_INPUT, Workflow, WorkflowInput

_SCALARS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "function": {"type": "string", "contentMediaType": "text/x-python"},
    "number": {"type": "number"},
    "float": {"type": "number"},
    "int": {"type": "integer"},
    "boolean": {"type": "boolean"},
    "dict": {"type": "object"},
    "list": {"type": "array"},
}


def json_type(param_type: str) -> dict[str, Any]:
    """A declared parameter type as JSON Schema: `int` -> integer, `list[str]` -> array of
    strings; a type it cannot say (a resource) gives {} (any value)."""
    if param_type.startswith("list["):
        return {"type": "array", "items": json_type(param_type[5:-1])}
    return dict(_SCALARS.get(param_type, {}))


# -- checks --------------------------------------------------------------------------------
def input_problems(workflow: Workflow, registry: Registry) -> list[Problem]:
    """What is wrong with the workflow's inputs: a node or parameter that does not exist, a
    parameter that takes a resource or is wired from one, two inputs setting one parameter."""
    problems: list[Problem] = []
    taken: dict[tuple[str, str], str] = {}
    for name, given in sorted(workflow.inputs.items()):
        problem = _problem(workflow, registry, name, given)
        if problem is not None:
            problems.append(problem)
            continue
        other = taken.setdefault((given.node, given.param), name)
        if other != name:
            problems.append(
                Problem(
                    given.node,
                    f"inputs {other!r} and {name!r} both set parameter {given.param!r}",
                    "remove one of them from the workflow's inputs",
                )
            )
    return problems


def _problem(
    workflow: Workflow, registry: Registry, name: str, given: WorkflowInput
) -> Problem | None:
    node = workflow.nodes.get(given.node)
    if node is None:
        return Problem(
            None,
            f"input {name!r} sets a parameter of node {given.node!r}, which does not exist",
            "remove the input, or mark a parameter of another node as it",
        )
    if node.type not in registry:
        return None  # the unknown node type is reported on its own
    spec = registry.get(node.type)
    param = spec.param(given.param)
    if param is None:
        known = ", ".join(p.name for p in spec.params if not p.is_resource) or "none"
        return Problem(
            node.id,
            f"input {name!r} sets parameter {given.param!r}, which {spec.name} does not have",
            f"its parameters are: {known}",
        )
    if param.is_resource or _wired(workflow, given):
        return Problem(
            node.id,
            f"input {name!r} sets parameter {given.param!r}, which takes a resource node "
            "wired to it, not a value",
            "remove the input, or delete the wire and give the parameter a value",
        )
    return _narrowing_problem(workflow, name, given, param)


def _narrowing_problem(
    workflow: Workflow, name: str, given: WorkflowInput, param: ParamSpec
) -> Problem | None:
    """Bounds on a parameter that is not a number, or a saved value the input's own bounds
    or choices refuse."""
    bounded = given.minimum is not None or given.maximum is not None
    if bounded and _scalar(param.type) not in NUMBERS:
        return Problem(
            given.node,
            f"input {name!r} has a minimum or maximum, but parameter {given.param!r} is "
            f"{expected(param.type)}",
            "remove the bounds, or use them on a number parameter",
        )
    saved = default_of(workflow, param, given)
    why = None if saved in (None, "") else narrowing_refusal(given, saved)
    if why is None:
        return None
    return Problem(given.node, f"input {name!r}: its default {saved!r:.60} {why}", "")


NUMBERS = ("number", "int", "float")


def _scalar(param_type: str) -> str:
    return param_type[5:-1] if param_type.startswith("list[") else param_type


def narrowing_refusal(given: WorkflowInput, value: Any) -> str | None:
    """Why the input's bounds or choices refuse `value` (each item of a list), in words that
    follow the value ("is below the minimum 0"); None when they take it."""
    for item in value if isinstance(value, list) else [value]:
        if given.choices and item not in given.choices:
            listed = ", ".join(json.dumps(c) for c in given.choices)
            return f"is not one of the choices: {listed}"
        if not isinstance(item, int | float) or isinstance(item, bool):
            continue
        if given.minimum is not None and item < given.minimum:
            return f"is below the minimum {given.minimum:g}"
        if given.maximum is not None and item > given.maximum:
            return f"is above the maximum {given.maximum:g}"
    return None


def _wired(workflow: Workflow, given: WorkflowInput) -> bool:
    return any(
        e.target == given.node and e.input == given.param and e.input != DATA_INPUT
        for e in workflow.edges
    )


def _param(workflow: Workflow, registry: Registry, name: str) -> ParamSpec:
    """The parameter input `name` sets; raises WorkflowError when it is not one."""
    given = workflow.inputs[name]
    problem = _problem(workflow, registry, name, given)
    if problem is not None:
        raise WorkflowError([problem])
    node = workflow.nodes[given.node]
    if node.type not in registry:
        raise WorkflowError(
            [Problem(node.id, f"input {name!r}: unknown node type {node.type!r}", "")]
        )
    spec = registry.get(node.type).param(given.param)
    assert spec is not None  # _problem checked it
    return spec


# -- the schema ----------------------------------------------------------------------------
def default_of(workflow: Workflow, spec: ParamSpec, given: WorkflowInput) -> Any:
    """The value the input has when none is given: the node's, else the parameter's default."""
    saved = workflow.nodes[given.node].params.get(given.param)
    return spec.default if saved is None and not callable(spec.default) else saved


def input_schema(workflow: Workflow, registry: Registry) -> dict[str, Any]:
    """A JSON Schema (2020-12) object of the workflow's inputs: a property per input with its
    parameter's type, default and description; `required` lists the inputs with no default.
    Raises WorkflowError when an input does not name a value parameter."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name in sorted(workflow.inputs):
        given = workflow.inputs[name]
        spec = _param(workflow, registry, name)
        prop = json_type(spec.type) | _narrowing(given, spec)
        description = given.description or spec.description
        if description:
            prop["description"] = description
        default = default_of(workflow, spec, given)
        if default is None or default == "":
            required.append(name)
        else:
            prop["default"] = default
        properties[name] = prop
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _narrowing(given: WorkflowInput, spec: ParamSpec) -> dict[str, Any]:
    """The input's bounds, choices and picker as JSON Schema (on a list's items for a list):
    `minimum`, `maximum`, `enum`; `format` file, folder or image (a path parameter's picker is
    a file's unless said), `x-accept` the file suffixes it takes."""
    narrowed: dict[str, Any] = {}
    if given.minimum is not None:
        narrowed["minimum"] = given.minimum
    if given.maximum is not None:
        narrowed["maximum"] = given.maximum
    if given.choices:
        narrowed["enum"] = list(given.choices)
    picker = given.picker or ("file" if spec.path and _scalar(spec.type) == "string" else "")
    if picker:
        narrowed["format"] = picker
    if given.accept:
        narrowed["x-accept"] = list(given.accept)
    if spec.type.startswith("list[") and narrowed:
        return {"items": json_type(spec.type[5:-1]) | narrowed}
    return narrowed


# -- values for a run ----------------------------------------------------------------------
def overrides_from_inputs(
    workflow: Workflow, values: Mapping[str, Any], registry: Registry
) -> dict[str, dict[str, Any]]:
    """Input values (`{name: value}`, as a file holds them) as overrides by node id. Each
    value is checked against its parameter's type (params.coerce, as the file's are) and the
    input's bounds and choices; an unknown input, a value of the wrong type or out of bounds
    and a required input left out are problems naming the input, its node and what it takes
    (WorkflowError with all of them)."""
    if not isinstance(values, Mapping):
        raise GraphbookError(
            f"inputs must be an object {{name: value}}, not {type(values).__name__}"
        )
    found = input_value_problems(workflow, registry, values)
    problems = list(found.values())
    overrides: dict[str, dict[str, Any]] = {}
    for name in sorted(workflow.inputs):
        given = workflow.inputs[name]
        try:
            _param(workflow, registry, name)
        except WorkflowError as exc:
            problems.extend(exc.problems)
            continue
        if name in values and name not in found:
            overrides.setdefault(given.node, {})[given.param] = values[name]
    if problems:
        raise WorkflowError(problems)
    return overrides


def value_problem(name: str, given: WorkflowInput, spec: ParamSpec, value: Any) -> Problem | None:
    """What is wrong with `value` for input `name`: not of its parameter's type, or refused by
    the input's bounds or choices; None when it fits."""
    try:
        coerce(spec, value)
    except ParamError:
        return _wrong_type(name, given, spec, value)
    why = narrowing_refusal(given, value)
    if why is None:
        return None
    return Problem(given.node, f"input {name!r}: {value!r:.60} {why}", _fix(name, given))


def _fix(name: str, given: WorkflowInput) -> str:
    if given.choices:
        return f"choose {name!r} from its choices"
    low = "" if given.minimum is None else f"from {given.minimum:g} "
    high = "" if given.maximum is None else f"up to {given.maximum:g}"
    return f"give {name!r} a value {low}{high}".strip()


def input_value_problems(
    workflow: Workflow, registry: Registry, values: Mapping[str, Any]
) -> dict[str, Problem]:
    """What is wrong with each of `values` (and each required input left out), by input name:
    what a form shows beside each field. An input that does not name a value parameter is
    not here (input_problems has it)."""
    found = {name: _unknown(workflow, name) for name in values if name not in workflow.inputs}
    for name in sorted(workflow.inputs):
        given = workflow.inputs[name]
        try:
            spec = _param(workflow, registry, name)
        except WorkflowError:
            continue
        if name not in values:
            if default_of(workflow, spec, given) in (None, ""):
                found[name] = _required(name, given, spec)
            continue
        problem = value_problem(name, given, spec, values[name])
        if problem is not None:
            found[name] = problem
    return found


def _unknown(workflow: Workflow, name: str) -> Problem:
    known = ", ".join(sorted(workflow.inputs)) or "none (mark a parameter as an input first)"
    return Problem(None, f"the workflow has no input {name!r}", f"its inputs are: {known}")


def _wrong_type(name: str, given: WorkflowInput, spec: ParamSpec, value: Any) -> Problem:
    return Problem(
        given.node,
        f"input {name!r} (parameter {given.param!r}) expects {expected(spec.type)} "
        f"(type {spec.type}), got {type(value).__name__} {value!r:.80}",
        f"give {name!r} {expected(spec.type)}",
    )


def _required(name: str, given: WorkflowInput, spec: ParamSpec) -> Problem:
    return Problem(
        given.node,
        f"input {name!r} (parameter {given.param!r}) is required: the workflow saves no value "
        "for it",
        f"give {name!r} {expected(spec.type)}",
    )


def parse_inputs(workflow: Workflow, registry: Registry, texts: Iterable[str]) -> dict[str, Any]:
    """`--input NAME=VALUE` arguments as input values, each text read as its parameter's type
    (as `--set` reads it: overrides.parse_value). Raises GraphbookError naming what is wrong."""
    values: dict[str, Any] = {}
    for text in texts:
        name, eq, raw = text.partition("=")
        if not eq or not name:
            raise GraphbookError(f"--input {text!r}: write NAME=VALUE (e.g. --input images=photos)")
        if name not in workflow.inputs:
            raise WorkflowError([_unknown(workflow, name)])
        given, spec = workflow.inputs[name], _param(workflow, registry, name)
        try:
            values[name] = parse_value(spec, raw)
        except ParamError as exc:
            raise GraphbookError(
                f"--input {text!r}: node {given.node!r}: {exc} (type {spec.type})"
            ) from None
    return values


def merge(
    workflow: Workflow, overrides: Overrides | None, from_inputs: Overrides
) -> dict[str, dict[str, Any]]:
    """Overrides and the overrides of inputs together, by node id; one parameter given two
    different values is a problem naming the input's node and the parameter."""
    merged: dict[str, dict[str, Any]] = {n: dict(v) for n, v in from_inputs.items()}
    problems: list[Problem] = []
    for key, params in (overrides or {}).items():
        node_id = find_node(workflow, key)
        if not isinstance(params, Mapping):
            raise GraphbookError(
                f"override {key!r}: give an object of parameter values, not {type(params).__name__}"
            )
        for param, value in params.items():
            had = merged.setdefault(node_id, {}).get(param, value)
            if had != value:
                problems.append(
                    Problem(
                        node_id,
                        f"parameter {param!r} is given twice: {had!r:.40} as an input and "
                        f"{value!r:.40} as an override",
                        "give it once, as the input or as the override",
                    )
                )
            merged[node_id][param] = value
    if problems:
        raise WorkflowError(problems)
    return merged


def run_overrides(
    workflow: Workflow,
    registry: Registry,
    overrides: Overrides | None,
    inputs: Mapping[str, Any] | None,
) -> Overrides | None:
    """What a run sets: `overrides`, and `inputs` (when given) turned into overrides, merged."""
    if inputs is None:
        return overrides
    return merge(workflow, overrides, overrides_from_inputs(workflow, inputs, registry))
