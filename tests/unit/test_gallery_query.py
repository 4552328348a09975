"""The gallery's filter language and its selections: read, never evaluated; a selection brought
up to date as a run hands on more gives what a fresh one gives."""

from __future__ import annotations

import pytest

from graphbook.server.gallery import (
    GalleryQuery,
    GalleryQueryError,
    Selections,
    matches,
    parse_filter,
    select,
)


def test_filter_values_are_read_as_written() -> None:
    clauses = parse_filter(
        "a == 'it\\'s' and b != 2 and c >= -0.5 and d == true and e == null and f contains x"
    )
    assert [(c.field, c.op, c.value) for c in clauses] == [
        ("a", "==", "it's"),
        ("b", "!=", 2),
        ("c", ">=", -0.5),
        ("d", "==", True),
        ("e", "==", None),
        ("f", "contains", "x"),
    ]
    item = {"a": "it's", "b": 3, "c": 0, "d": True, "e": None, "f": "XyZ", "n": {"m": 1}}
    assert matches(item, clauses)
    assert matches(item, parse_filter("n.m < 2 and missing != 1"))
    assert not matches(item, parse_filter("a < 1"))  # text and a number do not order


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("x = 1", "unknown operator '='"),
        ("x == 1 y == 2", "expected 'and' between clauses, got 'y'"),
        ("x ==", "incomplete clause 'x =='"),
        ("1x == 2", "'1x' is not a field name"),
        ("x == 'open", 'cannot read the filter at "\'open"'),
        ("x < < 1", "missing value after x <"),
    ],
)
def test_a_bad_filter_names_its_bad_part(text: str, named: str) -> None:
    with pytest.raises(GalleryQueryError) as refused:
        parse_filter(text)
    assert named in str(refused.value)


@pytest.mark.parametrize(
    "query",
    [
        GalleryQuery(filter="k != 1", sort="v", order="asc"),
        GalleryQuery(filter="k != 1", sort="v", order="desc"),
        GalleryQuery(filter="k == 2"),
        GalleryQuery(order="desc"),
    ],
)
def test_a_selection_grown_by_a_run_equals_a_fresh_one(query: GalleryQuery) -> None:
    items = [{"k": i % 3, "v": (i * 7) % 10 if i % 5 else "none"} for i in range(40)]
    growing = items[:13]
    selections = Selections()
    for size in (13, 14, 30, 40):
        growing.extend(items[len(growing) : size])
        seen, matched, shown = selections.window(
            growing, GalleryQuery(**{**query.__dict__, "limit": 500})
        )
        fresh = select(items[:size], query)
        assert (seen, matched, shown) == (size, len(fresh), fresh)
    sorted_ = select(items, GalleryQuery(sort="v"))
    values = [items[i]["v"] for i in sorted_ if isinstance(items[i]["v"], int)]
    assert values == sorted(values) and sorted_[-1] == 35  # dicts without a number last
