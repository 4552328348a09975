"""Issue 26: how 0.13 node files show in the catalog (item 6: a class with no docstring of its
own shows no help, not Graphbook's base-class docstring)."""

from __future__ import annotations

from pathlib import Path

from graphbook import Registry
from graphbook.core.steps import Step


def test_a_class_without_a_docstring_shows_no_help(project: Path) -> None:
    registry = Registry()
    registry.load_folder(project / "custom_nodes")
    assert registry.get("Filter").doc == "", "the filter guide's class has none"
    assert registry.get("Rows").doc.startswith("Yields `count` rows")


class Documented(Step):
    """Counts things."""


class Inherits(Documented):
    pass


def test_a_docstring_is_inherited_from_the_node_authors_own_base() -> None:
    registry = Registry()
    assert registry.add(Inherits).doc == "Counts things."
