"""Runs of workflows with components: the same outputs as the flat workflow (inline, on worker
processes, on Ray), and inner nodes cached and run up to as nodes of their own."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from graphbook import Workflow, build_graph, output, param, run_workflow, source, step
from graphbook.components import Library, component
from graphbook.engine.cache import OutputCache
from graphbook.engine.executor import Executor, RunResult
from graphbook.errors import RunTargetError
from graphbook.events import Event, NodePlan, NodeStarted
from graphbook.nodes import library_registry
from graphbook.workflow import ComponentBody, ComponentRef

CALLS: dict[str, int] = {}


@step("CompRun/Numbers")
@source()
@param("n", "int", default=6)
def numbers(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"x": i}


@step("CompRun/Add")
@param("add", "int", default=1)
def add(ctx: Any, data: dict[str, Any]) -> None:
    CALLS[ctx.id] = CALLS.get(ctx.id, 0) + 1
    data["x"] += ctx.add


@step("CompRun/Odd")
@output("odd", "even")
def odd(ctx: Any, data: dict[str, Any]) -> str:
    return "odd" if data["x"] % 2 else "even"


def inside(wf: Workflow, prefix: str = "") -> tuple[Any, Any, Any]:
    """plus (add) -> split (odd/even) -> scale (add): the part made into a component."""
    plus = wf.add(add, id=f"{prefix}plus", add=10)
    split = wf.add(odd, id=f"{prefix}split")
    scale = wf.add(add, id=f"{prefix}scale", add=1000)
    wf.connect(plus, split)
    wf.connect(split["odd"], scale)
    return plus, split, scale


def flat_workflow(plus: int = 10) -> Workflow:
    wf = Workflow()
    src = wf.add(numbers, id="src")
    first, split, scale = inside(wf)
    wf.set("plus", add=plus)
    odds, evens = wf.add(add, id="odds", add=0), wf.add(add, id="evens", add=0)
    wf.connect(src, first)
    wf.connect(scale, odds)
    wf.connect(split["even"], evens)
    return wf


def body() -> ComponentBody:
    inner = Workflow()
    plus, split, scale = inside(inner)
    return component(
        inner,
        inputs={"in": plus},
        outputs={"odd": scale, "even": split["even"]},
        params={"plus": (plus, "add")},
    )


def with_component(part: ComponentBody | ComponentRef, plus: int = 10) -> Workflow:
    wf = Workflow()
    src = wf.add(numbers, id="src")
    comp = wf.add(part, id="comp", plus=plus)
    odds, evens = wf.add(add, id="odds", add=0), wf.add(add, id="evens", add=0)
    wf.connect(src, comp)
    wf.connect(comp["odd"], odds)
    wf.connect(comp["even"], evens)
    return wf


def xs(result: RunResult, node: str) -> list[int]:
    return sorted(d["x"] for d in result.output(node))


def test_a_component_runs_as_its_flat_workflow_does(backend: dict[str, Any]) -> None:
    flat = run_workflow(flat_workflow(plus=3), collect=True, **backend)
    packed = run_workflow(with_component(body(), plus=3), collect=True, **backend)
    assert flat.ok and packed.ok
    assert xs(packed, "odds") == xs(flat, "odds") == [1003, 1005, 1007]
    assert xs(packed, "evens") == xs(flat, "evens") == [4, 6, 8]
    assert packed.counts["comp/split"] == {"odd": 3, "even": 3}


def test_a_library_component_runs_from_its_file(tmp_path: Any) -> None:
    library = Library(tmp_path / "components")
    wf = with_component(library.save("odd_even", body()))
    wf.library = library.folder
    wf.code.update(body().code)  # the kinds the library's nodes name, defined in this module
    result = run_workflow(wf, collect=True, workers=2)
    assert result.ok
    assert xs(result, "odds") == [1011, 1013, 1015]


def run(wf: Workflow, cache: OutputCache, until: str | None = None) -> list[Event]:
    events: list[Event] = []
    graph = build_graph(wf, library_registry())
    Executor().run(graph, events.append, cache=cache.workflow("w.json"), until=until)
    return events


def test_inner_nodes_are_cached_and_run_again_by_their_own_changes() -> None:
    cache = OutputCache(1 << 20)
    run(with_component(body()), cache)
    CALLS.clear()
    changed = with_component(body())
    changed.set("odds", add=1)
    events = run(changed, cache)
    plans = {e.node_id: e.action for e in events if isinstance(e, NodePlan)}
    assert plans["comp/plus"] == plans["comp/scale"] == "reuse"
    assert plans["odds"] == "run"
    assert "comp/plus" not in CALLS
    events = run(with_component(body(), plus=11), cache)  # the exposed value changed
    plans = {e.node_id: e.action for e in events if isinstance(e, NodePlan)}
    assert plans["comp/plus"] == "run" and plans["src"] == "reuse"


def test_a_run_up_to_an_inner_node_runs_only_what_it_needs() -> None:
    events = run(with_component(body()), OutputCache(1 << 20), until="comp/split")
    ran = {e.node_id for e in events if isinstance(e, NodeStarted)}
    assert ran == {"src", "comp/plus", "comp/split"}


def test_a_run_up_to_a_component_runs_the_nodes_inside_and_what_they_need() -> None:
    events = run(with_component(body()), OutputCache(1 << 20), until="comp")
    ran = {e.node_id for e in events if isinstance(e, NodeStarted)}
    assert ran == {"src", "comp/plus", "comp/split", "comp/scale"}


def test_clearing_a_component_clears_the_nodes_inside_and_downstream() -> None:
    cache = OutputCache(1 << 20)
    run(with_component(body()), cache)
    cleared = cache.workflow("w.json").clear("comp")
    assert cleared == ["comp/plus", "comp/scale", "comp/split", "evens", "odds"]


def test_a_bypassed_component_is_refused_as_a_target_by_its_mode() -> None:
    wf = with_component(body())
    wf.nodes["comp"] = replace(wf.nodes["comp"], mode="bypass")
    with pytest.raises(RunTargetError, match="'comp' is bypassed"):
        run(wf, OutputCache(1 << 20), until="comp")
