"""A model replicated on several devices, each batch dealt between the replicas (CPU devices
stand in for GPUs here; only the GPU count is faked)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from graphbook import Workflow, batch, param, resource, run_workflow, source, step
from graphbook.engine.devices import prepare
from graphbook.engine.replicas import devices_of, replicate
from graphbook.errors import GraphbookError

CALLS: list[tuple[int, int]] = []
"""(id of the replica, rows it was given) for every forward call."""


class Doubler(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)
        self.dropout = torch.nn.Dropout(0.9)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        CALLS.append((id(self), len(x)))
        return {"y": self.dropout(self.linear(x)) * 2, "rows": x[:, :1]}


def test_each_batch_is_dealt_between_the_replicas_and_joined_in_order() -> None:
    torch.manual_seed(0)
    model, reference = Doubler(), None
    x = torch.randn(10, 3)
    with torch.no_grad():
        reference = model.eval()(x)
    CALLS.clear()
    replicated = prepare(model, {"devices": "cpu, cpu"})
    assert replicated is model and not model.training
    with torch.no_grad():
        out = model(x)
    assert torch.equal(out["rows"], x[:, :1]), "rows come back in their order"
    assert torch.allclose(out["y"], reference["y"])
    assert sorted(rows for _, rows in CALLS) == [5, 5]
    assert len({replica for replica, _ in CALLS}) == 2, "two replicas, one slice each"


def test_one_row_and_non_tensor_calls_go_to_the_first_replica() -> None:
    model = replicate(Doubler().eval(), ["cpu", "cpu"])
    CALLS.clear()
    with torch.no_grad():
        model(torch.randn(1, 3))
    assert [(id(model), 1)] == CALLS


def test_all_means_every_visible_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    assert devices_of("all") == ["cuda:0", "cuda:1", "cuda:2"]
    assert devices_of("cuda:0,cuda:2") == ["cuda:0", "cuda:2"]
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    assert devices_of("all") == ["cpu"], "no GPU: the CPU, no replicas"


@pytest.mark.parametrize(
    ("spec", "message"),
    [("cuda:4", "sees 2 GPU"), ("banana", "not a device"), (" , ", "devices is empty")],
)
def test_a_bad_devices_parameter_says_what_is_wrong(
    monkeypatch: pytest.MonkeyPatch, spec: str, message: str
) -> None:
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(GraphbookError, match=message):
        devices_of(spec)


@resource("Replicas/Model")
@param("devices", "string", default="cpu,cpu")
def doubler(ctx: Any) -> torch.nn.Module:
    torch.manual_seed(1)
    return Doubler()


@step("Replicas/Rows")
@source()
def rows(ctx: Any) -> Any:
    for i in range(12):
        yield {"x": float(i)}


@step("Replicas/Apply")
@batch(6, "x")
@param("model", "resource")
@torch.no_grad()
def apply(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    result = ctx.model(torch.tensor([[x, 1.0, 2.0] for x in items]))
    for d, y in zip(data, result["y"].tolist(), strict=True):
        d["y"] = y


def test_a_workflow_with_a_replicated_model_gives_the_same_outputs() -> None:
    results = []
    for devices in ("cpu", "cpu,cpu"):
        wf = Workflow()
        node = wf.add(apply, model=wf.add(doubler, devices=devices))
        wf.connect(wf.add(rows), node)
        CALLS.clear()
        result = run_workflow(wf, collect=True)
        assert result.ok, result.errors
        results.append([d["y"] for d in result.output(node.id)])
    assert results[0] == results[1]
    assert sorted(rows for _, rows in CALLS) == [3, 3, 3, 3], "2 batches of 6, 3 rows each"
