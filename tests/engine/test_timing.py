"""Where a run's time goes: a batch step's compute against its wait for input, and the trace
`--trace` writes (issue 35, item 4)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphbook import Workflow, batch, run_workflow, source, step
from graphbook.events import Event, NodeFinished, NodeProgress


@step("Tests/Count")
@source()
def count(ctx: Any) -> Iterator[dict[str, Any]]:
    for i in range(24):
        yield {"i": i}


def slow_load(i: int) -> int:
    time.sleep(0.02)  # the node's own work: a slow decoder
    return i


def fast_load(i: int) -> int:
    return i


def write(values: list[int]) -> None:
    """A dump function: nothing to write."""


@step("Tests/SlowLoads")
@batch(4, "i", load_fn=slow_load)
def slow_loads(ctx: Any, outputs: list[int], items: list[int], data: list[Any]) -> None:
    for value, d in zip(outputs, data, strict=True):
        d["v"] = value


@step("Tests/SlowModel")
@batch(4, "i", load_fn=fast_load, dump_fn=write)
def slow_model(ctx: Any, outputs: list[int], items: list[int], data: list[Any]) -> list[Any]:
    time.sleep(0.05)  # the node's own work: a slow model
    return [(list(outputs),)]


def finished(step_fn: Any, **options: Any) -> tuple[dict[str, NodeFinished], list[Event]]:
    events: list[Event] = []
    flow = Workflow()
    flow.connect(flow.add(count, id="source"), flow.add(step_fn, id="batch"))
    result = run_workflow(flow, workers=2, sink=events.append, **options)
    assert result.ok, result.errors
    ends = {e.node_id: e for e in events if isinstance(e, NodeFinished)}
    return ends, events


def share_waited(end: NodeFinished) -> float:
    assert end.timing is not None
    return end.timing.waited / (end.timing.waited + end.timing.compute)


def test_a_step_fed_by_slow_loads_waited_for_input_most_of_its_time() -> None:
    ends, events = finished(slow_loads)
    timing = ends["batch"].timing
    assert timing is not None and timing.batches == 6
    assert share_waited(ends["batch"]) > 0.5
    assert ends["source"].timing is None, "only batch steps are timed"
    assert timing.device == "" and timing.device_busy is None, "no GPU here"
    progress = [e for e in events if isinstance(e, NodeProgress) and e.node_id == "batch"]
    assert any(e.timing is not None for e in progress), "progress carries the figures live"


def test_a_slow_model_computed_most_of_its_time() -> None:
    ends, _ = finished(slow_model)
    timing = ends["batch"].timing
    assert timing is not None and timing.batches == 6 and timing.compute >= 6 * 0.05
    assert share_waited(ends["batch"]) < 0.5


def test_the_trace_shows_nodes_batches_waits_and_each_workers_loads_and_dumps(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "run.trace.json"
    finished(slow_model, trace=trace)
    events = json.loads(trace.read_text())["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    by_category: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_category.setdefault(span["cat"], []).append(span)
    assert len(by_category["batch"]) == 6
    assert all(s["dur"] >= 40_000 for s in by_category["batch"]), "microseconds, 50 ms each"
    assert {s["name"] for s in by_category["node"]} >= {"source", "batch"}
    assert by_category["load"] and by_category["dump"]
    worker_pids = {s["pid"] for s in by_category["load"] + by_category["dump"]}
    assert os.getpid() not in worker_pids, "loads and dumps are timed in their workers"
    names = {e["args"]["name"] for e in events if e["ph"] == "M"}
    assert "run" in names and any(n.startswith("load worker") for n in names)
    assert min(s["ts"] for s in spans) >= 0


def test_a_failed_run_still_writes_its_trace(tmp_path: Path) -> None:
    @step("Tests/Fails")
    @batch(4, "i", load_fn=fast_load)
    def fails(ctx: Any, outputs: list[int], items: list[int], data: list[Any]) -> None:
        raise RuntimeError("broken model")

    trace = tmp_path / "failed.json"
    flow = Workflow()
    flow.connect(flow.add(count), flow.add(fails))
    assert not run_workflow(flow, workers=2, trace=trace).ok
    assert any(e.get("cat") == "batch" for e in json.loads(trace.read_text())["traceEvents"])


def test_without_workers_loads_are_timed_in_the_run_itself(tmp_path: Path) -> None:
    trace = tmp_path / "inline.json"
    flow = Workflow()
    flow.connect(flow.add(count), flow.add(slow_loads))
    assert run_workflow(flow, workers=0, trace=trace).ok
    loads = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "load"]
    assert loads and {e["pid"] for e in loads} == {os.getpid()}
