"""Parameter specs: the declared types, their defaults, and turning raw values into typed ones."""

from __future__ import annotations

import ast
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graphbook.errors import NodeDefinitionError, ParamError

SCALAR_TYPES = ("string", "number", "int", "float", "boolean", "function")
ALIASES = {
    "str": "string",
    "text": "string",
    "bool": "boolean",
    "integer": "int",
    "array": "list",
    "tuple": "list",
}
"""Other names for types; `array` is how Graphbook 0.13 examples declared list parameters."""
_MISSING: Any = object()


def normalize_type(raw: str) -> str:
    """Return the canonical name of a declared type: `bool` -> `boolean`, `list[str]` -> ...

    Any type name Graphbook does not know is a resource pin, as in Graphbook 0.13.
    """
    name = raw.strip().lower()
    if name.startswith("list[") and name.endswith("]"):
        inner = normalize_type(name[5:-1])
        return f"list[{inner}]" if inner in SCALAR_TYPES or inner == "dict" else "list"
    name = ALIASES.get(name, name)
    if name in (*SCALAR_TYPES, "list", "dict", "resource"):
        return name
    return "resource"


@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter of a node."""

    name: str
    type: str = "string"
    default: Any = None
    description: str = ""
    required: bool = False
    path: bool = False
    """The value names a file or folder (or a list of them): on a Ray cluster a relative one
    is made absolute against the driver's folder before the run leaves it (graphbook/paths.py)."""
    expression: bool = False
    """The value is a Python expression (a string type): it must compile, or the workflow does
    not build (graph.py), as a function's source must."""

    @property
    def is_resource(self) -> bool:
        return self.type == "resource"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default if not callable(self.default) else None,
            "description": self.description,
            "required": self.required,
        }


def make_param(name: str, spec: Mapping[str, Any] | str) -> ParamSpec:
    """Build a ParamSpec from a class `Parameters` entry (a dict) or a bare type name."""
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, Mapping):
        raise NodeDefinitionError(
            f"parameter {name!r} must be declared as a dict like "
            f'{{"type": "number", "default": 1}}, got {spec!r}'
        )
    type_ = normalize_type(str(spec.get("type", "string")))
    return ParamSpec(
        name=name,
        type=type_,
        default=spec.get("default"),
        description=str(spec.get("description", "")),
        required=bool(spec.get("required", False)),
        path=bool(spec.get("path", False)),
        expression=bool(spec.get("expression", False)),
    )


def coerce(spec: ParamSpec, value: Any) -> Any:
    """Check `value` against the parameter's type and convert it (function source -> callable).

    Raises ParamError with a message that says what was expected and what came instead.
    """
    if value is None:
        return None
    kind = spec.type
    if kind.startswith("list"):
        return _coerce_list(spec, value)
    converter = _CONVERTERS.get(kind)
    converted = value if converter is None else converter(spec, value)
    if spec.expression and isinstance(converted, str):
        _check_expression(spec, converted)
    return converted


_EXPECTED = {
    "string": "a string",
    "number": "a number",
    "int": "a whole number",
    "float": "a number",
    "boolean": "true or false",
    "function": "Python source of a function (a `def` or a `lambda`)",
    "dict": "a dict",
    "list": "a list",
    "resource": "a resource node wired to it",
}


_PLURAL = {"boolean": "true/false values", "function": "function sources", "int": "whole numbers"}


def expected(type_: str) -> str:
    """What a value of the declared type looks like, in words: `int` -> "a whole number"."""
    if type_.startswith("list["):
        inner = type_[5:-1]
        return f"a list of {_PLURAL.get(inner, inner + 's')}"
    return _EXPECTED.get(type_, f"a {type_} value")


def _expected(spec: ParamSpec, what: str, value: Any) -> ParamError:
    return ParamError(
        f"parameter {spec.name!r} expects {what}, got {type(value).__name__} {value!r:.80}"
    )


def _to_string(spec: ParamSpec, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise _expected(spec, "a string", value)


def _to_number(spec: ParamSpec, value: Any, what: str = "a number") -> int | float:
    if isinstance(value, bool):
        raise _expected(spec, what, value)
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise _expected(spec, what, value) from None
        return int(number) if number.is_integer() and "." not in value else number
    raise _expected(spec, what, value)


def _to_int(spec: ParamSpec, value: Any) -> int:
    number = _to_number(spec, value, "a whole number")
    if isinstance(number, float):
        if not (math.isfinite(number) and number.is_integer()):
            raise _expected(spec, "a whole number", value)
        return int(number)
    return number


def _to_float(spec: ParamSpec, value: Any) -> float:
    return float(_to_number(spec, value))


def _to_bool(spec: ParamSpec, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise _expected(spec, "true or false", value)


def _to_function(spec: ParamSpec, value: Any) -> Callable[..., Any]:
    if callable(value):
        return value  # type: ignore[no-any-return]
    if not isinstance(value, str):
        raise _expected(spec, "Python source of a function", value)
    try:
        return compile_function(value)
    except SyntaxError as exc:
        raise ParamError(
            f"parameter {spec.name!r}: the function source has a syntax error at line "
            f"{exc.lineno}: {exc.msg}"
        ) from None
    except Exception as exc:  # the source ran and raised (NameError, ...): report it, typed
        raise ParamError(f"parameter {spec.name!r}: {exc}") from None


def _check_expression(spec: ParamSpec, text: str) -> None:
    if not text.strip():
        raise ParamError(
            f"parameter {spec.name!r} expects a Python expression, got an empty one; "
            "write one, e.g. confidence >= 0.8"
        )
    try:
        compile(text.strip(), f"<{spec.name}>", "eval")
    except SyntaxError as exc:
        raise ParamError(
            f"parameter {spec.name!r}: {text.strip()!r:.80} is not a Python expression "
            f"({exc.msg}, at character {exc.offset})"
        ) from None


def _to_dict(spec: ParamSpec, value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list) and all(_is_dict_row(row) for row in value):
        return dict(_dict_row(spec, row) for row in value)
    raise _expected(spec, "a dict", value)


def _dict_row(spec: ParamSpec, row: Any) -> tuple[str, Any]:
    """Graphbook 0.13's dict widget stores `[[type, key, value], ...]`; the type types the value."""
    type_, key, value = row
    inner = ParamSpec(name=f"{spec.name}[{key}]", type=normalize_type(str(type_)))
    return key, coerce(inner, value)


def _is_dict_row(row: Any) -> bool:
    return isinstance(row, list | tuple) and len(row) == 3 and isinstance(row[1], str)


def _coerce_list(spec: ParamSpec, value: Any) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise _expected(spec, expected(spec.type), value)
    if spec.type == "list":
        return list(value)
    inner = spec.type[5:-1]
    return [coerce(ParamSpec(f"{spec.name}[{i}]", inner), v) for i, v in enumerate(value)]


_CONVERTERS: dict[str, Callable[[ParamSpec, Any], Any]] = {
    "string": _to_string,
    "number": _to_number,
    "int": _to_int,
    "float": _to_float,
    "boolean": _to_bool,
    "function": _to_function,
    "dict": _to_dict,
}


def compile_function(source: str) -> Callable[..., Any]:
    """Turn Python source typed by a person into a callable.

    Accepts an expression that evaluates to a callable (`lambda d: d["x"] > 0`) or one or more
    statements defining functions, of which the last defined is returned.
    """
    text = source.strip()
    if not text:
        raise ValueError("the function source is empty; write a `def` or a `lambda`")
    tree = ast.parse(text, filename="<function>", mode="exec")
    namespace: dict[str, Any] = {}
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        result = eval(compile(ast.Expression(tree.body[0].value), "<function>", "eval"), namespace)
    else:
        exec(compile(tree, "<function>", "exec"), namespace)
        defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        if not defs:
            raise ValueError("the function source defines no function; write a `def` or a lambda")
        result = namespace[defs[-1]]
    if not callable(result):
        raise ValueError(
            f"the function source evaluates to {type(result).__name__}, not a function"
        )
    return result  # type: ignore[no-any-return]


def resolve(spec: ParamSpec, value: Any = _MISSING) -> Any:
    """The value a node receives: the given one (0, False and "" kept) or else the default."""
    if value is _MISSING or value is None:
        value = spec.default
    return coerce(spec, value)


# -- what a resource gives --------------------------------------------------------------------
ANY = "any"
"""A resource whose value's type is not declared: any parameter may take it (checked at run)."""
OBJECT = "object"
"""A resource giving something other than a parameter value (a model): only `resource` pins."""

_ANNOTATIONS = {
    "str": "string",
    "int": "int",
    "float": "number",
    "bool": "boolean",
    "list": "list",
    "tuple": "list",
    "sequence": "list",
    "dict": "dict",
    "mapping": "dict",
    "callable": "function",
    "any": ANY,
    "object": ANY,
}
_FITS = {
    "string": {"string", "function"},
    "int": {"int", "number", "float"},
    "number": {"number", "float", "int"},  # a whole number is checked when the run starts
    "float": {"number", "float"},
    "boolean": {"boolean"},
    "function": {"function"},
    "list": {"list"},
    "dict": {"dict"},
}


def type_fits() -> dict[str, list[str]]:
    """What a resource gives -> the parameter types it fits, as sent to the browser's editor."""
    return {gives: sorted(fits) for gives, fits in _FITS.items()}


def value_type(annotation: Any) -> str:
    """What a resource gives, from the return annotation of its function or `value()`.

    `str` -> "string", `list[int]` -> "list", `Callable[...]` -> "function"; no annotation
    (or `Any`) -> "any"; any other class (`torch.nn.Module`) -> "object".
    """
    if annotation is None or annotation is inspect.Signature.empty:
        return ANY
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    text = text or str(annotation)
    head = text.split("[", 1)[0].split(".")[-1].strip().lower()
    if head in ("none", ""):
        return ANY
    return _ANNOTATIONS.get(head, OBJECT)


def accepts(param_type: str, gives: str) -> bool:
    """Whether a parameter of `param_type` can take the value of a resource that `gives` it."""
    if param_type == "resource" or gives == ANY:
        return True
    family = "list" if param_type.startswith("list") else param_type
    return family in _FITS.get(gives, set())


def gives_text(gives: str) -> str:
    """`"string"` -> "a string", `"object"` -> "a Python object (such as a model)"."""
    if gives == OBJECT:
        return "a Python object (such as a model)"
    return expected(gives)
