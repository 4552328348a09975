"""The pieces on their own: sharding, reducers across a change of world size, fingerprints,
the context's device helpers and the profiler."""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image

from graphbook.batch_process import (
    BatchError,
    BatchProfiler,
    MetricReducer,
    runner,
    torch_batch_process,
)
from graphbook.batch_process.context import RunInfo, TorchBatchProcessorContext
from graphbook.batch_process.dataset import describe
from graphbook.batch_process.reducers import RankReducerState, ReducerSet, ReducerState
from graphbook.batch_process.sharding import Shard, batch_count, map_batches, steps_left
from graphbook.durable import distributed
from graphbook.durable.devices import loader_kwargs_for
from graphbook.durable.distributed import SingleProcess
from graphbook.durable.folders import RunFolders

from .jobs import Numbers, NumberStream, Recorder, SumReducer, ordered


@pytest.mark.parametrize("size", [1, 2, 3, 4])
@pytest.mark.parametrize("start", [0, 1, 5])
def test_every_batch_goes_to_exactly_one_rank(size: int, start: int) -> None:
    for total in range(start, 14):
        shards = [Shard(start, total, r, size, 2, False).global_batches() for r in range(size)]
        assert sorted(b for batches in shards for b in batches) == list(range(start, total))
        assert max(len(batches) for batches in shards) == steps_left(start, total, size)


def test_batch_count() -> None:
    assert [batch_count(n, 4, False) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]
    assert [batch_count(n, 4, True) for n in (0, 1, 4, 5)] == [0, 0, 1, 1]


def wrapped(start: RankReducerState) -> tuple[ReducerSet, Any, Any]:
    reducers = ReducerSet(start, lambda: 0)
    sums = reducers.wrap(SumReducer(), None, "inference")
    order = reducers.wrap(ordered, "order", "inference")
    return reducers, sums, order


def feed(sums: Any, order: Any, batches: list[list[int]]) -> None:
    for batch in batches:
        sums.update(torch.tensor(batch))
        order.position = lambda b=batch[0]: b  # the batch's global index, as the run sets it
        order.update(batch)


def test_reducer_state_survives_a_change_of_world_size() -> None:
    # Two ranks did batches [0], [1], [2] (rank 0: 0 and 2, rank 1: 1), then checkpointed.
    ranks = []
    for mine in ([[0], [2]], [[1]]):
        reducers, sums, order = wrapped(RankReducerState())
        feed(sums, order, mine)
        ranks.append(reducers.states())
    state = ReducerState(2, ranks)
    # One rank resumes: the two old states are archived, the new rank starts empty.
    assert state.for_rank(0, 1).own == {}
    reducers, sums, order = wrapped(state.for_rank(0, 1))
    feed(sums, order, [[3]])
    result = reducers.reduce([reducers.per_slot()])
    assert result == {"inference": {"sum": 6, "count": 4, "order": [0, 1, 2, 3]}}
    # And it survives the next checkpoint as well.
    again = reducers.snapshot([reducers.states()])
    resumed, _, _ = wrapped(again.for_rank(0, 1))
    assert resumed.reduce([resumed.per_slot()]) == result


def test_same_world_size_restores_each_rank() -> None:
    state = ReducerState(2, [{"order": {"values": [(0, 0, [0])]}}, {"order": {"values": []}}])
    assert state.for_rank(1, 2).own == {"order": {"values": []}}
    assert state.for_rank(0, 2).pending == {}


class NotADict(MetricReducer):
    def reset(self) -> None:
        pass

    def per_slot_reduce(self) -> int:
        return 1

    def cross_slot_reduce(self, per_slot_metrics: list[Any]) -> int:
        return sum(per_slot_metrics)


def test_reducer_rules_are_explained() -> None:
    reducers = ReducerSet(RankReducerState(), lambda: 0)
    reducers.wrap(NotADict(), None, "inference")
    with pytest.raises(BatchError, match="must return a dict of metrics"):
        reducers.reduce([reducers.per_slot()])
    reducers.wrap(NotADict(), "n", "g")
    with pytest.raises(BatchError, match="wrapped already"):
        reducers.wrap(NotADict(), "n", "g")
    with pytest.raises(TypeError, match="a MetricReducer or a function"):
        reducers.wrap(3, "x", "g")


def test_fingerprints_follow_the_data() -> None:
    assert describe(Numbers(5)) == describe(Numbers(5))
    assert describe(Numbers(5)).fingerprint != describe(Numbers(6)).fingerprint
    stream = describe(NumberStream(5))
    assert (stream.kind, stream.length) == ("iterable", None)
    colours = ["red", "green", "blue"]
    images = [(Image.new("RGB", (4, 4), c), torch.ones(2, dtype=torch.bfloat16)) for c in colours]
    colours[-1] = "white"
    other = [(Image.new("RGB", (4, 4), c), torch.ones(2, dtype=torch.bfloat16)) for c in colours]
    assert describe(images).fingerprint != describe(other).fingerprint


def context(tmp_path: Path) -> TorchBatchProcessorContext:
    run = RunInfo("run", "attempt", RunFolders(tmp_path), {"lr": 0.1})
    return TorchBatchProcessorContext(SingleProcess(), run)


def test_context_helpers(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    Pair = namedtuple("Pair", "a b")
    data: dict[str, Any] = {"x": [np.ones(2), Pair(torch.zeros(1), "name")], "n": 3}
    moved = ctx.to_device(data)
    assert isinstance(moved["x"][0], torch.Tensor) and moved["x"][0].device == ctx.device
    assert isinstance(moved["x"][1], Pair) and moved["x"][1].b == "name" and moved["n"] == 3
    model = torch.nn.Dropout()
    assert ctx.prepare_model_for_inference(model) is model and not model.training
    assert ctx.get_hparams() == {"lr": 0.1}
    assert (ctx.get_distributed_rank(), ctx.get_distributed_size()) == (0, 1)
    assert ctx.get_tensorboard_path().is_dir()
    with ctx.upload_path() as path:
        assert path == tmp_path / "staging" / "attempt" / "rank_0"
    with pytest.raises(ValueError, match="non-empty string"):
        ctx.report_metrics("", 0, {})
    ctx.report_metrics("g", 1, {"t": torch.tensor(0.5), "a": np.arange(2)})
    assert ctx.metrics.take() == [("g", 1, {"t": 0.5, "a": [0, 1]})]


def test_profiler_times_blocks_and_counts_steps() -> None:
    profiler = BatchProfiler()
    assert profiler.summary() is None
    for _ in range(3):
        with profiler as p:
            p.step()
    summary = profiler.summary()
    assert summary is not None and (summary["blocks"], summary["steps"]) == (3, 3)


def test_set_profiler_drives_torch_profiler(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    ctx.set_profiler(activities=[torch.profiler.ProfilerActivity.CPU])
    for _ in range(2):
        with ctx.profiler as p:
            torch.ones(4).sum()
            p.step()
    ctx.profiler.close()
    assert list(ctx.get_tensorboard_path().glob("*.json")), "a trace was written"


def test_graphbook_batch_is_the_decorator_and_its_old_module_path_still_imports() -> None:
    """`from graphbook import batch` is seed 004's decorator, also after a script imported the
    batch API by its old path (`from graphbook.batch import torch_batch_process`, which still
    gives graphbook.batch_process's names)."""
    import importlib

    import graphbook
    from graphbook import Registry, batch, decorators, step
    from graphbook.batch_process import torch_batch_process as api_function

    old_path = importlib.import_module("graphbook.batch")
    assert old_path.torch_batch_process is api_function
    assert "torch_batch_process" in old_path.__all__
    assert graphbook.batch is batch is decorators.batch

    @step("Decorated")
    @batch(4, "items")
    def decorated(
        ctx: object, outputs: list[object], items: list[object], data: list[object]
    ) -> None:
        pass

    @step("Spelled")
    @graphbook.batch(2, "paths")
    def spelled(
        ctx: object, outputs: list[object], items: list[object], data: list[object]
    ) -> None:
        pass

    for node, size in ((decorated, 4), (spelled, 2)):
        spec = Registry().add(node)
        assert spec.kind == "batch" and [p.name for p in spec.params] == ["batch_size", "item_key"]
        assert spec.params[0].default == size


def test_batches_bound_for_a_gpu_are_read_into_pinned_memory() -> None:
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")
    assert loader_kwargs_for(cuda, {"num_workers": 2}) == {"num_workers": 2, "pin_memory": True}
    assert loader_kwargs_for(cuda, {"pin_memory": False}) == {"pin_memory": False}  # asked
    assert loader_kwargs_for(cpu, {"num_workers": 2}) == {"num_workers": 2}
    given = {"num_workers": 1}
    loader_kwargs_for(cuda, given)
    assert given == {"num_workers": 1}  # the caller's dict is left alone


def test_torch_batch_process_pins_memory_on_a_gpu(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No GPU here: the process believes it has one, and the DataLoader's arguments are seen
    on their way (torch only warns that it cannot pin without one)."""
    seen: list[dict[str, Any]] = []

    def spy(dataset: Any, shard: Shard, length: int, kwargs: dict[str, Any]) -> Any:
        seen.append(kwargs)
        return map_batches(
            dataset, shard, length, {k: v for k, v in kwargs.items() if k != "pin_memory"}
        )

    monkeypatch.setattr(runner, "map_batches", spy)
    monkeypatch.setattr(distributed, "default_device", lambda rank: torch.device("cuda", rank))
    torch_batch_process(Recorder, Numbers(6), batch_size=2, run_name="gpu")
    torch_batch_process(
        Recorder,
        Numbers(6),
        batch_size=2,
        run_name="asked",
        dataloader_kwargs={"pin_memory": False},
    )
    monkeypatch.setattr(distributed, "default_device", lambda rank: torch.device("cpu"))
    torch_batch_process(Recorder, Numbers(6), batch_size=2, run_name="cpu")
    assert [k.get("pin_memory") for k in seen] == [True, False, None]
