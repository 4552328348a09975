"""Resources show in the event stream as nodes that start and finish (or fail), so a view of
the run (the browser, the terminal) can mark them done."""

from __future__ import annotations

import io
import threading
from typing import Any

from rich.console import Console

from graphbook import Workflow, build_graph, param, resource, run_workflow, source, step
from graphbook.cli.terminal import TerminalSink
from graphbook.engine.cache import OutputCache
from graphbook.engine.executor import Executor
from graphbook.events import (
    Event,
    NodeError,
    NodeFinished,
    NodeLog,
    NodeOutput,
    NodeStarted,
    RunFinished,
)
from graphbook.nodes import library_registry


@resource("Res/Scale")
@param("factor", "int", default=3)
def scale(ctx: Any) -> int:
    ctx.log("building the scale")
    return int(ctx.factor)


@resource("Res/Broken")
def broken(ctx: Any) -> int:
    raise OSError("weights not found")


@step("Res/Numbers")
@source()
@param("n", "int", default=4)
def numbers(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"x": i}


@step("Res/Times")
@param("by", "resource")
@param("add", "int", default=0)
def times(ctx: Any, data: dict[str, Any]) -> None:
    data["x"] = data["x"] * ctx.by + ctx.add


def scaled(factor: Any = None, add: int = 0) -> tuple[Workflow, str, str]:
    wf = Workflow()
    res = wf.add(factor or scale, id="res")
    use = wf.add(times, id="use", by=res, add=add)
    wf.connect(wf.add(numbers, id="src"), use)
    return wf, res.id, use.id


def where(events: list[Event], kind: type[Any], node_id: str) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, kind) and e.node_id == node_id)


def test_a_resource_starts_and_finishes_before_the_steps_that_use_it(
    backend: dict[str, Any],
) -> None:
    events: list[Event] = []
    wf, res, use = scaled()
    result = run_workflow(wf, **backend, sink=events.append, collect=True)
    assert result.ok and [d["x"] for d in result.output(use)] == [0, 3, 6, 9]
    finished = [e for e in events if isinstance(e, NodeFinished) and e.node_id == res]
    assert len(finished) == 1
    assert (finished[0].status, finished[0].counts, finished[0].errors) == ("done", {}, 0)
    started_at, log_at = where(events, NodeStarted, res), where(events, NodeLog, res)
    assert started_at < log_at < where(events, NodeFinished, res) < where(events, NodeStarted, use)


def test_a_resource_that_raises_fails_as_a_node(backend: dict[str, Any]) -> None:
    events: list[Event] = []
    wf, res, use = scaled(broken)
    result = run_workflow(wf, **backend, sink=events.append)
    assert result.status == "failed"
    failed = events[where(events, NodeFinished, res)]
    assert isinstance(failed, NodeFinished) and (failed.status, failed.errors) == ("failed", 1)
    error = events[where(events, NodeError, res)]
    assert isinstance(error, NodeError) and "weights not found" in error.error.message
    assert where(events, NodeStarted, res) < where(events, NodeError, res)
    assert where(events, NodeError, res) < where(events, NodeFinished, res)
    assert not any(isinstance(e, NodeStarted) and e.node_id == use for e in events)


def test_with_a_cache_a_resource_no_running_node_needs_shows_as_cached() -> None:
    cache = OutputCache(1 << 20)
    registry = library_registry()

    def run(add: int) -> list[Event]:
        events: list[Event] = []
        graph = build_graph(scaled(add=add)[0], registry)
        Executor().run(graph, events.append, cache=cache.workflow("w.json"))
        return events

    first, again, changed = run(0), run(0), run(1)
    assert any(isinstance(e, NodeFinished) and e.node_id == "res" for e in first)
    reused = [e for e in again if isinstance(e, NodeFinished) and e.node_id == "res"]
    assert [(e.status, e.counts) for e in reused] == [("cached", {})]
    assert not any(isinstance(e, NodeStarted) for e in again)
    done = [e.status for e in changed if isinstance(e, NodeFinished) and e.node_id == "res"]
    assert done == ["done"], "a node that runs again needs the resource built again"


def test_the_terminal_lists_a_built_resource_as_done() -> None:
    out, err = io.StringIO(), io.StringIO()
    sink = TerminalSink(Console(file=out, width=200), Console(file=err, width=200))
    wf, res, _use = scaled()
    run_workflow(wf, sink=sink)
    sink.close()
    assert f"[{res}] Scale: done  -" in out.getvalue().splitlines()
    node = sink.view.node(res)
    assert node is not None and node.state == "done"


SOURCE_RAN = threading.Event()
"""Set by the source once it has handed on its dicts: the slow resource builds until then."""


@resource("Res/WaitsForTheSource")
def waits_for_the_source(ctx: Any) -> int:
    # Built before anything else started, it would wait out the timeout and say so.
    return 2 if SOURCE_RAN.wait(timeout=10) else -1


@step("Res/Announcing")
@source()
def announcing(ctx: Any) -> Any:
    for i in range(3):
        yield {"x": i}
    SOURCE_RAN.set()


def test_sources_run_while_a_resource_builds(backend: dict[str, Any]) -> None:
    SOURCE_RAN.clear()
    events: list[Event] = []
    wf = Workflow()
    use = wf.add(times, id="use", by=wf.add(waits_for_the_source, id="slow"))
    wf.connect(wf.add(announcing, id="src"), use)
    result = run_workflow(wf, **backend, sink=events.append, collect=True)
    assert result.ok and [d["x"] for d in result.output(use.id)] == [0, 2, 4]
    first_output = where(events, NodeOutput, "src")
    assert where(events, NodeStarted, "slow") < first_output < where(events, NodeFinished, "slow")
    assert where(events, NodeFinished, "slow") < where(events, NodeStarted, "use")


def test_a_stop_while_a_resource_builds_ends_it_stopped() -> None:
    from graphbook.engine.control import RunControl

    SOURCE_RAN.clear()
    control = RunControl()
    events: list[Event] = []

    def sink(event: Event) -> None:
        events.append(event)
        if isinstance(event, NodeFinished) and event.node_id == "src":
            control.stop()  # the source is done; the resource still waits for SOURCE_RAN

    wf = Workflow()
    use = wf.add(times, id="use", by=wf.add(waits_for_the_source, id="slow"))
    wf.connect(wf.add(numbers, id="src", n=2), use)
    result = run_workflow(wf, sink=sink, control=control)
    SOURCE_RAN.set()  # let the build left behind end
    assert result.status == "stopped"
    ends = {e.node_id: e.status for e in events if isinstance(e, NodeFinished)}
    assert ends == {"src": "done", "slow": "stopped", "use": "stopped"}
    assert isinstance(events[-1], RunFinished) and events[-1].status == "stopped"
