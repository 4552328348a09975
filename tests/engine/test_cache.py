"""Cached outputs between runs: which nodes run again and why, replay, budget, clearing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphbook import Workflow, build_graph, param, source, step
from graphbook.engine.cache import OutputCache, estimate_size, fingerprint
from graphbook.engine.executor import Executor, RunResult
from graphbook.events import Event, NodeFinished, NodeLog, NodePlan, NodeStarted
from graphbook.nodes import library_registry
from graphbook.overrides import with_overrides
from graphbook.steps import Step
from graphbook.workflow import NodeRef

CALLS: dict[str, int] = {}


@step("Cache/Numbers")
@source()
@param("n", "int", default=5)
def numbers(ctx: Any) -> Any:
    CALLS["numbers"] = CALLS.get("numbers", 0) + 1
    for i in range(ctx.n):
        yield {"x": i}


@step("Cache/Add")
@param("add", "int", default=1)
def add(ctx: Any, data: dict[str, Any]) -> None:
    CALLS[ctx.id] = CALLS.get(ctx.id, 0) + 1
    data["x"] += ctx.add


@step("Cache/Filter")
@param("keep", "function", default="lambda d: True")
def keep(ctx: Any, data: dict[str, Any]) -> Any:
    return "out" if ctx.keep(data) else None


def chain(n: int = 5, first: int = 1, second: int = 10) -> Workflow:
    wf = Workflow()
    src = wf.add(numbers, id="src", n=n)
    a = wf.add(add, id="a", add=first)
    b = wf.add(add, id="b", add=second)
    wf.connect(src, a)
    wf.connect(a, b)
    return wf


def run(wf: Workflow, cache: OutputCache, name: str = "w.json") -> tuple[RunResult, list[Event]]:
    events: list[Event] = []
    graph = build_graph(wf, library_registry())
    result = Executor(collect=True).run(graph, events.append, cache=cache.workflow(name))
    return result, events


def plan(events: list[Event]) -> dict[str, tuple[str, str]]:
    return {e.node_id: (e.action, e.cause) for e in events if isinstance(e, NodePlan)}


def started(events: list[Event]) -> set[str]:
    return {e.node_id for e in events if isinstance(e, NodeStarted)}


def test_first_run_runs_everything_and_second_reuses_everything() -> None:
    cache = OutputCache(1 << 20)
    result, events = run(chain(), cache)
    assert result.ok
    assert plan(events) == {"src": ("run", "new"), "a": ("run", "new"), "b": ("run", "new")}
    result, events = run(chain(), cache)
    assert result.ok and not started(events)
    reused = {e.node_id for e in events if isinstance(e, NodeFinished) and e.status == "cached"}
    assert reused == {"src", "a", "b"}
    assert result.counts["b"] == {"out": 5}


def test_a_parameter_change_reruns_the_node_and_downstream_only() -> None:
    cache = OutputCache(1 << 20)
    run(chain(), cache)
    CALLS.clear()
    result, events = run(chain(second=20), cache)
    assert plan(events)["src"] == ("reuse", "unchanged")
    assert plan(events)["a"] == ("reuse", "unchanged")
    assert plan(events)["b"] == ("run", "params")
    assert started(events) == {"b"}
    assert "numbers" not in CALLS and CALLS == {"b": 5}
    assert [d["x"] for d in result.output("b")] == [21, 22, 23, 24, 25]

    result, events = run(chain(first=2, second=20), cache)
    assert plan(events)["a"] == ("run", "params")
    assert plan(events)["b"] == ("run", "upstream")
    assert [d["x"] for d in result.output("b")] == [22, 23, 24, 25, 26]


def test_an_override_is_a_parameter_change_for_the_cache() -> None:
    cache = OutputCache(1 << 20)
    run(chain(), cache)
    CALLS.clear()
    result, events = run(with_overrides(chain(), {"a": {"add": 2}}), cache)
    assert plan(events) == {
        "src": ("reuse", "unchanged"),
        "a": ("run", "params"),
        "b": ("run", "upstream"),
    }
    assert CALLS == {"a": 5, "b": 5}
    assert [d["x"] for d in result.output("b")] == [12, 13, 14, 15, 16]
    _, events = run(chain(first=2), cache)  # the same value saved: the override's outputs
    assert not started(events)
    _, events = run(chain(), cache)  # the file's own values again: a and b run again
    assert plan(events)["a"] == ("run", "params") and started(events) == {"a", "b"}


def test_cached_dicts_are_not_changed_by_downstream_edits() -> None:
    cache = OutputCache(1 << 20)
    run(chain(), cache)
    run(chain(second=5), cache)
    result, _ = run(chain(second=7), cache)
    assert [d["x"] for d in result.output("b")] == [8, 9, 10, 11, 12]


def test_function_parameters_count_by_their_code() -> None:
    assert fingerprint(lambda d: d["x"] > 1) == fingerprint(lambda d: d["x"] > 1)
    assert fingerprint(lambda d: d["x"] > 1) != fingerprint(lambda d: d["x"] > 2)


def test_clearing_a_node_clears_what_is_downstream() -> None:
    cache = OutputCache(1 << 20)
    run(chain(), cache)
    assert cache.workflow("w.json").clear("a") == ["a", "b"]
    _, events = run(chain(), cache)
    assert plan(events) == {
        "src": ("reuse", "unchanged"),
        "a": ("run", "cleared"),
        "b": ("run", "cleared"),
    }


class Forgetful(Step):
    """Counts the hooks a run calls on it."""

    def on_clear(self) -> None:
        CALLS["on_clear"] = CALLS.get("on_clear", 0) + 1

    def on_start(self) -> None:
        CALLS["on_start"] = CALLS.get("on_start", 0) + 1
        CALLS["cleared_before_start"] = CALLS.get("on_clear", 0)


def test_the_first_run_after_a_clear_calls_on_clear_before_on_start() -> None:
    cache = OutputCache(1 << 20)
    wf = Workflow()
    wf.connect(wf.add(numbers, id="src"), wf.add(Forgetful, id="f"))
    CALLS.clear()
    run(wf, cache)
    cache.workflow("w.json").clear("f")
    run(wf, cache)
    run(wf, cache)
    assert CALLS["on_start"] == 2, "the third run reuses the outputs: the node does not start"
    assert CALLS["on_clear"] == 1 and CALLS["cleared_before_start"] == 1


def test_two_workflows_never_share_cached_outputs() -> None:
    cache = OutputCache(1 << 20)
    run(chain(), cache, "one.json")
    _, events = run(chain(), cache, "two.json")
    assert set(plan(events).values()) == {("run", "new")}


def test_the_budget_evicts_least_recently_used_entries() -> None:
    size = estimate_size({"x": 1}) * 50
    cache = OutputCache(size * 2 + 10)
    run(chain(n=50), cache, "one.json")  # three entries of `size` each: src is evicted
    assert cache.used <= cache.budget
    _, events = run(chain(n=50), cache, "one.json")
    assert plan(events)["src"] == ("run", "evicted")
    assert plan(events)["a"] == ("run", "upstream_runs")


def test_outputs_larger_than_the_budget_are_not_cached() -> None:
    cache = OutputCache(100)
    run(chain(n=50), cache)
    _, events = run(chain(n=50), cache)
    assert plan(events)["src"] == ("run", "uncacheable")


def test_a_node_that_failed_runs_again() -> None:
    cache = OutputCache(1 << 20)

    @step("Cache/Fails")
    def fails(ctx: Any, data: dict[str, Any]) -> None:
        raise ValueError("no")

    broken = Workflow()
    broken.connect(broken.add(numbers, id="src"), broken.add(fails, id="f"))
    result, _ = run(broken, cache, "b.json")
    assert not result.ok
    _, events = run(broken, cache, "b.json")
    assert plan(events)["f"] == ("run", "incomplete")
    assert plan(events)["src"] == ("run", "incomplete"), "the failure cut the source short"


def test_after_a_failed_run_the_reason_names_the_parameter_changed_since() -> None:
    cache = OutputCache(1 << 20)

    @step("Cache/FailsUnder")
    @param("limit", "int", default=0)
    def fails_under(ctx: Any, data: dict[str, Any]) -> None:
        if data["x"] >= ctx.limit:
            raise ValueError("over the limit")

    def flow(limit: int) -> Workflow:
        wf = Workflow()
        wf.connect(wf.add(numbers, id="src"), wf.add(fails_under, id="f", limit=limit))
        return wf

    result, _ = run(flow(0), cache, "f.json")
    assert not result.ok
    _, events = run(flow(100), cache, "f.json")
    why = {e.node_id: e for e in events if isinstance(e, NodePlan)}["f"]
    assert (why.action, why.cause) == ("run", "params")
    assert why.reason == "parameters changed: limit; the run before this one did not finish it"


@step("Cache/Chatty")
def chatty(ctx: Any, data: dict[str, Any]) -> None:
    ctx.log(f"saw {data['x']}")


def test_a_reused_node_shows_the_last_lines_it_logged_when_its_outputs_were_made() -> None:
    wf = Workflow()
    wf.connect(wf.add(numbers, id="src", n=300), wf.add(chatty, id="talk"))
    cache = OutputCache(1 << 22)
    run(wf, cache)
    result, events = run(wf, cache)
    assert result.ok and not started(events)
    logged = [e.message for e in events if isinstance(e, NodeLog) and e.node_id == "talk"]
    assert logged[:-1] == [f"saw {i}" for i in range(100, 300)]
    assert logged[-1] == "reused outputs: the lines above were logged by the run that made them"
    skipped = [e.skipped for e in events if isinstance(e, NodeLog) and e.node_id == "talk"]
    assert skipped[0] == 100 and sum(skipped) == 100


def test_a_sink_whose_file_is_gone_writes_it_again(tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    wf = chain(n=3)
    wf.add("WriteCSV", id="csv", path=str(out), overwrite=True)
    wf.connect(NodeRef(wf, "b"), NodeRef(wf, "csv"))
    cache = OutputCache(1 << 20)
    assert run(wf, cache)[0].ok and out.is_file()
    _, events = run(wf, cache)
    assert plan(events)["csv"] == ("reuse", "unchanged")
    out.unlink()
    result, events = run(wf, cache)
    assert result.ok and plan(events)["csv"] == ("run", "output_missing")
    assert plan(events)["b"] == ("reuse", "unchanged"), "only the sink runs: its input is cached"
    assert out.read_text().splitlines() == ["x", "11", "12", "13"]
