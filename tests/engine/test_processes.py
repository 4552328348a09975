"""The process pool: order, errors as values, dead workers, shared memory, shutdown."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import multiprocess
import numpy as np
import pytest
import torch
from PIL import Image

from graphbook import Workflow, batch, run_workflow, source, step
from graphbook.engine import shm
from graphbook.engine.pool import Done, Failed, Lane, Outcome, Pool
from graphbook.engine.processes import NICE_ENV, WORKER_NICE, ProcessLane, ProcessPool
from graphbook.errors import GraphbookError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX worker processes")


@pytest.fixture
def pool() -> Iterator[ProcessPool]:
    pool = ProcessPool(2)
    yield pool
    pool.close()


def drain(pool: ProcessPool, lane: ProcessLane, count: int, limit: float = 20) -> list[Outcome]:
    return [outcome for _, outcome in drain_with_contexts(pool, lane, count, limit)]


def drain_with_contexts(
    pool: ProcessPool, lane: ProcessLane, count: int, limit: float = 20
) -> list[tuple[Any, Outcome]]:
    taken: list[tuple[Any, Outcome]] = []
    deadline = time.monotonic() + limit
    while len(taken) < count:
        assert time.monotonic() < deadline, f"only {len(taken)} of {count} outcomes came back"
        pool.wait(0.1)
        taken += lane.take_ready()
    return taken


def wait_until(condition: Callable[[], bool], what: str, limit: float = 20) -> None:
    """Poll `condition` until it holds; fail naming `what` after `limit` seconds."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"waited {limit}s for {what}"
        time.sleep(0.01)


def run(pool: ProcessPool, fn: Callable[..., Any], inputs: list[Any]) -> list[Outcome]:
    lane = pool.lane(fn, len(inputs))
    for value in inputs:
        lane.submit(None, (value,))
    return drain(pool, lane, len(inputs))


def values(outcomes: list[Outcome]) -> list[Any]:
    failures = [o.error for o in outcomes if isinstance(o, Failed)]
    assert not failures, failures
    return [o.value for o in outcomes if isinstance(o, Done)]


def segments(prefix: str = shm.NAME_PREFIX) -> set[str]:
    """Segments in /dev/shm; give a pool's prefix to ignore other programs' pools."""
    if not os.path.isdir(shm.SHM_DIR):
        return set()
    return {name for name in os.listdir(shm.SHM_DIR) if name.startswith(prefix)}


def graphbook_children() -> list[Any]:
    return [p for p in multiprocess.active_children() if p.name.startswith("graphbook-")]


# -- functions the workers run ------------------------------------------------------------------
def square_slowly(x: int) -> int:
    time.sleep((x * 7 % 5) / 1000)
    return x * x


def sleep_then_echo(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def explode(x: int) -> int:
    raise ValueError(f"cannot handle {x}")


def die_on_13(x: int) -> int:
    if x == 13:
        os.kill(os.getpid(), signal.SIGKILL)
    return x * x


def pid(_: Any) -> int:
    return os.getpid()


def tensor_and_array(x: int) -> tuple[torch.Tensor, np.ndarray[Any, Any]]:
    return torch.full((3, 64, 64), float(x)), np.arange(10_000, dtype=np.float64) * x


class KillWhenPickled:
    def __reduce__(self) -> Any:
        os.kill(os.getpid(), signal.SIGKILL)


def big_tensor_then_death(_: Any) -> tuple[torch.Tensor, KillWhenPickled]:
    """The tensor reaches a segment, then pickling the rest kills the worker."""
    return torch.ones(100_000), KillWhenPickled()


# -- tests ----------------------------------------------------------------------------------------
def test_outcomes_leave_in_submission_order(pool: ProcessPool) -> None:
    assert values(run(pool, square_slowly, list(range(200)))) == [x * x for x in range(200)]


def test_take_ready_returns_only_the_outcomes_next_in_order(pool: ProcessPool) -> None:
    lane = pool.lane(sleep_then_echo, 4)
    lane.submit("slow", (0.5,))
    lane.submit("quick", (0.0,))
    deadline = time.monotonic() + 5
    while pool.stats().load.running != 1 and time.monotonic() < deadline:
        pool.wait(0.05)
    assert pool.stats().load.running == 1
    assert not lane.has_ready
    assert lane.take_ready() == []
    assert lane.in_flight == 2
    assert values(drain(pool, lane, 2)) == [0.5, 0.0]
    assert lane.in_flight == 0


def test_each_outcome_comes_back_with_its_tasks_context(pool: ProcessPool) -> None:
    lane = pool.lane(sleep_then_echo, 8)
    contexts = [object() for _ in range(8)]
    for n, context in enumerate(contexts):
        lane.submit(context, ((8 - n) / 100,))
    taken = drain_with_contexts(pool, lane, 8)
    assert [context for context, _ in taken] == contexts
    assert values([outcome for _, outcome in taken]) == [(8 - n) / 100 for n in range(8)]


def test_an_outcome_is_heard_while_its_worker_runs_a_long_task() -> None:
    pool = ProcessPool(1)  # one worker: the long task runs right after the quick one
    try:
        lane = pool.lane(sleep_then_echo, 2)
        lane.submit("quick", (0.0,))
        lane.submit("long", (30.0,))
        taken = drain_with_contexts(pool, lane, 1, limit=20)
        assert [context for context, _ in taken] == ["quick"]
        assert pool.stats().load.running == 1 and lane.in_flight == 1
    finally:
        pool.close()


def test_the_pool_and_its_lanes_meet_the_protocols(pool: ProcessPool) -> None:
    as_pool: Pool = pool
    lane: Lane[str] = as_pool.lane(square_slowly, 4)
    assert lane.capacity == 4 and as_pool.workers == 2


def test_a_closed_lane_drops_its_tasks_and_the_pool_goes_on(pool: ProcessPool) -> None:
    lane = pool.lane(sleep_then_echo, 8)
    for _ in range(8):
        lane.submit(None, (0.2,))
    lane.close()
    assert lane.in_flight == 0 and lane.take_ready() == []
    with pytest.raises(RuntimeError, match="closed"):
        lane.submit(None, (0.2,))
    assert pool.stats().load.waiting == 0
    assert values(run(pool, square_slowly, [1, 2, 3])) == [1, 4, 9]


def test_lambdas_and_closures_run_in_workers(pool: ProcessPool) -> None:
    offset = 1000

    def add_offset(x: int) -> int:
        return x + offset

    assert values(run(pool, add_offset, [1, 2, 3])) == [1001, 1002, 1003]
    assert values(run(pool, lambda x: f"<{x}>", ["a", "b"])) == ["<a>", "<b>"]


def test_an_exception_comes_back_with_its_traceback(pool: ProcessPool) -> None:
    [outcome] = run(pool, explode, [7])
    assert isinstance(outcome, Failed)
    assert outcome.error.type == "ValueError"
    assert outcome.error.message == "cannot handle 7"
    assert "in explode" in outcome.error.traceback
    assert 'raise ValueError(f"cannot handle {x}")' in outcome.error.traceback


def test_a_worker_killed_mid_task_fails_that_task_only(pool: ProcessPool) -> None:
    outcomes = run(pool, die_on_13, list(range(40)))
    failed = [i for i, o in enumerate(outcomes) if isinstance(o, Failed)]
    assert failed == [13]
    error = outcomes[13]
    assert isinstance(error, Failed) and error.error.type == "WorkerDied"
    assert "SIGKILL" in error.error.message
    assert [o.value for o in outcomes if isinstance(o, Done)] == [
        x * x for x in range(40) if x != 13
    ]
    assert values(run(pool, square_slowly, list(range(10)))) == [x * x for x in range(10)]
    assert pool.stats().load.workers == 2


def test_an_idle_worker_killed_from_outside_is_replaced(pool: ProcessPool) -> None:
    pids = set(values(run(pool, pid, list(range(8)))))
    os.kill(pids.pop(), signal.SIGKILL)
    assert values(run(pool, square_slowly, list(range(30)))) == [x * x for x in range(30)]


def wait_for_file(path: str) -> str:
    while not os.path.exists(path):
        time.sleep(0.01)
    return path


def test_dump_tasks_do_not_wait_behind_load_tasks(pool: ProcessPool, tmp_path: Path) -> None:
    """Loads that hold every worker until the test lets them go: a dump still runs."""
    go = str(tmp_path / "go")
    loads = pool.lane(wait_for_file, 8)
    for _ in range(4):
        loads.submit(None, (go,))
    dumps = pool.lane(lambda x: x, 1, kind="dump")
    dumps.submit(None, ("saved",))
    assert values(drain(pool, dumps, 1)) == ["saved"]
    assert pool.stats().load.waiting + pool.stats().load.running == 4, "no load has ended"
    Path(go).touch()
    assert values(drain(pool, loads, 4)) == [go] * 4


def test_tensors_and_arrays_come_back_through_shared_memory(pool: ProcessPool) -> None:
    [(tensor, array)] = values(run(pool, tensor_and_array, [3]))
    assert torch.equal(tensor, torch.full((3, 64, 64), 3.0))
    assert np.array_equal(array, np.arange(10_000, dtype=np.float64) * 3)
    if sys.platform.startswith("linux"):
        assert f"{shm.SHM_DIR}/{shm.NAME_PREFIX}" in mapped_file(tensor.data_ptr())
        assert f"{shm.SHM_DIR}/{shm.NAME_PREFIX}" in mapped_file(array.ctypes.data)
    tensor += 1  # a view on writable memory, like any tensor
    assert float(tensor[0, 0, 0]) == 4.0


def test_a_tensor_is_sent_as_a_small_handle() -> None:
    tensor = torch.randn(3, 224, 224)
    packed = shm.dumps({"image": tensor, "label": 1}, "graphbook_test_")
    assert len(packed.data) < 512 and len(packed.segments) == 1
    assert torch.equal(shm.loads(packed.data)["image"], tensor)
    assert not {n for n in segments() if n.startswith("graphbook_test_")}


def full_of(x: float) -> torch.Tensor:
    return torch.full((3, 64, 64), x)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_worker_writes_its_next_result_into_a_segment_let_go_of() -> None:
    pool = ProcessPool(1)
    lane = pool.lane(full_of, 1)

    def one(x: float) -> torch.Tensor:
        lane.submit(None, (x,))
        [tensor] = values(drain(pool, lane, 1))
        return tensor  # type: ignore[no-any-return]

    try:
        first = one(1.0)
        held = mapped_file(first.data_ptr())
        kept = one(2.0)
        assert mapped_file(kept.data_ptr()) != held, "a segment still in use was written again"
        assert float(first.max()) == float(first.min()) == 1.0
        del first  # the last tensor on its segment: the worker may write it again
        again = one(3.0)
        assert mapped_file(again.data_ptr()) == held
        assert float(again.min()) == float(again.max()) == 3.0
        assert float(kept.min()) == float(kept.max()) == 2.0
    finally:
        pool.close()


def test_segments_let_go_of_are_unlinked_once_the_lane_closes() -> None:
    pool = ProcessPool(1)
    mine = pool._scheduler.prefix
    try:
        lane = pool.lane(full_of, 4)
        for x in range(4):
            lane.submit(None, (float(x),))
        tensors = [outcome.value for outcome in drain(pool, lane, 4)]  # type: ignore[union-attr]
        assert len(segments(mine)) == 4
        held = tensors.pop()
        del tensors
        lane.close()

        def only_the_held_one_left() -> bool:
            pool.wait(0)
            return len(segments(mine)) == 1

        wait_until(only_the_held_one_left, "the spare segments to be unlinked")
        assert float(held.mean()) == 3.0
    finally:
        pool.close()
    assert segments(mine) == set()


def niceness(_: Any) -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="POSIX priorities")
def test_workers_run_at_a_lower_priority_than_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    for given, expected in ((None, min(19, ours + WORKER_NICE)), ("0", ours), ("3", ours + 3)):
        if given is None:
            monkeypatch.delenv(NICE_ENV, raising=False)
        else:
            monkeypatch.setenv(NICE_ENV, given)
        pool = ProcessPool(1)
        try:
            assert values(run(pool, niceness, [0])) == [expected]
        finally:
            pool.close()
    monkeypatch.setenv(NICE_ENV, "high")
    with pytest.raises(GraphbookError, match=f"{NICE_ENV} .* whole number from 0 .* got 'high'"):
        ProcessPool(1)


def test_images_strings_and_nested_structures_come_back(pool: ProcessPool) -> None:
    def nested(x: int) -> dict[str, Any]:
        image = Image.new("RGB", (8, 8), (x, 0, 0))
        return {"image": image, "text": "é" * x, "deep": [{"a": (np.arange(5000) + x, None)}]}

    [result] = values(run(pool, nested, [9]))
    assert result["image"].getpixel((0, 0)) == (9, 0, 0)
    assert result["text"] == "é" * 9
    assert np.array_equal(result["deep"][0]["a"][0], np.arange(5000) + 9)


def test_what_cannot_be_pickled_fails_as_a_value(pool: ProcessPool) -> None:
    generator = (i for i in range(3))
    [result] = run(pool, lambda n: (i for i in range(n)), [1])
    assert isinstance(result, Failed)
    assert "the task's result could not be pickled" in result.error.message
    [fn] = run(pool, lambda _: generator, [1])
    assert isinstance(fn, Failed) and "could not be pickled" in fn.error.message
    [args] = run(pool, str, [generator])
    assert isinstance(args, Failed)
    assert "the task's arguments could not be pickled" in args.error.message


def test_no_segment_outlives_close_or_a_crash() -> None:
    pool = ProcessPool(2)
    mine = pool._scheduler.prefix
    [outcome] = run(pool, big_tensor_then_death, [0])
    assert isinstance(outcome, Failed) and outcome.error.type == "WorkerDied"
    assert segments(mine) == set()
    lane = pool.lane(tensor_and_array, 8)
    for x in range(6):
        lane.submit(None, (x,))
    pool.wait(0)  # hands them to the workers
    wait_until(lambda: bool(segments(mine)), "the unread results in this pool's segments")
    pool.close()
    assert segments(mine) == set()
    assert graphbook_children() == []


def test_close_ends_a_worker_stuck_in_a_task() -> None:
    pool = ProcessPool(2)
    lane = pool.lane(sleep_then_echo, 2)
    lane.submit(None, (1000,))
    pool.wait(0)
    stats = pool.stats
    wait_until(lambda: stats().load.running == 1 and stats().load.workers == 2, "the task to start")
    start = time.monotonic()
    pool.close()
    assert time.monotonic() - start < 5
    assert graphbook_children() == []
    pool.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        pool.lane(square_slowly, 1)


# -- end to end ---------------------------------------------------------------------------------
def load_image(item: int) -> torch.Tensor:
    return torch.full((3, 64, 64), float(item)) + torch.arange(64.0)


@step("Tests/Numbers")
@source()
def numbers(ctx: Any) -> Iterator[dict[str, Any]]:
    for i in range(30):
        yield {"id": i, "items": [i, i + 100]}


@step("Tests/Totals")
@batch(4, "items", load_fn=load_image)
def totals(ctx: Any, outputs: list[Any], items: list[Any], data: list[dict[str, Any]]) -> None:
    for tensor, item, dict_ in zip(outputs, items, data, strict=True):
        dict_.setdefault("totals", []).append((item, float(tensor.sum())))
        dict_.setdefault("tensors", []).append(tensor)


def test_a_batch_workflow_gives_the_same_results_with_and_without_workers() -> None:
    workflow = Workflow()
    source_ref = workflow.add(numbers)
    totals_ref = workflow.add(totals, batch_size=4, item_key="items")
    workflow.connect(source_ref, totals_ref)
    inline = run_workflow(workflow, workers=0, collect=True)
    pooled = run_workflow(workflow, workers=2, collect=True)
    assert inline.ok and pooled.ok
    expected, got = inline.output(totals_ref.id), pooled.output(totals_ref.id)
    assert [d["id"] for d in got] == [d["id"] for d in expected] == list(range(30))
    assert [d["totals"] for d in got] == [d["totals"] for d in expected]
    for a, b in zip(got, expected, strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a["tensors"], b["tensors"], strict=True))
    assert graphbook_children() == []


MARKS: list[Path] = []
AHEAD: list[int] = []
"""Per batch of `slow_model`: items loaded by the workers and not yet handed to the model."""


@step("Tests/Paths")
@source()
def marker_paths(ctx: Any) -> Iterator[dict[str, Any]]:
    for i in range(120):
        yield {"path": str(MARKS[0] / f"{i}.loaded")}


def mark_loaded(path: str) -> str:
    Path(path).touch()
    return path


@step("Tests/SlowModel")
@batch(4, "path", load_fn=mark_loaded)
def slow_model(ctx: Any, outputs: list[Any], items: list[Any], data: list[dict[str, Any]]) -> None:
    batched = 4 * (len(AHEAD) + 1)
    AHEAD.append(len(list(MARKS[0].glob("*.loaded"))) - batched)
    time.sleep(0.02)


def test_workers_decode_at_most_the_lanes_capacity_ahead_of_the_model(tmp_path: Path) -> None:
    """Items loading and loaded but not yet batched are bounded (a batch's part for each worker
    and two batches more), so fast workers run no further ahead of a slow model than that:
    memory in flight is a few batches whatever the dataset."""
    MARKS[:], AHEAD[:] = [tmp_path], []
    workflow = Workflow()
    workflow.connect(workflow.add(marker_paths), workflow.add(slow_model, batch_size=4))
    assert run_workflow(workflow, workers=2).ok
    assert len(AHEAD) == 30
    capacity = 4 * (2 + 2)  # batch_size x (workers + 2)
    assert max(AHEAD) <= capacity, f"items loaded ahead of the model, per batch: {AHEAD}"


def mapped_file(address: int) -> str:
    """The file behind the memory mapping that holds `address` (Linux)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                return " ".join(fields[5:])
    return ""
