"""A model being trained keeps the mode its node's code set, as in 0.13
(upstream's python/MnistClassifier.py: a model resource, an SGD resource over its parameters, a
step that trains it); a model only used for inference is put in eval mode, and a node-folder
model put there from training mode says so on its node."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn

import graphbook as gb
from graphbook import output, param, resource, run_workflow, source, step
from graphbook.core.resources import Resource
from graphbook.core.steps import Step
from graphbook.events import Event, NodeLog


class SimpleNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.fc(x))  # type: ignore[no-any-return]


@resource("SimpleNN")
def get_model(ctx: Any) -> nn.Module:
    """A fresh model, in training mode as torch makes it: the node never calls .train()."""
    torch.manual_seed(0)
    return SimpleNN()


@resource("SGD")
@param("model", "resource")
@param("learning_rate", "number", default=0.1)
def get_optimizer(ctx: Any) -> torch.optim.Optimizer:
    return torch.optim.SGD(ctx.model.parameters(), lr=ctx.learning_rate)


@step()
@source()
@param("batches", "number", default=4)
def batches(ctx: Any) -> Any:
    generator = torch.Generator().manual_seed(1)
    for _ in range(int(ctx.batches)):
        yield {"out": {"x": torch.randn(8, 4, generator=generator), "y": torch.zeros(8).long()}}


@step()
@param("model", "resource")
@param("optimizer", "resource")
@output("out")
def train_step(ctx: Any, data: dict[str, Any]) -> None:
    ctx.optimizer.zero_grad()
    loss = nn.functional.cross_entropy(ctx.model(data["x"]), data["y"])
    loss.backward()  # type: ignore[no-untyped-call]
    ctx.optimizer.step()
    data["training"] = ctx.model.training and ctx.model.drop.training


def _logs(events: list[Event], node_id: str) -> list[str]:
    return [str(e.message) for e in events if isinstance(e, NodeLog) and e.node_id == node_id]


def test_a_model_an_optimizer_resource_holds_trains_in_training_mode() -> None:
    g = gb.Graph()

    @g()
    def _() -> None:
        data = g.step(batches)
        train = g.step(train_step)
        model = g.resource(get_model)
        optimizer = g.resource(get_optimizer)
        optimizer.param("model", model)
        train.param("model", model)
        train.param("optimizer", optimizer)
        train.bind(data)

    events: list[Event] = []
    result = run_workflow(g.workflow, sink=events.append, collect=True)
    assert result.ok, result.errors
    train_id = g.nodes[1].id
    assert [d["training"] for d in result.output(train_id)] == [True] * 4
    model_id = g.nodes[2].id
    assert any(
        "is being trained" in m and "left in training mode" in m for m in _logs(events, model_id)
    )


class Trainer(Step):
    """A class step that makes its own optimizer, as 0.13 training steps did."""

    Parameters: ClassVar[dict[str, Any]] = {"model": {"type": "resource"}}

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters())

    def on_data(self, data: dict[str, Any]) -> None:
        data["training"] = self.model.training


class Predictor(Step):
    Parameters: ClassVar[dict[str, Any]] = {"model": {"type": "resource"}}

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def on_data(self, data: dict[str, Any]) -> None:
        data["training"] = self.model.training


class DeclaredModel(Resource):
    """Says it is trained."""

    Trains = True

    def value(self) -> nn.Module:
        return SimpleNN()


def _run(step_class: type, model: Any) -> tuple[list[Any], list[str]]:
    g = gb.Graph()

    @g()
    def _() -> None:
        data = g.step(batches)
        user = g.step(step_class)
        made = g.resource(model)
        user.param("model", made)
        data.param("batches", 1)
        user.bind(data)

    events: list[Event] = []
    result = run_workflow(g.workflow, sink=events.append, collect=True)
    assert result.ok, result.errors
    return [d["training"] for d in result.output(g.nodes[1].id)], _logs(events, g.nodes[2].id)


def test_a_step_holding_an_optimizer_or_a_resource_saying_so_trains() -> None:
    assert _run(Trainer, get_model)[0] == [True]
    assert _run(Predictor, DeclaredModel)[0] == [True], "Trains = True"


def test_a_model_only_used_for_inference_is_put_in_eval_mode_and_says_so() -> None:
    modes, logs = _run(Predictor, get_model)
    assert modes == [False]
    assert any("put in eval mode for inference" in m for m in logs)
