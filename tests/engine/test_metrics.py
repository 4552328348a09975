"""Metrics nodes report while a run runs: gathered by node and step, from node code and from
load functions in the pool (inline and in 2 worker processes), sent as NodeMetrics events
before the node's end; a run that reports none sends none."""

from __future__ import annotations

from typing import Any

from graphbook import Workflow, batch, log_metric, log_metrics, run_workflow, source, step
from graphbook.events import Event, NodeFinished, NodeMetrics


def load(item: int) -> int:
    log_metric("loaded", item)
    return item


@step("Test/MeteredSource")
@source()
def metered_source(ctx: Any) -> Any:
    for i in range(5):
        ctx.log_metric("made", i)
        yield {"items": [i, i]}


@step("Test/MeteredBatch")
@batch(4, "items", load_fn=load)
def metered_batch(ctx: Any, outputs: list[int], items: list[int], data: list[Any]) -> None:
    log_metrics({"total": sum(outputs)}, step=100 + sum(items))


@step("Test/Quiet")
@source()
def quiet(ctx: Any) -> Any:
    yield {"items": [1]}


def rows_of(events: list[Event], node_id: str) -> dict[int, dict[str, float]]:
    rows: dict[int, dict[str, float]] = {}
    for event in events:
        if isinstance(event, NodeMetrics) and event.node_id == node_id:
            for row in event.rows:
                rows.setdefault(row.step, {}).update(row.values)
    return rows


def test_metrics_from_node_code_and_the_pool_arrive_by_node_and_step(workers: int) -> None:
    wf = Workflow()
    wf.connect(wf.add(metered_source, id="src"), wf.add(metered_batch, id="b"))
    events: list[Event] = []
    result = run_workflow(wf, workers=workers, sink=events.append)
    assert result.ok, result.errors
    assert rows_of(events, "src") == {i: {"made": float(i)} for i in range(5)}
    loaded = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    batch_rows = rows_of(events, "b")
    assert {s: v["loaded"] for s, v in batch_rows.items() if "loaded" in v} == dict(
        enumerate(map(float, loaded))
    )
    assert {s: v["total"] for s, v in batch_rows.items() if "total" in v} == {
        102: 2.0,
        110: 10.0,
        108: 8.0,
    }, "explicit steps: batches of 4 items and the last of 2"
    ends = {e.node_id: i for i, e in enumerate(events) if isinstance(e, NodeFinished)}
    last = {e.node_id: i for i, e in enumerate(events) if isinstance(e, NodeMetrics)}
    assert last["src"] < ends["src"] and last["b"] < ends["b"], "a node's metrics before its end"


def test_a_run_that_reports_no_metrics_sends_none(workers: int) -> None:
    wf = Workflow()
    wf.connect(wf.add(quiet), wf.add(quiet_batch))
    events: list[Event] = []
    assert run_workflow(wf, workers=workers, sink=events.append).ok
    assert not [e for e in events if isinstance(e, NodeMetrics)]


def plain_load(item: int) -> int:
    return item


@step("Test/QuietBatch")
@batch(2, "items", load_fn=plain_load)
def quiet_batch(ctx: Any, outputs: list[int], items: list[int], data: list[Any]) -> None:
    pass


@step("Test/BadMetric")
def bad_metric(ctx: Any, data: dict[str, Any]) -> None:
    log_metric("label", "cat")  # type: ignore[arg-type]


def test_a_metric_that_is_not_a_number_fails_its_node_saying_so() -> None:
    wf = Workflow()
    wf.connect(wf.add(quiet), wf.add(bad_metric, id="bad"))
    result = run_workflow(wf)
    [error] = result.errors
    assert error.node_id == "bad"
    assert "metric 'label' must be a number" in error.error.message


def test_outside_a_run_a_metric_goes_to_python_logging(caplog: Any) -> None:
    caplog.set_level("INFO", logger="graphbook.nodes")
    log_metric("loss", 0.5)
    assert "loss" in caplog.text
