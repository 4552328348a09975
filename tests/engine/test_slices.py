"""A CPU model resource runs on slices of each batch at once, same results; by default, with an
opt-out (`cpu_slices=1`, GRAPHBOOK_CPU_SLICES=1), and never where slices would change results."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import namedtuple
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from graphbook import Workflow, batch, param, resource, run_workflow, source, step
from graphbook.engine import slices
from graphbook.engine.devices import SLICES_ENV
from graphbook.engine.slices import MARK, MIN_SLICE, TRIALS, join, slice_on_cores
from graphbook.resources import Resource

Pair = namedtuple("Pair", "logits features")


class Recorder(torch.nn.Module):
    """A small model that notes the batch sizes and threads its forward ran with."""

    def __init__(self, shape: str = "tensor") -> None:
        super().__init__()
        # its own generator: the model is built beside the run's source, which draws too
        seeded = torch.Generator().manual_seed(0)
        self.linear = torch.nn.Linear(4, 3)
        with torch.no_grad():
            self.linear.weight.copy_(torch.randn(3, 4, generator=seeded))
            self.linear.bias.copy_(torch.randn(3, generator=seeded))
        self.shape = shape
        self.calls: list[tuple[int, str]] = []
        self.eval()  # as every model resource is (graphbook/engine/devices.py)

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> Any:
        self.calls.append((x.shape[0], threading.current_thread().name))
        y = self.linear(x) * scale
        if self.shape == "pair":
            return Pair(y, x)
        if self.shape == "dict":
            return {"logits": y, "rows": [y[:, 0], y[:, 1]]}
        if self.shape == "loss":
            return y.sum()
        return y


@pytest.fixture(autouse=True)
def _keep_torch_threads() -> Iterator[None]:
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("shape", ["tensor", "pair", "dict"])
def test_slices_give_the_whole_batch_result(shape: str) -> None:
    x = torch.randn(13, 4)
    expected = Recorder(shape)(x, scale=2.0)
    model = slice_on_cores(Recorder(shape), 3)
    got = model(x, scale=2.0)
    assert sorted(size for size, _ in model.calls) == [4, 4, 5]
    assert all(name.startswith("graphbook-slice") for _, name in model.calls)
    assert isinstance(model, Recorder) and model.linear.out_features == 3
    assert torch.get_num_threads() == 1
    if shape == "tensor":
        assert torch.allclose(got, expected)
    elif shape == "pair":
        assert isinstance(got, Pair)
        assert torch.allclose(got.logits, expected.logits) and torch.equal(got.features, x)
    else:
        assert torch.allclose(got["logits"], expected["logits"])
        assert all(torch.allclose(a, b) for a, b in zip(got["rows"], expected["rows"], strict=True))


def test_an_output_that_cannot_be_joined_falls_back_to_whole_batches() -> None:
    x = torch.randn(8, 4)
    model = slice_on_cores(Recorder("loss"), 2)
    assert torch.allclose(model(x), Recorder("loss")(x))
    model.calls.clear()
    model(x)
    assert [size for size, _ in model.calls] == [8]  # no slicing any more


def test_slices_keep_at_least_min_slice_items() -> None:
    model = slice_on_cores(Recorder(), 4)
    model(torch.randn(MIN_SLICE * 2 + 1, 4))  # room for two slices, not four
    model(torch.randn(MIN_SLICE + 1, 4))  # too small to cut
    assert [size for size, _ in model.calls][-1] == MIN_SLICE + 1
    assert sorted(size for size, _ in model.calls[:2]) == [MIN_SLICE, MIN_SLICE + 1]


def test_grad_and_inference_modes_follow_the_caller_into_the_threads() -> None:
    model = slice_on_cores(Recorder(), 2)
    x = torch.randn(6, 4)
    assert model(x).requires_grad
    with torch.no_grad():
        assert not model(x).requires_grad
    with torch.inference_mode():
        assert model(x).is_inference()


def test_torch_threads_go_to_one_only_once_a_batch_is_cut() -> None:
    torch.set_num_threads(2)
    model = slice_on_cores(Recorder(), 2)
    model(torch.randn(MIN_SLICE, 4))  # too small to cut: torch's threads do the work
    assert torch.get_num_threads() == 2
    model(torch.randn(MIN_SLICE * 2, 4))
    assert torch.get_num_threads() == 1


class Timed(Recorder):
    """A model whose forward takes `fixed` seconds plus `per_item` per item; with `one_core`,
    one forward at a time (slices then only add their fixed costs)."""

    def __init__(self, fixed: float, per_item: float, one_core: bool) -> None:
        super().__init__()
        self.fixed, self.per_item = fixed, per_item
        self.core = threading.Lock() if one_core else None

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> Any:
        with self.core or contextlib.nullcontext():
            time.sleep(self.fixed + self.per_item * x.shape[0])
        return super().forward(x, scale)


@pytest.mark.parametrize(
    ("fixed", "per_item", "one_core", "best"),
    [(0.0, 0.002, False, 3), (0.01, 0.0, True, 2)],
    ids=["more-slices-faster", "fewer-slices-faster"],
)
def test_the_default_times_one_slice_per_core_and_one_more_and_keeps_the_faster(
    monkeypatch: pytest.MonkeyPatch, fixed: float, per_item: float, one_core: bool, best: int
) -> None:
    monkeypatch.setattr(slices, "cores", lambda: 2)
    model = slice_on_cores(Timed(fixed, per_item, one_core), 0)
    tried = 2 * (1 + TRIALS)  # a warm-up round, then TRIALS timed batches each
    for _ in range(tried + 2):
        model(torch.randn(12, 4))
    assert model.__dict__[MARK].parts == best
    after = [size for size, _ in model.calls][-2 * best :]
    assert after == [12 // best] * (2 * best), "the kept number of slices runs the next batches"


def test_a_number_of_slices_asked_for_is_not_tuned() -> None:
    model = slice_on_cores(Recorder(), 2)
    for _ in range(8):
        model(torch.randn(12, 4))
    assert sorted(size for size, _ in model.calls) == [6] * 16


def test_a_model_in_training_mode_runs_whole_batches() -> None:
    model = slice_on_cores(Recorder(), 2)
    model.train()
    model(torch.randn(8, 4))
    model.eval()
    model(torch.randn(8, 4))
    assert [size for size, _ in model.calls] == [8, 4, 4]


def test_a_model_with_a_forward_hook_runs_whole_batches() -> None:
    seen: list[int] = []
    model = slice_on_cores(Recorder(), 2)
    handle = model.linear.register_forward_hook(lambda m, i, o: seen.append(o.shape[0]))
    model(torch.randn(8, 4))
    handle.remove()
    model(torch.randn(8, 4))
    assert seen == [8]  # the hook saw the whole batch, as it would without slices
    assert [size for size, _ in model.calls] == [8, 4, 4]


def test_join_refuses_what_it_cannot_put_together() -> None:
    with pytest.raises(TypeError, match="str"):
        join(["a", "b"])


# -- through a workflow -----------------------------------------------------------------------
@step("Slices/Rows")
@source()
def rows(ctx: Any) -> Any:
    seeded = torch.Generator().manual_seed(1)
    for _ in range(3):
        yield {"x": list(torch.randn(8, 4, generator=seeded))}


@resource("Slices/Model")
@param("cpu_slices", "int", default=1)
@param("device", "string", default="cpu")
def recorder_model(ctx: Any) -> torch.nn.Module:
    return Recorder()


@step("Slices/Apply")
@batch(16, "x")
@param("model", "resource", required=True)
def apply(ctx: Any, xs: list[torch.Tensor], items: list[Any], data: list[Any]) -> None:
    with torch.no_grad():
        ys = ctx.model(torch.stack(xs))
    for d in data:
        d["y"] = []
    for d, y in zip(data, ys, strict=True):  # one entry per item, items in order
        d["y"].append(y)
    for d in data:
        d["sizes"] = [size for size, _ in ctx.model.calls]


class PlainModel(Resource):
    """A model resource as a person writes one: nothing about slices or devices."""

    def value(self) -> torch.nn.Module:
        return Recorder()


def run_plain(monkeypatch: pytest.MonkeyPatch, env: str | None) -> list[int]:
    if env is None:
        monkeypatch.delenv(SLICES_ENV, raising=False)
    else:
        monkeypatch.setenv(SLICES_ENV, env)
    wf = Workflow()
    node = wf.add(apply, model=wf.add(PlainModel))
    wf.connect(wf.add(rows), node)
    result = run_workflow(wf, collect=True)
    assert result.ok, result.errors
    sizes: list[int] = result.output(node.id)[-1]["sizes"]
    return sizes


def test_a_plain_model_resource_runs_on_slices_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = run_plain(monkeypatch, None)
    if slices.cores() > 1:  # one slice per core (or one more), at least MIN_SLICE items each
        assert len(sizes) > 2 and sum(sizes) == 24
    else:
        assert sizes == [16, 8]


def test_graphbook_cpu_slices_1_runs_plain_models_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_plain(monkeypatch, "1") == [16, 8]
    assert sorted(run_plain(monkeypatch, "2")) == [4, 4, 8, 8]


def test_a_bad_graphbook_cpu_slices_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SLICES_ENV, "many")
    wf = Workflow()
    node = wf.add(apply, model=wf.add(PlainModel))
    wf.connect(wf.add(rows), node)
    result = run_workflow(wf)
    assert not result.ok
    assert any(SLICES_ENV in str(e) and "'many'" in str(e) for e in result.errors)


def run_apply(slices: int) -> tuple[list[torch.Tensor], list[int]]:
    wf = Workflow()
    model = wf.add(recorder_model, cpu_slices=slices)
    apply_node = wf.add(apply, model=model)
    wf.connect(wf.add(rows), apply_node)
    result = run_workflow(wf, collect=True)
    assert result.ok, result.errors
    out = result.output(apply_node.id)
    return [y for d in out for y in d["y"]], out[-1]["sizes"]


@pytest.mark.parametrize(("slices", "sizes"), [(2, [4, 4, 8, 8]), (3, [4, 4, 5, 5, 6])])
def test_a_model_resource_with_cpu_slices_gives_the_same_outputs(
    slices: int, sizes: list[int]
) -> None:
    whole, whole_sizes = run_apply(1)
    sliced, sliced_sizes = run_apply(slices)
    assert whole_sizes == [16, 8]  # batches of 16 items, then the last 8
    assert sorted(sliced_sizes) == sizes
    assert len(whole) == len(sliced) == 24
    # float32 sums taken in another order (other batch sizes, other kernels) differ in the
    # last bits; an item out of place or lost would differ by the whole value
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(whole, sliced, strict=True))
