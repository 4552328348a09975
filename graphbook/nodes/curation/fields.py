"""A dict's fields as the pack's nodes read them (as text, by name with a clear error, through
an expression, list parameters), and the nodes that edit them: set, rename, drop, keep."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from graphbook.lifecycle import Step
from graphbook.nodes.common import (
    Data,
    Expression,
    NodeInputError,
    choice,
    plain_value,
)
from graphbook.nodes.curation import CATEGORY


def field_text(value: Any) -> str:
    """A field's value as text: text as it is, an image record as its path, anything else as
    JSON (`1`, `2.5`, `true`, `null`, `["a", "b"]`)."""
    plain = plain_value(value)
    return plain if isinstance(plain, str) else json.dumps(plain, sort_keys=True, default=str)


def field_of(data: Data, name: str, what: str = "field") -> Any:
    """`data[name]`, or an error naming the field, the dict's fields and the parameter to fix."""
    try:
        return data[name]
    except KeyError:
        raise NodeInputError(
            f"the dict has no field {name!r} (fields: {', '.join(map(repr, data)) or 'none'}); "
            f"fix the {what} parameter"
        ) from None


def evaluate(expression: Expression, data: Data) -> Any:
    """The expression's value on `data`; any failure names the expression."""
    try:
        return expression(data)
    except NodeInputError:
        raise
    except Exception as exc:
        raise NodeInputError(
            f"{expression.text!r} failed on this dict: {type(exc).__name__}: {exc}"
        ) from exc


def strings(value: Any, what: str) -> list[str]:
    """A list[string] parameter; one text is a list of one."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if not isinstance(value, list | tuple):
        raise NodeInputError(f"{what} must be a list of field names, got {value!r:.80}")
    return [str(v) for v in value]


class SetField(Step):
    """Sets `field` on each dict to the value of a Python expression over its fields (as in
    Filter: the fields are names, the whole dict is `data`).

    Examples: `label.upper()`, `confidence * 100`, `"reviewed"` (text needs its quotes),
    `width / height`. Adds (or replaces) `field`.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "field": {"type": "string", "required": True, "description": "the field to set"},
        "value": {
            "type": "string",
            "required": True,
            "expression": True,
            "description": 'a Python expression, e.g. label.upper() or "fixed"',
        },
    }
    Category: ClassVar[str] = CATEGORY
    field: str
    value: str

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not str(self.field).strip():
            raise NodeInputError("field is empty; set it to the name of the field to set")
        self.expression = Expression(self.value, "value")

    def on_data(self, data: Data) -> None:
        try:
            data[self.field] = evaluate(self.expression, data)
        except NodeInputError as exc:
            raise NodeInputError(f'{exc} (text needs quotes: "fixed")') from exc.__cause__


def missing_fields(data: Data, wanted: Iterable[str], missing: str, what: str) -> None:
    absent = [name for name in wanted if name not in data]
    if absent and missing == "fail":
        raise NodeInputError(
            f"the dict has no field {', '.join(map(repr, absent))} (fields: "
            f"{', '.join(map(repr, data)) or 'none'}); fix {what}, or set missing to ignore"
        )


class RenameFields(Step):
    """Renames fields: `mapping` is old name -> new name (`{"pred": "label"}`). The fields keep
    their order; swaps work (`{"a": "b", "b": "a"}`).

    A dict without an old field fails, naming it (a renamed field that is not there would be
    missed downstream), unless `missing` is "ignore". Renaming onto a field that exists and is
    not itself renamed is an error: drop that field first.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "mapping": {"type": "dict", "default": {}, "description": "old name -> new name"},
        "missing": {
            "type": "string",
            "default": "fail",
            "description": "an old field the dict lacks: fail, or ignore",
        },
    }
    Category: ClassVar[str] = CATEGORY
    mapping: dict[str, Any]
    missing: str = "fail"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not isinstance(self.mapping, Mapping):
            raise NodeInputError(f"mapping must be a dict of old -> new names: {self.mapping!r}")
        self.renames = {str(old): str(new) for old, new in self.mapping.items()}
        news = list(self.renames.values())
        twice = sorted({new for new in news if news.count(new) > 1 or not new.strip()})
        if twice:
            raise NodeInputError(f"mapping gives several fields (or none) the name {twice}")
        choice(self.missing, ("fail", "ignore"), "missing")

    def on_data(self, data: Data) -> None:
        missing_fields(data, self.renames, self.missing, "the mapping")
        for new in self.renames.values():
            if new in data and new not in self.renames:
                raise NodeInputError(
                    f"renaming onto {new!r} would overwrite the dict's field {new!r}; drop it "
                    "first (DropFields) or choose another name"
                )
        items = [(self.renames.get(k, k), v) for k, v in data.items()]
        data.clear()
        data.update(items)


class DropFields(Step):
    """Removes `fields` from each dict (large arrays before a table sink, say). A field a dict
    lacks is skipped unless `missing` is "fail" (it is gone either way).
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "fields": {"type": "list[string]", "default": [], "description": "the fields to remove"},
        "missing": {
            "type": "string",
            "default": "ignore",
            "description": "a field the dict lacks: ignore, or fail",
        },
    }
    Category: ClassVar[str] = CATEGORY
    fields: list[str]
    missing: str = "ignore"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fields = strings(getattr(self, "fields", []), "fields")
        choice(self.missing, ("fail", "ignore"), "missing")

    def on_data(self, data: Data) -> None:
        missing_fields(data, self.fields, self.missing, "fields")
        for name in self.fields:
            data.pop(name, None)


class KeepFields(Step):
    """Keeps only `fields` on each dict, in their order here, and removes the others. A field
    a dict lacks fails it, naming the field, unless `missing` is "ignore".
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "fields": {"type": "list[string]", "default": [], "description": "the fields to keep"},
        "missing": {
            "type": "string",
            "default": "fail",
            "description": "a field the dict lacks: fail, or ignore",
        },
    }
    Category: ClassVar[str] = CATEGORY
    fields: list[str]
    missing: str = "fail"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fields = strings(getattr(self, "fields", []), "fields")
        if not self.fields:
            raise NodeInputError("fields is empty; list the fields to keep")
        choice(self.missing, ("fail", "ignore"), "missing")

    def on_data(self, data: Data) -> None:
        missing_fields(data, self.fields, self.missing, "fields")
        kept = [(name, data[name]) for name in self.fields if name in data]
        data.clear()
        data.update(kept)
