"""Bypassed and muted nodes in a run, and a source re-triggered: what flows, and the cache."""

from __future__ import annotations

from typing import Any

import pytest

from graphbook import Workflow, build_graph, param, run_workflow, source, step
from graphbook.engine.cache import OutputCache
from graphbook.engine.executor import Executor, RunResult
from graphbook.errors import WorkflowError
from graphbook.events import Event, NodePlan, NodeStarted, RunStarted
from graphbook.modes import live_edges
from graphbook.nodes import library_registry
from graphbook.workflow import Edge

CALLS: dict[str, int] = {}


@step("Modes/Count")
@source()
@param("n", "int", default=4)
def count(ctx: Any) -> Any:
    CALLS[ctx.id] = CALLS.get(ctx.id, 0) + 1
    for i in range(ctx.n):
        yield {"x": i}


@step("Modes/Add")
@param("add", "int", default=1)
def add(ctx: Any, data: dict[str, Any]) -> None:
    data["x"] += ctx.add


def chain() -> Workflow:
    """src -> plus100 -> plus1 -> end"""
    wf = Workflow()
    src = wf.add(count, id="src")
    a = wf.add(add, id="plus100", add=100)
    b = wf.add(add, id="plus1", add=1)
    end = wf.add(add, id="end", add=0)
    wf.connect(src, a)
    wf.connect(a, b)
    wf.connect(b, end)
    return wf


def xs(result: RunResult, node: str = "end", output: str = "out") -> list[int]:
    return [d["x"] for d in result.output(node, output)]


def test_a_bypassed_step_passes_its_input_through_unchanged(backend: dict[str, Any]) -> None:
    wf = chain()
    wf.set_mode("plus100", "bypass")
    result = run_workflow(wf, collect=True, **backend)
    assert result.ok
    assert xs(result) == [1, 2, 3, 4]  # only plus1 added anything
    assert "plus100" not in result.counts


def test_a_muted_step_lets_nothing_through(backend: dict[str, Any]) -> None:
    wf = chain()
    wf.set_mode("plus1", "mute")
    result = run_workflow(wf, collect=True, **backend)
    assert result.ok
    assert xs(result, "plus100") == [100, 101, 102, 103]
    assert xs(result) == []
    assert "plus1" not in result.counts


def test_bypassed_and_muted_sources_emit_nothing() -> None:
    for mode in ("bypass", "mute"):
        wf = chain()
        wf.set_mode("src", mode)
        result = run_workflow(wf, collect=True)
        assert result.ok and xs(result) == []


def test_a_chain_of_bypassed_steps_wires_through_all_of_them() -> None:
    wf = chain()
    wf.set_mode("plus100", "bypass")
    wf.set_mode("plus1", "bypass")
    result = run_workflow(wf, collect=True)
    assert xs(result) == [0, 1, 2, 3]


def test_a_bypassed_router_sends_every_dict_down_each_output_once() -> None:
    wf = Workflow()
    src = wf.add(count, id="src")
    split = wf.add("Split", id="split", split_fn="lambda d: d['x'] % 2")
    wf.connect(src, split)
    wf.connect(split["A"], wf.add(add, id="odd", add=0))
    wf.connect(split["B"], wf.add(add, id="even", add=0))
    both = wf.add(add, id="both", add=0)
    wf.connect(split["A"], both)
    wf.connect(split["B"], both)
    wf.set_mode("split", "bypass")
    result = run_workflow(wf, collect=True)
    assert xs(result, "odd") == xs(result, "even") == [0, 1, 2, 3]
    assert sorted(xs(result, "both")) == [0, 1, 2, 3]


def test_a_bypassed_node_is_not_checked_but_the_wires_through_it_are() -> None:
    wf = chain()
    wf.add("NoSuchKind", id="ghost")
    wf.set("plus100", add="not a number")
    wf.set_mode("plus100", "bypass")
    wf.set_mode("ghost", "mute")
    graph = build_graph(wf, library_registry())
    assert set(graph.nodes) == {"src", "plus1", "end"}
    assert graph.off == {"plus100": "bypass", "ghost": "mute"}
    assert [(e.source, e.target) for e in graph.edges] == [
        ("src", "plus1"),
        ("plus1", "end"),
    ]


def test_a_muted_resource_leaves_its_parameter_to_the_default_or_a_problem() -> None:
    wf = Workflow()
    number = wf.add("Number", id="n", val=2)
    wf.connect(wf.add(count, id="src", n=number), wf.add(add, id="end"))
    assert len(run_workflow(wf, collect=True).output("end")) == 2
    wf.set_mode("n", "mute")
    assert len(run_workflow(wf, collect=True).output("end")) == 4  # count's default n
    keep = wf.add("Function", id="keep", val="lambda d: True")
    wf.add("Split", id="split", split_fn=keep)
    wf.set_mode("keep", "bypass")
    with pytest.raises(WorkflowError, match=r"'split': required parameter 'split_fn' has no"):
        build_graph(wf, library_registry())


def test_live_edges_keep_the_reroute_points_of_the_outer_wire() -> None:
    edges = [
        Edge("s", "out", "b", "in", ((1.0, 2.0),)),
        Edge("b", "out", "t", "in", ((3.0, 4.0),)),
    ]
    (through,) = live_edges(edges, {"b": "bypass"})
    assert (through.source, through.target, through.points) == ("s", "t", ((3.0, 4.0),))


def cached_run(
    wf: Workflow, cache: OutputCache, trigger: str | None = None
) -> tuple[RunResult, list[Event]]:
    events: list[Event] = []
    graph = build_graph(wf, library_registry())
    result = Executor(collect=True).run(
        graph, events.append, cache=cache.workflow("w.json"), trigger=trigger
    )
    return result, events


def plan(events: list[Event]) -> dict[str, str]:
    return {e.node_id: e.cause for e in events if isinstance(e, NodePlan)}


def test_bypassing_a_node_reruns_what_is_downstream_and_turning_it_back_on_too() -> None:
    cache, wf = OutputCache(10**8), chain()
    cached_run(wf, cache)
    wf.set_mode("plus100", "bypass")
    result, events = cached_run(wf, cache)
    assert plan(events) == {"src": "unchanged", "plus1": "upstream", "end": "upstream"}
    assert xs(result) == [1, 2, 3, 4]
    wf.set_mode("plus100", "active")
    result, events = cached_run(wf, cache)
    assert plan(events)["plus100"] == "unchanged"  # its own outputs were kept
    assert plan(events)["plus1"] == "upstream"
    assert xs(result) == [101, 102, 103, 104]


def test_a_retriggered_source_runs_again_with_what_it_feeds_and_nothing_else() -> None:
    wf = chain()
    other = wf.add(count, id="other", n=2)
    wf.connect(other, wf.add(add, id="other_end"))
    cache = OutputCache(10**8)
    cached_run(wf, cache)
    before = CALLS["src"]
    result, events = cached_run(wf, cache, trigger="src")
    assert CALLS["src"] == before + 1
    assert plan(events) == {
        "src": "triggered",
        "plus100": "upstream_runs",
        "plus1": "upstream_runs",
        "end": "upstream_runs",
    }
    assert {e.node_id for e in events if isinstance(e, NodeStarted)} == {
        "src",
        "plus100",
        "plus1",
        "end",
    }
    (started,) = (e for e in events if isinstance(e, RunStarted))
    assert (started.mode, started.node) == ("trigger", "src")
    assert xs(result) == [101, 102, 103, 104]


def test_a_retriggered_step_reuses_the_cached_outputs_that_feed_it() -> None:
    cache, wf = OutputCache(10**8), chain()
    cached_run(wf, cache)
    before = CALLS["src"]
    result, events = cached_run(wf, cache, trigger="plus1")
    assert CALLS["src"] == before
    assert plan(events) == {
        "src": "unchanged",
        "plus100": "unchanged",
        "plus1": "triggered",
        "end": "upstream_runs",
    }
    assert xs(result) == [101, 102, 103, 104]


def test_a_resource_cannot_be_retriggered() -> None:
    wf = chain()
    wf.add("Number", id="n", val=1)
    graph = build_graph(wf, library_registry())
    with pytest.raises(ValueError, match="is a resource; re-trigger a source or a step"):
        Executor().run(graph, trigger="n")
