"""The executor end to end: streaming, backpressure, fan-out/in, batches, resources, errors."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import torch

from graphbook import Workflow, batch, output, param, resource, run_workflow, source, step
from graphbook.engine.executor import RunControl
from graphbook.engine.runners import CHUNK, CHUNK_SECONDS, INBOX_CAPACITY
from graphbook.events import (
    Event,
    NodeError,
    NodeFinished,
    NodeLog,
    NodeOutput,
    NodeProgress,
    NodeStarted,
    RunFinished,
    RunStarted,
)
from graphbook.steps import Step


@step("Test/Count")
@source()
@param("n", "int", default=10)
def count(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"i": i}


@step("Test/Keep")
def keep(ctx: Any, data: dict[str, Any]) -> None:
    data.setdefault("seen_by", []).append(ctx.id)


class Counter:
    produced = 0


SOURCE = Counter()


@step("Test/Produce")
@source()
def produce(ctx: Any) -> Any:
    SOURCE.produced = 0
    for i in range(5000):
        SOURCE.produced += 1
        yield {"i": i}


def test_a_slow_node_holds_its_source_back(backend: dict[str, Any]) -> None:
    gaps: list[int] = []

    @step("Test/Slow")
    def slow(ctx: Any, data: dict[str, Any]) -> None:
        gaps.append(SOURCE.produced - data["i"])

    wf = Workflow()
    wf.connect(wf.add(produce), wf.add(slow))
    assert run_workflow(wf, **backend).ok
    assert len(gaps) == 5000
    assert max(gaps) <= INBOX_CAPACITY + CHUNK, "the source ran ahead of its consumer"


def test_items_flow_while_the_source_still_produces(backend: dict[str, Any]) -> None:
    seen: list[int] = []

    @step("Test/See")
    def see(ctx: Any, data: dict[str, Any]) -> None:
        seen.append(SOURCE.produced)

    wf = Workflow()
    wf.connect(wf.add(produce), wf.add(see))
    assert run_workflow(wf, **backend).ok
    assert seen[0] <= CHUNK, "the first dict arrived only after the source ran far ahead"
    assert seen[-1] == 5000


def test_a_slow_source_and_a_slow_step_hand_on_each_dict_at_once() -> None:
    """A dict that took longer than a turn is handed on (and previewed) at the end of that
    turn, not after a handful more slow dicts."""
    order: list[str] = []

    @step("Test/SlowSource")
    @source()
    def slow_source(ctx: Any) -> Any:
        for i in range(3):
            threading.Event().wait(CHUNK_SECONDS * 1.5)
            order.append(f"made {i}")
            yield {"i": i}

    @step("Test/SlowStep")
    def slow_step(ctx: Any, data: dict[str, Any]) -> None:
        threading.Event().wait(CHUNK_SECONDS * 1.5)
        order.append(f"slow {data['i']}")

    @step("Test/Last")
    def last(ctx: Any, data: dict[str, Any]) -> None:
        order.append(f"last {data['i']}")

    wf = Workflow()
    middle = wf.add(slow_step)
    wf.connect(wf.add(slow_source), middle)
    wf.connect(middle, wf.add(last))
    events: list[Event] = []
    assert run_workflow(wf, sink=events.append).ok
    assert order.index("last 0") < order.index("made 2"), order
    previews = [e for e in events if isinstance(e, NodeOutput)]
    assert len(previews) >= 3  # the source's first dict, the slow step's, the last node's


def test_fan_out_gives_each_branch_its_own_copy(backend: dict[str, Any]) -> None:
    @step("Test/Tag")
    @param("tag", "string")
    def tag(ctx: Any, data: dict[str, Any]) -> None:
        data["tags"].append(ctx.tag)

    @step("Test/Lists")
    @source()
    def lists(ctx: Any) -> Any:
        for i in range(3):
            yield {"i": i, "tags": []}

    wf = Workflow()
    src = wf.add(lists)
    a, b = wf.add(tag, tag="a"), wf.add(tag, tag="b")
    wf.connect(src, a)
    wf.connect(src, b)
    result = run_workflow(wf, **backend, collect=True)
    assert [d["tags"] for d in result.output(a.id)] == [["a"]] * 3
    assert [d["tags"] for d in result.output(b.id)] == [["b"]] * 3


def test_fan_in_receives_everything(backend: dict[str, Any]) -> None:
    wf = Workflow()
    join = wf.add(keep)
    wf.connect(wf.add(count, n=30), join)
    wf.connect(wf.add(count, n=20), join)
    result = run_workflow(wf, **backend, collect=True)
    assert result.counts[join.id] == {"out": 50}


def test_routing_to_named_outputs(backend: dict[str, Any]) -> None:
    @step("Test/Parity")
    @output("even", "odd")
    def parity(ctx: Any, data: dict[str, Any]) -> str:
        return "even" if data["i"] % 2 == 0 else "odd"

    wf = Workflow()
    p = wf.add(parity)
    wf.connect(wf.add(count, n=9), p)
    result = run_workflow(wf, **backend, collect=True)
    assert result.counts[p.id] == {"even": 5, "odd": 4}
    assert [d["i"] for d in result.output(p.id, "odd")] == [1, 3, 5, 7]


# -- batch steps ---------------------------------------------------------------------------


def times_ten(item: int) -> int:
    return item * 10


BATCHES: list[list[int]] = []
DUMPED: list[tuple[int, int]] = []


def record_dump(value: int, index: int) -> None:
    DUMPED.append((value, index))


@step("Test/Batcher")
@batch(4, "items", load_fn=times_ten)
def batcher(ctx: Any, outputs: list[int], items: list[int], data: list[dict[str, Any]]) -> None:
    BATCHES.append(list(items))
    for out, item, d in zip(outputs, items, data, strict=True):
        assert out == item * 10
        d.setdefault("loaded", []).append(out)


@step("Test/Dicts")
@source()
@param("n", "int", default=5)
@param("per", "int", default=3)
def dicts(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"id": i, "items": [i * 100 + k for k in range(ctx.per)]}


@step("Test/Complete")
def complete(ctx: Any, data: dict[str, Any]) -> None:
    assert len(data["loaded"]) == len(data["items"]), "a dict moved on before its items were done"


def test_batches_gather_items_across_dicts(backend: dict[str, Any]) -> None:
    BATCHES.clear()
    wf = Workflow()
    b = wf.add(batcher)
    c = wf.add(complete)
    wf.connect(wf.add(dicts, n=5, per=3), b)
    wf.connect(b, c)
    result = run_workflow(wf, **backend, collect=True)
    assert result.ok, result.errors
    assert [len(x) for x in BATCHES] == [4, 4, 4, 3], "15 items in batches of 4, last flushed"
    assert [i for x in BATCHES for i in x] == [i * 100 + k for i in range(5) for k in range(3)]
    assert [d["id"] for d in result.output(c.id)] == [0, 1, 2, 3, 4]
    assert result.output(b.id)[0]["loaded"] == [0, 10, 20]


def test_last_partial_batch_is_flushed_without_load_fn(backend: dict[str, Any]) -> None:
    seen: list[list[Any]] = []

    @step("Test/Plain")
    @batch(4, "items")
    def plain(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
        assert outputs == items
        seen.append(items)

    wf = Workflow()
    p = wf.add(plain, batch_size=4)
    wf.connect(wf.add(dicts, n=2, per=3), p)
    result = run_workflow(wf, **backend)
    assert result.counts[p.id] == {"out": 2}
    assert [len(x) for x in seen] == [4, 2]


def test_item_key_may_hold_one_value(backend: dict[str, Any]) -> None:
    got: list[Any] = []

    @step("Test/One")
    @batch(3, "value", load_fn=times_ten)
    def one(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
        got.extend(outputs)

    @step("Test/Values")
    @source()
    def values(ctx: Any) -> Any:
        yield [{"value": 1}, {"value": 2}]

    wf = Workflow()
    wf.connect(wf.add(values), wf.add(one))
    assert run_workflow(wf, **backend).ok
    assert got == [10, 20]


def test_dump_fn_runs_and_dicts_wait_for_their_dumps(
    backend: dict[str, Any], tmp_path: Any
) -> None:
    def write(path: str, text: str) -> None:
        with open(path, "w") as handle:
            handle.write(text)

    @step("Test/Dumper")
    @batch(2, "items", dump_fn=write)
    def dumper(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> Any:
        return [(str(tmp_path / f"{item}.txt"), f"item {item}") for item in items]

    @step("Test/Check")
    def check(ctx: Any, data: dict[str, Any]) -> None:
        for item in data["items"]:
            assert (tmp_path / f"{item}.txt").read_text() == f"item {item}"

    wf = Workflow()
    d = wf.add(dumper)
    c = wf.add(check)
    wf.connect(wf.add(dicts, n=3, per=3), d)
    wf.connect(d, c)
    result = run_workflow(wf, **backend)
    assert result.ok, result.errors
    assert result.counts[c.id] == {"out": 3}
    assert len(list(tmp_path.glob("*.txt"))) == 9


# -- resources -----------------------------------------------------------------------------

BUILT: list[str] = []


@resource("Test/TinyModel")
@param("device", "string", default="cpu")
def tiny_model(ctx: Any) -> torch.nn.Module:
    BUILT.append(ctx.device)
    return torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5))


@step("Test/UseModel")
@param("model", "resource")
def use_model(ctx: Any, data: dict[str, Any]) -> None:
    data["training"] = ctx.model.training
    data["device"] = str(next(ctx.model.parameters()).device)
    data["model_id"] = id(ctx.model)


def test_resources_are_built_once_and_models_are_in_eval_mode_on_their_device() -> None:
    BUILT.clear()
    wf = Workflow()
    model = wf.add(tiny_model, device="cpu")
    a, b = wf.add(use_model, model=model), wf.add(use_model, model=model)
    src = wf.add(count, n=5)
    wf.connect(src, a)
    wf.connect(src, b)
    result = run_workflow(wf, collect=True)
    assert BUILT == ["cpu"]
    outs = result.output(a.id) + result.output(b.id)
    assert {d["training"] for d in outs} == {False}
    assert {d["device"] for d in outs} == {"cpu"}
    assert len({d["model_id"] for d in outs}) == 1


def test_builtin_resources_feed_parameters() -> None:
    wf = Workflow()
    fn = wf.add("Function", val="lambda d: d['i'] < 3")
    split = wf.add("Split", split_fn=fn)
    wf.connect(wf.add(count, n=5), split)
    result = run_workflow(wf)
    assert result.counts[split.id] == {"A": 3, "B": 2}


# -- events and errors ---------------------------------------------------------------------


@step("Test/Chatty")
def chatty(ctx: Any, data: dict[str, Any]) -> None:
    if data["i"] == 0:
        ctx.log("hello from chatty")


def test_the_event_stream_describes_the_run() -> None:
    events: list[Event] = []
    wf = Workflow()
    c = wf.add(chatty)
    wf.connect(wf.add(count, n=4), c)
    run_workflow(wf, sink=events.append)
    kinds = [e.type for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert isinstance(events[0], RunStarted) and [n.node_id for n in events[0].nodes] == ["1", "0"]
    assert {e.node_id for e in events if isinstance(e, NodeStarted)} == {"0", "1"}
    logs = [e for e in events if isinstance(e, NodeLog)]
    assert [(e.node_id, e.message) for e in logs] == [(c.id, "hello from chatty")]
    outputs = [e for e in events if isinstance(e, NodeOutput) and e.node_id == c.id]
    assert outputs[0].preview == {"i": 0}
    last_progress = [e for e in events if isinstance(e, NodeProgress) and e.node_id == c.id][-1]
    assert last_progress.counts == {"out": 4} and last_progress.received == 4
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.status == "completed"
    assert finished.counts == {"1": {"out": 4}, "0": {"out": 4}}


ENDED: list[str] = []


class Fragile(Step):
    """Raises on dicts whose i is 2."""

    def on_data(self, data: dict[str, Any]) -> None:
        if data["i"] == 2:
            raise ValueError("two is not allowed")

    def on_end(self) -> None:
        ENDED.append(self.id)


def test_a_failing_node_stops_the_run_cleanly(backend: dict[str, Any]) -> None:
    ENDED.clear()
    events: list[Event] = []
    wf = Workflow()
    f = wf.add(Fragile)
    src = wf.add(count, n=1000)
    wf.connect(src, f)
    result = run_workflow(wf, **backend, collect=True, sink=events.append)
    assert result.status == "failed"
    finished = {e.node_id: e.status for e in events if isinstance(e, NodeFinished)}
    assert finished == {f.id: "failed", src.id: "stopped"}, "only the node that raised failed"
    assert len(result.errors) == 1
    error = result.errors[0]
    assert error.node_id == f.id
    assert error.error.type == "ValueError" and "two is not allowed" in error.error.message
    assert "in on_data" in error.error.traceback
    assert error.item == {"i": 2}
    assert [f.id] == ENDED, "on_end must run even when the run fails"
    assert len(result.output(f.id)) < 1000


def test_continue_on_error_lets_the_other_dicts_through(backend: dict[str, Any]) -> None:
    wf = Workflow()
    f = wf.add(Fragile)
    wf.connect(wf.add(count, n=100), f)
    result = run_workflow(wf, **backend, continue_on_error=True)
    assert result.status == "completed" and not result.ok
    assert result.counts[f.id] == {"out": 99}
    assert len(result.errors) == 1


def broken_load(item: int) -> int:
    if item == 101:
        raise RuntimeError(f"cannot load {item}")
    return item


def test_a_load_fn_error_comes_back_with_its_traceback_and_item(backend: dict[str, Any]) -> None:
    @step("Test/LoadsBadly")
    @batch(2, "items", load_fn=broken_load)
    def loads_badly(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
        pass

    wf = Workflow()
    node = wf.add(loads_badly)
    wf.connect(wf.add(dicts, n=3, per=3), node)
    result = run_workflow(wf, **backend, continue_on_error=True)
    assert [e.item for e in result.errors] == [101]
    assert "broken_load" in result.errors[0].error.traceback
    assert result.counts[node.id] == {"out": 2}, "the dict whose item failed is not passed on"


def test_a_resource_that_fails_fails_the_run_and_what_uses_it_never_starts() -> None:
    """Sources may have started while it built (resources build beside the run)."""

    @resource("Test/BadResource")
    def bad(ctx: Any) -> Any:
        raise OSError("weights not found")

    events: list[Event] = []
    wf = Workflow()
    r = wf.add(bad)
    u = wf.add(use_model, model=r)
    wf.connect(wf.add(count, n=3), u)
    result = run_workflow(wf, sink=events.append)
    assert result.status == "failed"
    assert [e.node_id for e in events if isinstance(e, NodeError)] == [r.id]
    started = [e.node_id for e in events if isinstance(e, NodeStarted)]
    assert r.id in started and u.id not in started, "the step it is built into never started"
    assert isinstance(events[-1], RunFinished) and events[-1].status == "failed"


def test_until_runs_only_what_the_node_needs(backend: dict[str, Any]) -> None:
    BATCHES.clear()
    wf = Workflow()
    src = wf.add(dicts, n=3, per=2)
    a, b = wf.add(batcher), wf.add(keep)
    wf.connect(src, a)
    wf.connect(src, b)
    result = run_workflow(wf, until=a.id, **backend)
    assert set(result.counts) == {src.id, a.id}
    assert [i for x in BATCHES for i in x] == [0, 1, 100, 101, 200, 201]


def test_stop_ends_a_never_ending_run() -> None:
    control = RunControl()

    @step("Test/Forever")
    @source()
    def forever(ctx: Any) -> Any:
        i = 0
        while True:
            i += 1
            yield {"i": i}

    @step("Test/Stopper")
    def stopper(ctx: Any, data: dict[str, Any]) -> None:
        if data["i"] == 1000:
            threading.Thread(target=control.stop).start()

    wf = Workflow()
    wf.connect(wf.add(forever), wf.add(stopper))
    result = run_workflow(wf, control=control)
    assert result.status == "stopped"


@pytest.mark.parametrize("value", [0, False, ""])
def test_falsy_parameter_values_are_kept(value: Any) -> None:
    @step("Test/Falsy")
    @param("v", "string" if value == "" else ("boolean" if value is False else "int"), default=7)
    def falsy(ctx: Any, data: dict[str, Any]) -> None:
        data["v"] = ctx.v

    wf = Workflow()
    f = wf.add(falsy, v=value)
    wf.connect(wf.add(count, n=1), f)
    result = run_workflow(wf, collect=True)
    assert result.output(f.id)[0]["v"] == value
    assert type(result.output(f.id)[0]["v"]) is type(value)


def test_the_last_dict_each_node_handed_on_is_previewed_as_it_ends() -> None:
    """Previews are spaced (one a second per output), so a fast node's last dicts used to be
    left out: a page paged only up to the last preview (#12 of 20)."""
    events: list[Event] = []
    wf = Workflow()
    kept = wf.add(keep)
    wf.connect(wf.add(count, n=20), kept)
    assert run_workflow(wf, sink=events.append).ok
    for node_id in ("0", "1"):
        previews = [e for e in events if isinstance(e, NodeOutput) and e.node_id == node_id]
        shown = previews[-1].preview
        assert previews[-1].index == 19 and isinstance(shown, dict) and shown["i"] == 19, previews
        assert [e.index for e in previews] == sorted({e.index for e in previews}), "no repeats"
        finished = next(e for e in events if isinstance(e, NodeFinished) and e.node_id == node_id)
        assert events.index(previews[-1]) < events.index(finished), "the preview before the end"
