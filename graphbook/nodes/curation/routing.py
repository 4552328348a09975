"""Where each dict goes: by an expression (Filter), by a number against a threshold
(Threshold), by a field's value (RouteByField), the first few (Limit)."""

from __future__ import annotations

from typing import Any, ClassVar

from graphbook.lifecycle import Step
from graphbook.nodes.common import (
    Data,
    Expression,
    NodeInputError,
    choice,
)
from graphbook.nodes.curation import CATEGORY
from graphbook.nodes.curation.fields import evaluate, field_of, field_text, strings


class Filter(Step):
    """Sends each dict to `keep` when a Python expression over its fields is true, else to
    `drop`.

    The dict's fields are names in the expression, and the whole dict is `data` (for a field
    whose name is not a Python name: `data["my-field"]`). The expression is checked when the
    run starts, before any data flows; a field the dict lacks is an error that names it and
    lists the dict's fields.

    Example: `confidence >= 0.8 and label != "cat"`, or `width * height > 640 * 480`.
    Adds no fields.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "expression": {
            "type": "string",
            "required": True,
            "expression": True,
            "description": "a Python expression over the fields, e.g. confidence >= 0.8 and "
            'label != "cat"',
        },
    }
    Outputs: ClassVar[list[str]] = ["keep", "drop"]
    Category: ClassVar[str] = CATEGORY
    expression: str

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.test = Expression(self.expression)

    def route(self, data: Data) -> str:
        return "keep" if evaluate(self.test, data) else "drop"


class Threshold(Step):
    """Sends each dict to `keep` when its number `field` is at least `minimum`, else to
    `drop`: a threshold an app's form can offer as a number (Filter takes an expression).

    A dict without the field, or whose field is not a number, fails with an error naming it.
    Example: field `confidence`, minimum 0.8: the predictions at least 80% sure to `keep`.
    Adds no fields.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "field": {
            "type": "string",
            "default": "confidence",
            "description": "the field holding the number",
        },
        "minimum": {
            "type": "float",
            "default": 0.5,
            "description": "the least value kept",
        },
    }
    Outputs: ClassVar[list[str]] = ["keep", "drop"]
    Category: ClassVar[str] = CATEGORY
    field: str = "confidence"
    minimum: float = 0.5

    def route(self, data: Data) -> str:
        value = field_of(data, self.field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise NodeInputError(
                f"field {self.field!r} holds {type(value).__name__} {value!r:.40}, not a "
                "number; set field to one that holds numbers"
            )
        return "keep" if value >= self.minimum else "drop"


class RouteByField(Step):
    """Sends a dict to `match` when its `field`, as text, is one of `values`, else to `other`.

    As text means: text as it is, an image record as its path, numbers and booleans as JSON
    writes them (`3`, `0.5`, `true`). A dict without the field fails (an error naming the
    field) unless `missing` is "other", which sends it to `other`.

    Example: field `label`, values `["cat", "dog"]`: cats and dogs to `match`, the rest to
    `other`. Adds no fields.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "field": {"type": "string", "required": True, "description": "the field to look at"},
        "values": {
            "type": "list[string]",
            "default": [],
            "description": "the values (as text) that go to match",
        },
        "missing": {
            "type": "string",
            "default": "fail",
            "description": "a dict without the field: fail, or other (send it to other)",
        },
    }
    Outputs: ClassVar[list[str]] = ["match", "other"]
    Category: ClassVar[str] = CATEGORY
    field: str
    values: list[str]
    missing: str = "fail"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not str(self.field).strip():
            raise NodeInputError("field is empty; set it to the field to route by")
        self.wanted = set(strings(self.values, "values"))
        choice(self.missing, ("fail", "other"), "missing")

    def route(self, data: Data) -> str:
        if self.field not in data and self.missing == "other":
            return "other"
        return "match" if field_text(field_of(data, self.field)) in self.wanted else "other"


class Limit(Step):
    """Hands on the first `count` dicts of the run and drops the rest.

    The source upstream still reads to its end (the engine pulls a source until it is done,
    whatever happens downstream), but the dicts past `count` stop here at once. To stop
    reading early as well, use the source's own `limit` parameter where it has one.

    Adds no fields. Example: count 100 to try a pipeline on the first 100 images.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "count": {"type": "int", "default": 10, "description": "how many dicts to hand on"},
    }
    Category: ClassVar[str] = CATEGORY
    count: int = 10
    seen = 0

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if int(self.count) < 0:
            raise NodeInputError(f"count is {self.count}; it must be 0 or more")

    def on_start(self) -> None:
        self.seen = 0

    def route(self, data: Data) -> str | None:
        self.seen += 1
        return "out" if self.seen <= self.count else None
