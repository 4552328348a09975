"""The results gallery: a node's output dicts filtered, sorted and paged for the editor's grid.

The filter is a small language read here (never evaluated as Python): clauses `FIELD OP VALUE`
joined by `and`, OP one of `== != < <= > >= contains`, VALUE a number, a quoted string,
true/false/null or a bare word (a string). FIELD is a key of the dict, dotted for nested dicts
(`label.name`). Examples: `prediction == "cat"`, `confidence < 0.5 and prediction != dog`.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from graphbook import protocol as p

OPS = ("==", "!=", "<=", ">=", "<", ">", "contains")
MAX_FILTER = 500
MAX_LIMIT = 500
SAMPLED = 200
"""Dicts read for the field names the sort and filter offer."""
FIELD_TEXT = 200
"""Characters of a text field shown in a row."""
_TOKEN = re.compile(
    r"""\s*(?:(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    r"""|(?P<op>==|!=|<=|>=|<|>|=|!)|(?P<word>[^\s"'<>=!]+))"""
)
_FIELD = re.compile(r"^[A-Za-z_][\w-]*(\.[\w-]+)*$")


class GalleryQueryError(ValueError):
    """A filter or sort the gallery cannot read; the message names the bad part."""


@dataclass(frozen=True)
class Clause:
    field: str
    op: str
    value: Any


@dataclass(frozen=True)
class GalleryQuery:
    filter: str = ""
    sort: str | None = None
    order: Literal["asc", "desc"] = "asc"
    offset: int = 0
    limit: int = 100


# -- the filter language ---------------------------------------------------------------------
def parse_filter(text: str) -> tuple[Clause, ...]:
    """The clauses of a filter; GalleryQueryError naming the part that is wrong."""
    if len(text) > MAX_FILTER:
        raise GalleryQueryError(f"the filter is {len(text)} characters; at most {MAX_FILTER}")
    tokens = _tokens(text)
    clauses: list[Clause] = []
    while tokens:
        if clauses:
            joiner = tokens.pop(0)
            if joiner[1].lower() != "and":
                raise GalleryQueryError(
                    f"expected 'and' between clauses, got {joiner[1]!r}; "
                    "write clauses as FIELD OP VALUE and FIELD OP VALUE"
                )
        clauses.append(_clause(tokens))
    return tuple(clauses)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            rest = text[position:].strip()
            raise GalleryQueryError(f"cannot read the filter at {rest[:40]!r}")
        kind = match.lastgroup or "word"
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _clause(tokens: list[tuple[str, str]]) -> Clause:
    if len(tokens) < 3:
        got = " ".join(t[1] for t in tokens)
        raise GalleryQueryError(
            f"incomplete clause {got!r}: write FIELD OP VALUE, OP one of {' '.join(OPS)}"
        )
    (field_kind, field), (_, op), (value_kind, value) = tokens[:3]
    del tokens[:3]
    if field_kind != "word" or not _FIELD.match(field):
        raise GalleryQueryError(f"{field!r} is not a field name (letters, digits, _ and dots)")
    if op not in OPS:
        raise GalleryQueryError(
            f"unknown operator {op!r} after {field!r}; use one of {' '.join(OPS)}"
        )
    if value_kind == "op":
        raise GalleryQueryError(f"missing value after {field} {op}: got {value!r}")
    return Clause(field, op, _value(value_kind, value))


def _value(kind: str, text: str) -> Any:
    if kind == "string":
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def matches(item: Any, clauses: tuple[Clause, ...]) -> bool:
    return all(_holds(field_value(item, c.field), c) for c in clauses)


def _holds(found: Any, clause: Clause) -> bool:
    op, wanted = clause.op, clause.value
    if op == "contains":
        if isinstance(found, str):
            return str(wanted).lower() in found.lower()
        if isinstance(found, list | tuple):
            return wanted in found
        return False
    if op in ("==", "!="):
        equal = _equal(found, wanted)
        return equal if op == "==" else not equal
    ordered = _ordered(found, wanted)
    if ordered is None:
        return False
    left, right = ordered
    return bool(
        {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
    )


def _equal(found: Any, wanted: Any) -> bool:
    if _is_number(found) and _is_number(wanted):
        return bool(found == wanted)
    if isinstance(found, str) and not isinstance(wanted, str):
        return found == _text(wanted)
    return bool(found == wanted)


def _ordered(found: Any, wanted: Any) -> tuple[Any, Any] | None:
    if _is_number(found) and _is_number(wanted):
        return found, wanted
    if isinstance(found, str) and isinstance(wanted, str):
        return found, wanted
    return None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_MISSING = object()


def field_value(item: Any, field: str) -> Any:
    """The value at a dotted field of a dict; None where there is none."""
    if "." not in field:
        return item.get(field) if isinstance(item, dict | Mapping) else None
    value = item
    for part in field.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part, _MISSING)
        if value is _MISSING:
            return None
    return value


# -- picking, sorting, paging ----------------------------------------------------------------
def check_query(query: GalleryQuery) -> tuple[Clause, ...]:
    """The query's clauses; GalleryQueryError for a bad filter, sort or page."""
    if query.sort is not None and not _FIELD.match(query.sort):
        raise GalleryQueryError(f"sort {query.sort!r} is not a field name")
    if query.order not in ("asc", "desc"):
        raise GalleryQueryError(f"order must be asc or desc, got {query.order!r:.40}")
    if query.offset < 0:
        raise GalleryQueryError(f"offset must be 0 or more, got {query.offset}")
    if not 1 <= query.limit <= MAX_LIMIT:
        raise GalleryQueryError(f"limit must be 1 to {MAX_LIMIT}, got {query.limit}")
    return parse_filter(query.filter)


class Selection:
    """The dicts one query keeps, in its order, brought up to date as more are handed on: only
    the new dicts are read (a run adding to 100,000 dicts costs what it adds)."""

    def __init__(self, query: GalleryQuery) -> None:
        self.query = query
        self.clauses = check_query(query)
        self._reset()

    def _reset(self) -> None:
        self.seen = 0
        self.kept: list[int] = []
        """Without a sort: the indexes kept, in the order handed on."""
        self.numbered: list[tuple[int | float, int]] = []
        """With a sort: (value, index) in order (the value negated for `desc`); ties keep
        the order handed on."""
        self.without: list[int] = []
        """With a sort: the dicts with no number at the sort field, last, in order."""

    def update(self, items: list[Any]) -> None:
        if len(items) < self.seen:
            self._reset()  # the dicts of a new run
        if len(items) > self.seen:
            self._add(items, self.seen)
            self.seen = len(items)

    @property
    def count(self) -> int:
        return len(self.kept) + len(self.numbered) + len(self.without)

    def window(self, offset: int, limit: int) -> list[int]:
        """The indexes at positions offset .. offset + limit of the order."""
        end = min(self.count, offset + limit)
        if offset >= end:
            return []
        if self.query.sort is None:
            if self.query.order == "desc":
                last = len(self.kept) - 1
                return [self.kept[last - k] for k in range(offset, end)]
            return self.kept[offset:end]
        numbered = [i for _, i in self.numbered[offset:end]]
        rest = max(0, offset - len(self.numbered))
        return numbered + self.without[rest : rest + (end - offset - len(numbered))]

    def _add(self, items: list[Any], start: int) -> None:
        clauses, sort = self.clauses, self.query.sort
        new = [i for i in range(start, len(items)) if matches(items[i], clauses)]
        if sort is None:
            self.kept.extend(new)
            return
        sign = -1 if self.query.order == "desc" else 1
        for i in new:
            value = field_value(items[i], sort)
            if _is_number(value) and not _nan(value):
                self.numbered.append((sign * value, i))
            else:
                self.without.append(i)
        self.numbered.sort()  # mostly sorted already: Timsort merges the new run in linear time


class Selections:
    """The last few queries' selections, each over one list of dicts (a recording, or its
    cache entry), so paging and a growing run reuse what was read."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._kept: dict[tuple[Any, ...], Selection] = {}
        self._lock = threading.Lock()

    def window(self, items: list[Any], query: GalleryQuery) -> tuple[int, int, list[int]]:
        """(dicts read, dicts kept, the indexes of the query's page), the selection brought up
        to date first (one caller at a time: a sort empties the list while it runs)."""
        first = id(items[0]) if items else 0
        key = (id(items), first, query.filter, query.sort, query.order)
        with self._lock:
            selection = self._kept.pop(key, None) or Selection(query)
            self._kept[key] = selection  # the most recent last
            while len(self._kept) > self.size:
                del self._kept[next(iter(self._kept))]
            selection.update(items)
            shown = selection.window(query.offset, query.limit)
            return selection.seen, selection.count, shown


def select(items: list[Any], query: GalleryQuery) -> list[int]:
    """The indexes of every dict the filter keeps, in the sort's order."""
    selection = Selection(query)
    selection.update(items)
    return selection.window(0, selection.count)


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


ImageLink = Callable[[Any], tuple[str | None, str | None, str | None]]
"""An image (a record's path, or an image in memory) -> (thumbnail URL, full URL, reason the
full image is not served)."""


def page(
    workflow: str,
    node: str,
    output: str,
    items: list[Any],
    query: GalleryQuery,
    link: ImageLink,
    selections: Selections | None = None,
) -> p.GalleryPage:
    """One page of the gallery over `items` (the node's dicts on `output`, in order: the list
    the cache keeps, so that `selections` knows it again)."""
    seen, matched, shown = (selections or Selections(1)).window(items, query)
    rows = [_row(index, items[index], link) for index in shown]
    names, numeric = field_names(items)
    return p.GalleryPage(workflow, node, output, seen, matched, query.offset, rows, names, numeric)


def _row(index: int, item: Any, link: ImageLink) -> p.GalleryRow:
    image = image_in(item)
    thumb, url, reason = link(image) if image is not None else (None, None, None)
    path = _image_path(image)
    return p.GalleryRow(index, thumb, url, reason, path, plain_fields(item))


def image_in(item: Any) -> Any:
    """The dict's image: the dict itself when it is an image record, else the first field
    holding one (a record, a list of records, or an image in memory); None if it has none."""
    if _is_image(item):
        return item
    if not isinstance(item, Mapping):
        return None
    for value in item.values():
        if _is_image(value):
            return value
        if isinstance(value, list | tuple) and value and _is_image(value[0]):
            return value[0]
    return None


def _is_image(value: Any) -> bool:
    if isinstance(value, Mapping):
        return value.get("type") == "image" and isinstance(value.get("value"), str)
    return type(value).__module__.split(".")[0] == "PIL" and hasattr(value, "size")


def _image_path(image: Any) -> str | None:
    return image["value"] if isinstance(image, Mapping) else None


def plain_fields(item: Any) -> dict[str, Any]:
    """The dict's fields a tile can show: numbers, text, booleans, null; nested image records'
    own plain fields as `field.key`. A choice of fields, not a conversion: the rest are left
    out, where graphbook/plain.py would convert them."""
    if not isinstance(item, Mapping):
        return {}
    shown: dict[str, Any] = {}
    for key, value in item.items():
        name = str(key)
        if _is_image(item) and name in ("type", "value"):
            continue
        if _is_plain(value):
            shown[name] = _shown(value)
        elif isinstance(value, Mapping) and _is_image(value):
            for inner, nested in value.items():
                if inner not in ("type", "value") and _is_plain(nested):
                    shown[f"{name}.{inner}"] = _shown(nested)
    return shown


def _is_plain(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


def _shown(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and len(value) > FIELD_TEXT:
        return value[:FIELD_TEXT] + "…"
    return value


def field_names(items: list[Any]) -> tuple[list[str], list[str]]:
    """The plain fields of the first dicts (every field, and those holding numbers)."""
    names: dict[str, None] = {}
    numeric: dict[str, None] = {}
    for item in items[:SAMPLED]:
        for name, value in plain_fields(item).items():
            names.setdefault(name)
            if _is_number(value):
                numeric.setdefault(name)
    return list(names), list(numeric)
