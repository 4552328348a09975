"""The one JSON-safe walk, as each boundary uses it: messages, metric values, table cells."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from graphbook.nodes.common import plain_value
from graphbook.plain import plain_metric
from graphbook.protocol import to_json


@dataclass(frozen=True)
class Point:
    x: float
    tags: tuple[str, ...]


def test_a_metric_holds_numbers_from_tensors_and_arrays() -> None:
    value = {"loss": torch.tensor([[0.5]]), "per_class": np.array([1, 2]), 3: np.float32(0.25)}
    assert plain_metric(value) == {"loss": 0.5, "per_class": [1, 2], "3": 0.25}
    assert type(plain_metric(np.float64(1.5))) is float
    assert plain_metric(torch.tensor([1.0, 2.0], requires_grad=True)) == [1.0, 2.0]


def test_a_metric_keeps_nan_a_number() -> None:
    assert math.isnan(plain_metric([float("nan")])[0])


def test_a_table_cell_holds_paths_and_null_for_nan() -> None:
    record = {"type": "image", "value": "/data/a.png"}
    row = {"image": record, "where": Path("/x"), "score": float("inf"), "v": np.arange(2)}
    assert plain_value(row) == {"image": "/data/a.png", "where": "/x", "score": None, "v": [0, 1]}


def test_a_message_holds_dataclasses_and_nan_as_text() -> None:
    sent = to_json({"point": Point(float("nan"), ("a",)), "n": [1, 2.5]})
    assert sent == {"point": {"x": "nan", "tags": ["a"]}, "n": [1, 2.5]}
    assert json.loads(json.dumps(sent, allow_nan=False)) == sent


def test_a_message_gives_what_json_cannot_hold_to_its_leaf() -> None:
    sent = to_json({"t": torch.zeros(2), "f": 1.0}, leaf=lambda v: f"<{type(v).__name__}>")
    assert sent == {"t": "<Tensor>", "f": 1.0}
    assert to_json(object) is object, "a class is not a dataclass instance"
