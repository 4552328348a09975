"""Pause, resume, step and stop a running graph from another thread; prompts that wait."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import Any

import pytest

from graphbook import Workflow, batch, build_graph, param, source, step
from graphbook.engine.control import RunControl, interrupt
from graphbook.engine.executor import Executor, RunResult, make_pool
from graphbook.events import (
    Event,
    NodeFinished,
    NodeProgress,
    Prompt,
    PromptAnswered,
    RunFinished,
    RunPaused,
    RunResumed,
)
from graphbook.nodes import library_registry
from graphbook.steps import PromptStep

TIMEOUT = 20


@step("Control/Numbers")
@source()
@param("n", "int", default=10)
def numbers(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"x": i}


@step("Control/Pass")
def passing(ctx: Any, data: dict[str, Any]) -> None:
    data["seen"] = True


class Ask(PromptStep):
    def get_prompt(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "bool", "msg": f"keep {data['x']}?", "def": True, "options": {}}

    def on_prompt_response(self, data: dict[str, Any], response: Any) -> None:
        data["kept"] = response

    def route(self, data: dict[str, Any]) -> str | None:
        return "out" if data["kept"] else None


class Recorder:
    """A sink that lets the test wait for an event."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.cond = threading.Condition()

    def __call__(self, event: Event) -> None:
        with self.cond:
            self.events.append(event)
            self.cond.notify_all()

    def wait(self, kind: type[Any], count: int = 1) -> Any:
        deadline = time.monotonic() + TIMEOUT
        with self.cond:
            while len(self.of(kind)) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"no {kind.__name__} #{count} in {TIMEOUT}s"
                self.cond.wait(left)
            return self.of(kind)[count - 1]

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def start(
    wf: Workflow, control: RunControl, sink: Recorder, **kw: Any
) -> tuple[threading.Thread, list[RunResult]]:
    registry = library_registry()
    registry.add(Ask)
    graph = build_graph(wf, registry)
    results: list[RunResult] = []
    executor = Executor(collect=True, **kw)
    thread = threading.Thread(
        target=lambda: results.append(executor.run(graph, sink, control=control))
    )
    thread.start()
    return thread, results


def chain(n: int = 10) -> Workflow:
    wf = Workflow()
    wf.connect(wf.add(numbers, id="src", n=n), wf.add(passing, id="a"))
    return wf


def test_step_pauses_after_each_unit_of_the_node() -> None:
    control, sink = RunControl(), Recorder()
    control.step("a")
    thread, results = start(chain(), control, sink)
    paused = sink.wait(RunPaused)
    assert (paused.reason, paused.node_id) == ("step", "a")
    control.step("a")
    sink.wait(RunResumed)
    sink.wait(RunPaused, 2)
    control.resume()
    thread.join(TIMEOUT)
    assert results[0].ok and len(results[0].output("a")) == 10


def test_pause_then_stop_ends_a_run() -> None:
    control, sink = RunControl(), Recorder()
    control.pause()
    thread, results = start(chain(), control, sink)
    assert sink.wait(RunPaused).reason == "pause"
    control.stop()
    thread.join(TIMEOUT)
    assert results[0].status == "stopped"


def test_a_prompt_parks_its_dict_while_the_rest_runs() -> None:
    control, sink = RunControl(), Recorder()
    answers: list[Future[Any]] = []

    def prompter(node_id: str, question: dict[str, Any], data: dict[str, Any]) -> Future[Any]:
        answers.append(Future())
        return answers[-1]

    wf = Workflow()
    src = wf.add(numbers, id="src", n=3)
    wf.connect(src, wf.add(Ask, id="ask"))
    wf.connect(src, wf.add(passing, id="other"))
    thread, results = start(wf, control, sink, prompter=prompter)
    asked = sink.wait(Prompt)
    assert asked.prompt["msg"] == "keep 0?" and asked.data == {"x": 0}
    for count, answer in enumerate([True, False, True], start=1):
        sink.wait(Prompt, count)
        answers[count - 1].set_result(answer)
        sink.wait(PromptAnswered, count)
    thread.join(TIMEOUT)
    result = results[0]
    assert result.ok
    assert [d["x"] for d in result.output("ask")] == [0, 2]
    assert len(result.output("other")) == 3


def test_a_stuck_node_is_interrupted() -> None:
    entered = threading.Event()

    @step("Control/Stuck")
    def stuck(ctx: Any, data: dict[str, Any]) -> None:
        entered.set()
        while True:
            time.sleep(0.01)

    wf = Workflow()
    wf.connect(wf.add(numbers, id="src"), wf.add(stuck, id="stuck"))
    control, sink = RunControl(), Recorder()
    thread, results = start(wf, control, sink)
    assert entered.wait(TIMEOUT)
    control.stop()
    thread.join(0.3)
    assert thread.is_alive(), "node code that never returns ignores stop"
    assert interrupt(thread)
    thread.join(TIMEOUT)
    assert results[0].status == "stopped"


BATCHES: list[list[int]] = []


def times_ten(item: int) -> int:
    return item * 10


@step("Control/Batcher")
@batch(4, "items", load_fn=times_ten)
def batcher(ctx: Any, outputs: list[int], items: list[int], data: list[dict[str, Any]]) -> None:
    BATCHES.append(list(items))


@step("Control/Dicts")
@source()
def three_items_each(ctx: Any) -> Any:
    for i in range(10):
        yield {"id": i, "items": [i * 100 + k for k in range(3)]}


@pytest.mark.parametrize("workers", [0, 2], ids=["inline", "processes"])
def test_a_step_runs_one_batch_or_one_dict_of_the_node_furthest_downstream_with_work(
    workers: int,
) -> None:
    """A step of no node in particular: first one value from the source; then one batch of
    the batch step (its source feeding it as much as that batch needs); then one dict
    through the step after it; then the next batch. Nothing else runs meanwhile."""
    BATCHES.clear()
    wf = Workflow()
    batches = wf.add(batcher, id="b")
    wf.connect(wf.add(three_items_each, id="src"), batches)
    wf.connect(batches, wf.add(passing, id="c"))
    control, sink = RunControl(), Recorder()
    control.step()
    pool = make_pool(workers)
    try:
        thread, results = start(wf, control, sink, pool=pool)
        seen = []
        for count in range(1, 5):
            paused = sink.wait(RunPaused, count)
            counts = {e.node_id: sum(e.counts.values()) for e in sink.of(NodeProgress)}
            seen.append((paused.node_id, len(BATCHES), counts.get("c", 0)))
            control.step()
        control.resume()
        thread.join(TIMEOUT)
    finally:
        pool.close()
    assert seen == [("src", 0, 0), ("b", 1, 0), ("c", 1, 1), ("b", 2, 1)]
    assert BATCHES[0] == [0, 1, 2, 100], "one batch: the first four items, in order"
    assert results[0].ok and len(results[0].output("c")) == 10


def test_a_step_of_a_node_that_has_ended_pauses_the_run_there() -> None:
    wf = chain(n=1)
    wf.connect(wf.add(numbers, id="src2", n=5), wf.add(passing, id="other"))
    control, sink = RunControl(), Recorder()
    control.step("a")
    thread, results = start(wf, control, sink)
    assert sink.wait(RunPaused).node_id == "a"
    control.step("a")  # its one dict is done: the step ends as it has nothing more to do
    assert sink.wait(RunPaused, 2).node_id == "a"
    assert not [e for e in sink.of(NodeProgress) if e.node_id == "other" and e.received]
    control.resume()
    thread.join(TIMEOUT)
    assert results[0].ok and len(results[0].output("other")) == 5


def test_the_run_clock_leaves_out_the_time_paused() -> None:
    control, sink = RunControl(), Recorder()
    control.pause()
    began = time.perf_counter()
    thread, results = start(chain(), control, sink)
    paused = sink.wait(RunPaused)
    held = threading.Event()
    held.wait(0.3)  # hold the pause a while: the run's clock must not count it
    control.resume()
    resumed = sink.wait(RunResumed)
    thread.join(TIMEOUT)
    wall = time.perf_counter() - began
    finished = sink.wait(RunFinished)
    assert paused.paused == 0.0 and paused.at > 0
    assert 0.3 <= resumed.paused == finished.paused
    assert finished.seconds <= wall - finished.paused
    assert results[0].seconds == finished.seconds
    for node in sink.of(NodeFinished):  # each node's time leaves the pause out too
        assert node.seconds <= wall - finished.paused, node
