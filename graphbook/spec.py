"""NodeSpec: what one kind of node is, whether written as a class or as decorated functions."""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import linecache
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from graphbook.errors import NodeDefinitionError
from graphbook.lifecycle import BatchStep, PromptStep, SourceStep, Step
from graphbook.params import ANY, ParamSpec, make_param, resolve, value_type
from graphbook.resources import Resource

NodeKind = Literal["step", "source", "batch", "prompt", "resource"]
PackKind = Literal["builtin", "pack", "custom", "example"]
"""Where a node comes from: Graphbook's own library, a node pack installed as a Python package
(an entry point), a node folder such as custom_nodes/, or Graphbook's examples."""
RESOURCE_OUTPUT = "resource"
DATA_INPUT = "in"


@dataclass(frozen=True)
class NodeSpec:
    """A node kind: its name, category, parameters, outputs, docs, and how to build one."""

    name: str
    kind: NodeKind
    factory: Callable[[dict[str, Any]], Any] = field(compare=False, repr=False)
    category: str = ""
    params: tuple[ParamSpec, ...] = ()
    outputs: tuple[str, ...] = ("out",)
    requires_input: bool = True
    doc: str = ""
    origin: str = ""
    code_hash: str = ""
    gives: str = ANY
    """A resource's value type ("string", "object", ...; graphbook.params.value_type); "any"
    when undeclared. Wires into parameters that cannot take it are refused."""
    pack: str = ""
    """The pack the node belongs to: a library module ("images"), an installed pack's
    distribution, or "" for a node folder's file."""
    pack_kind: PackKind = "custom"
    writes: tuple[str, ...] = ()
    """Parameters naming the files or folders the node writes (Step.Writes)."""

    @property
    def is_resource(self) -> bool:
        return self.kind == "resource"

    @property
    def inputs(self) -> tuple[str, ...]:
        return (DATA_INPUT,) if self.requires_input and not self.is_resource else ()

    def param(self, name: str) -> ParamSpec | None:
        return next((p for p in self.params if p.name == name), None)

    def build(self, params: Mapping[str, Any] | None = None) -> Any:
        """A fresh runtime instance given resolved parameter values.

        A declared parameter left out gets its default; a value given is kept as it is, so
        0, False and "" are never replaced by defaults. One with no value and no default is
        not passed at all, as in Graphbook 0.13: a class node's own Python default
        (`def __init__(self, image_columns=[])`) holds, and a function node's `ctx` has it as
        None (what its `@param` default is).
        """
        given = dict(params or {})
        for param in self.params:
            if param.name not in given and param.default is not None:
                given[param.name] = param.default if param.is_resource else resolve(param)
        return self.factory(given)

    def described(self) -> NodeSpec:
        """This spec as data only, to hand to another process: what the catalog and a
        workflow's checks read, with none of the node file's code (it builds nothing; its
        parameters' defaults are plain data, a function default a stand-in)."""
        params = tuple(
            ParamSpec(
                str(param.name),
                str(param.type),
                _as_data(param.default),
                str(param.description),
                bool(param.required),
                bool(param.path),
            )
            for param in self.params
        )
        text: dict[str, Any] = {key: str(getattr(self, key)) for key in _TEXT_FIELDS}
        return replace(
            self,
            factory=DescribedOnly(str(self.name), str(self.origin)),
            params=params,
            outputs=tuple(map(str, self.outputs)),
            requires_input=bool(self.requires_input),
            writes=tuple(map(str, self.writes)),
            **text,
        )


_TEXT_FIELDS = ("name", "category", "doc", "origin", "code_hash", "gives", "pack")
"""A spec's text fields: as `str` itself in a described spec (a subclass may come from a node
file)."""


@dataclass(frozen=True)
class DescribedOnly:
    """The factory of a described spec: the node runs where its file was imported."""

    name: str
    origin: str

    def __call__(self, params: dict[str, Any]) -> Any:
        raise NodeDefinitionError(
            f"{self.name} is described here, not imported: it runs in the process that "
            f"imports {self.origin or 'its node file'}"
        )


def function_stand_in(*args: Any, **kwargs: Any) -> Any:
    """A described spec's function default: the function itself stays in its node file."""
    raise NodeDefinitionError("a node's default function runs where its node file is imported")


def _as_data(value: Any) -> Any:
    """`value` as plain data of builtin types only (subclasses too become their base: one
    defined in a node file could not be read where the file is not imported)."""
    if callable(value):
        return function_stand_in
    if value is None:
        return None
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, Mapping):
        return {str(k): _as_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_data(v) for v in value]
    return str(value)


def parse_name(full: str) -> tuple[str, str]:
    """`"Custom/Images/Load"` -> (`"Load"`, `"Custom/Images"`)."""
    parts = [p for p in full.strip().split("/") if p]
    if not parts:
        raise NodeDefinitionError(f"node name {full!r} is empty; give it a name like 'Cat/Name'")
    return parts[-1], "/".join(parts[:-1])


def class_kind(cls: type) -> NodeKind:
    if issubclass(cls, Resource):
        return "resource"
    if issubclass(cls, BatchStep):
        return "batch"
    if issubclass(cls, PromptStep):
        return "prompt"
    if issubclass(cls, SourceStep):
        return "source"
    return "step"


def params_of(cls: type, declared: Mapping[str, Any]) -> tuple[ParamSpec, ...]:
    if not isinstance(declared, Mapping):
        raise NodeDefinitionError(f"{cls.__name__}.Parameters must be a dict of name -> spec")
    return tuple(make_param(name, spec) for name, spec in declared.items())


def class_spec(cls: type) -> NodeSpec:
    """The spec of a Step or Resource subclass, from its class attributes and docstring."""
    if not (issubclass(cls, Step) or issubclass(cls, Resource)):
        raise NodeDefinitionError(f"{cls.__name__} is neither a Step nor a Resource subclass")
    kind = class_kind(cls)
    params = params_of(cls, getattr(cls, "Parameters", {}))
    outputs = (RESOURCE_OUTPUT,) if kind == "resource" else tuple(getattr(cls, "Outputs", ["out"]))
    requires_input = kind != "resource" and bool(getattr(cls, "RequiresInput", True))
    return NodeSpec(
        name=cls.__name__,
        kind=kind,
        factory=lambda params: build_class(cls, params),
        category=str(getattr(cls, "Category", "")),
        params=params,
        outputs=outputs,
        requires_input=requires_input and kind != "source",
        doc=own_doc(cls),
        origin=source_file(cls),
        code_hash=code_hash(cls),
        gives=resource_gives(cls, params) if kind == "resource" else ANY,
        writes=tuple(getattr(cls, "Writes", ())),
    )


def own_doc(cls: type) -> str:
    """The class's docstring, or the nearest base's that is not Graphbook's own: a node with
    none shows no help rather than `Step`'s or `Resource`'s."""
    for owner in cls.__mro__:
        doc = owner.__dict__.get("__doc__")
        if _is_graphbook_base(owner) and owner is not cls:
            return ""
        if isinstance(doc, str) and doc.strip():
            return inspect.cleandoc(doc)
    return ""


def _is_graphbook_base(owner: type) -> bool:
    module = owner.__module__
    return module in ("builtins", "graphbook") or module.startswith("graphbook.")


def build_class(cls: type, params: dict[str, Any]) -> Any:
    """`cls(**params)`; a declared parameter that was not passed (no value, no default) and that
    the instance did not set itself reads as None, as a class relying on `Step(**params)` saw
    it before, while a class's own Python default holds."""
    unset = [name for name in getattr(cls, "Parameters", None) or {} if name not in params]
    try:
        instance = cls(**params)
    except TypeError as exc:
        named = [name for name in unset if repr(name) in str(exc)]
        if not named:
            raise
        raise TypeError(
            f"{exc}: {', '.join(map(repr, named))} has no value and no default; give it a value"
        ) from exc
    for name in unset:
        if not hasattr(instance, name):
            setattr(instance, name, None)
    return instance


def resource_gives(cls: type, params: tuple[ParamSpec, ...]) -> str:
    """What a Resource subclass gives: its `Gives` attribute, else the return annotation of
    its `value()`, else (when it keeps Resource's `value()`) the type of its `val` parameter."""
    declared = getattr(cls, "Gives", None)
    if isinstance(declared, str):
        return declared
    value = getattr(cls, "value", Resource.value)
    if value is Resource.value:
        val = next((p for p in params if p.name == "val"), None)
        return val.type if val is not None and val.type != "resource" else ANY
    return value_type(inspect.signature(value).return_annotation)


def source_file(obj: Any) -> str:
    try:
        return inspect.getsourcefile(obj) or ""
    except TypeError:
        return ""


def code_hash(obj: Any) -> str:
    """A hash of the code that defines `obj`, so a changed node is noticed."""
    try:
        text = _class_source(obj) if isinstance(obj, type) else inspect.getsource(obj)
    except (OSError, TypeError):
        text = getattr(obj, "__qualname__", repr(obj))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _class_source(cls: type) -> str:
    """A class's source, its file parsed once for all the classes in it: inspect.getsource
    parses the whole file again for each class (0.02 s a class here, most of building a
    registry of the node library)."""
    file = inspect.getsourcefile(cls)
    if file is None:
        raise OSError(f"no source file for {cls.__qualname__}")
    linecache.checkcache(file)
    module = sys.modules.get(cls.__module__)
    lines = linecache.getlines(file, module.__dict__ if module else None)
    span = _class_spans("".join(lines)).get(cls.__qualname__)
    if span is None:
        return inspect.getsource(cls)
    return "".join(lines[span[0] - 1 : span[1]])


@functools.lru_cache(maxsize=64)
def _class_spans(text: str) -> dict[str, tuple[int, int]]:
    """Each class of a module's source by qualified name: its first line (decorators
    included) and last line."""
    spans: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                spans.setdefault(name, (first, child.end_lineno or child.lineno))
                visit(child, f"{name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, prefix)

    visit(ast.parse(text), "")
    return spans
