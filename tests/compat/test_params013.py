"""A parameter with no value and no default is left out, as 0.13 left it out,
so a class node's own Python default holds (graphbook-huggingface's HuggingfaceDataset has
`image_columns=[]`), and a function node's `ctx` reads it as None."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from graphbook import Registry, Workflow, build_graph, param, run_workflow, step
from graphbook.core.steps import Step
from graphbook.nodes import library_registry


def test_a_013_workflow_leaving_a_parameter_empty_runs_on_the_python_default(
    project: Path,
) -> None:
    result = run_workflow(project / "Rows.json", nodes=[project / "custom_nodes"], collect=True)
    assert result.ok, result.errors
    rows = result.output("1")
    assert [row["tagged"] for row in rows] == ["0", "1"], "ctx.suffix is None, as in 0.13"
    assert rows[0]["picture"] == "pictures/0.png", "image_columns=[] marked nothing"


def test_an_unset_parameter_is_not_in_the_graph(project: Path) -> None:
    registry = library_registry()
    registry.load_folder(project / "custom_nodes")
    graph = build_graph(Workflow.load(project / "Rows.json"), registry)
    assert graph.nodes["0"].params == {"count": 2}
    assert graph.nodes["1"].params == {}


class Columns(Step):
    Parameters: ClassVar[dict[str, Any]] = {
        "columns": {"type": "list[string]"},
        "limit": {"type": "int", "default": 0},
    }

    def __init__(self, columns: list[str] | None = None, limit: int = 5) -> None:
        super().__init__()
        self.columns = ["default"] if columns is None else columns
        self.limit = limit


class Loose(Step):
    """Relies on Step(**params) for its attributes."""

    Parameters: ClassVar[dict[str, Any]] = {"name": {"type": "string"}}


class Strict(Step):
    Parameters: ClassVar[dict[str, Any]] = {"path": {"type": "string"}}

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path


@step("Custom/Init")
@param("fn", type="string")
@param("n", type="int", default=0)
def init_fn(ctx: Any, data: dict[str, Any]) -> None:
    data["fn"], data["n"] = ctx.fn, ctx.n


def test_build_passes_only_what_was_set() -> None:
    registry = Registry()
    columns = registry.add(Columns)
    built = columns.build({})
    assert built.columns == ["default"], "the Python default, not None"
    assert built.limit == 0, "a declared default is passed (0 kept, not replaced)"
    assert columns.build({"columns": ["a"]}).columns == ["a"]
    assert registry.add(Loose).build({}).name is None, "Step(**params) classes still see None"
    with pytest.raises(TypeError, match="'path' has no value and no default; give it a value"):
        registry.add(Strict).build({})
    node = registry.add(init_fn).build({})
    assert (node.fn, node.n) == (None, 0), "a function node's ctx has it as None, as 0.13's"
