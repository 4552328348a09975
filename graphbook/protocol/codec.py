"""The protocol's one encode and one decode: a dataclass (message or HTTP payload) as JSON text,
and JSON text back into the dataclass it names, every field's type checked; ProtocolError and
the codes a refusal is called by."""

from __future__ import annotations

import contextlib
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields, is_dataclass
from functools import partial
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from graphbook.plain import plain
from graphbook.previews import KINDS, ImagePreview
from graphbook.text import encodable_json

ErrorCode = Literal[
    "bad_json",
    "bad_message",
    "unknown_type",
    "too_large",
    "not_found",
    "bad_path",
    "conflict",
    "invalid_workflow",
    "invalid_inputs",
    "apps_only",
    "unauthorized",
    "forbidden",
    "no_run",
    "run_active",
    "store_failed",
    "internal",
]


class ProtocolError(ValueError):
    """A message that is not valid JSON, has an unknown type or a missing or wrong field."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message


T = TypeVar("T")


def to_json(value: Any, leaf: Callable[[Any], Any] | None = None) -> Any:
    """A dataclass (or anything holding them) as plain JSON data; non-finite floats as text.
    `leaf` turns what JSON cannot hold (a tensor, an image) into what it can (`run --json`
    gives the engine's preview); without it such a value is left for `json.dumps` to refuse.
    Messages' and events' use of the one walk (graphbook/plain.py)."""
    return plain(value, _fields_of if leaf is None else partial(_message_part, leaf), str)


def _fields_of(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    return value


def _message_part(leaf: Callable[[Any], Any], value: Any) -> Any:
    as_fields = _fields_of(value)
    if as_fields is not value or isinstance(value, float | Mapping | list | tuple):
        return as_fields
    return leaf(value)


def encode(message: Any) -> str:
    """One message (or HTTP payload) as JSON text that UTF-8 can encode (lone surrogates in
    its strings escaped: graphbook/text.py)."""
    return encodable_json(json.dumps(to_json(message), ensure_ascii=False, allow_nan=False))


def decode(
    text: str | bytes, types_by_name: dict[str, type[Any]], moved: Mapping[str, str] = {}
) -> Any:
    """A message of one of `types_by_name`; one of `moved` is refused naming the route that
    does what it asked."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError("bad_json", f"a message must be JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", f"a message is a JSON object, not {_kind(data)}")
    name = data.get("type")
    cls = types_by_name.get(name) if isinstance(name, str) else None
    if cls is None:
        known = ", ".join(sorted(types_by_name))
        if isinstance(name, str) and name in moved:
            raise ProtocolError(
                "unknown_type",
                f"the websocket no longer takes {name!r}: use {moved[name]} (HTTP); "
                f"the websocket takes: {known}",
            )
        raise ProtocolError("unknown_type", f"unknown message type {name!r}; known: {known}")
    return from_json(cls, data, str(name))


def from_json(cls: type[T], data: Any, where: str = "") -> T:
    """Build dataclass `cls` from JSON data, checking every field's type."""
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", f"{where or cls.__name__}: expected an object")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            values[f.name] = _check(hints[f.name], data[f.name], f"{where}.{f.name}")
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ProtocolError("bad_message", f"{where}: missing field {f.name!r}")
    return cls(**values)


def _check(hint: Any, value: Any, where: str) -> Any:
    origin = get_origin(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        if ImagePreview in get_args(hint):  # graphbook.previews.Preview
            return _check_preview(value, where)
        return _check_union(get_args(hint), value, where)
    if origin is Literal:
        if value not in get_args(hint):
            allowed = ", ".join(map(repr, get_args(hint)))
            raise ProtocolError("bad_message", f"{where}: expected one of {allowed}, got {value!r}")
        return value
    if origin is list:
        items = _expect(value, list, "a list", where)
        return [_check(get_args(hint)[0], v, f"{where}[{i}]") for i, v in enumerate(items)]
    if origin is dict:
        mapping = _expect(value, dict, "an object", where)
        return {k: _check(get_args(hint)[1], v, f"{where}.{k}") for k, v in mapping.items()}
    if is_dataclass(hint):
        return from_json(typing.cast(type[Any], hint), value, where)
    return _check_scalar(hint, value, where)


def _check_preview(value: Any, where: str) -> Any:
    """A preview read back: an object with a typed preview's `type` and only its fields is that
    preview (graphbook/previews.py's KINDS); any other object or list is walked for them."""
    if isinstance(value, dict):
        name = value.get("type")
        kind = KINDS.get(name) if isinstance(name, str) else None
        if kind is not None and value.keys() <= {f.name for f in fields(kind)}:
            with contextlib.suppress(ProtocolError):  # a dict of a node's that looks like one
                return from_json(kind, value, where)
        return {k: _check_preview(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_check_preview(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def _check_union(options: tuple[Any, ...], value: Any, where: str) -> Any:
    if value is None and type(None) in options:
        return None
    errors = []
    for option in (o for o in options if o is not type(None)):
        try:
            return _check(option, value, where)
        except ProtocolError as exc:
            errors.append(exc.message)
    raise ProtocolError("bad_message", errors[0] if errors else f"{where}: must not be null")


_SCALARS: dict[Any, tuple[tuple[type, ...], str]] = {
    str: ((str,), "a string"),
    bool: ((bool,), "true or false"),
    int: ((int,), "a whole number"),
    float: ((int, float), "a number"),
}


def _check_scalar(hint: Any, value: Any, where: str) -> Any:
    accepted, words = _SCALARS.get(hint, ((object,), "a value"))
    if isinstance(value, bool) and hint is not bool:
        accepted = ()
    if not isinstance(value, accepted):
        raise ProtocolError("bad_message", f"{where}: expected {words}, got {_kind(value)}")
    return value


def _expect(value: Any, kind: type[T], words: str, where: str) -> T:
    if not isinstance(value, kind):
        raise ProtocolError("bad_message", f"{where}: expected {words}, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {list: "a list", dict: "an object", str: "a string", type(None): "null", bool: "a bool"}
    return names.get(type(value), type(value).__name__)
