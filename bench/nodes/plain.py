"""The image benchmark's model written as a person writes it: a plain `Resource` class that
returns the torchvision model and a class-style `BatchStep` that calls it on
`torch.stack(images)`. Nothing Graphbook-specific about slices, threads or devices: what
Graphbook does with the model by default is what this measures. On a GPU (bench/gpu.py) the
batch is still stacked on the CPU and handed to the model as it is."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, ClassVar

import torch

from bench.nodes.images import append_lines, build_model, load_image
from graphbook import stack
from graphbook.resources import Resource
from graphbook.steps import BatchStep


class PlainClassifier(Resource):
    """A torchvision classifier with random weights."""

    Category = "Bench"
    Parameters: ClassVar[dict[str, Any]] = {
        "model": {"type": "string", "default": "mobilenet_v3_small"},
        "device": {"type": "string", "default": "cpu"},
    }

    def __init__(self, model: str, device: str) -> None:
        super().__init__()
        self.model = build_model(model)

    def value(self) -> torch.nn.Module:
        return self.model


class PlainClassify(BatchStep):
    """Runs the model on each batch of decoded images; appends each image's top-5 to `out`."""

    Category = "Bench"
    RequiresInput = True
    Outputs: ClassVar[list[str]] = ["out"]
    Parameters: ClassVar[dict[str, Any]] = {
        "batch_size": {"type": "number", "default": 32},
        "item_key": {"type": "string", "default": "images"},
        "model": {"type": "resource"},
        "out": {"type": "string", "default": "out/bench/top5.jsonl"},
        "amp": {"type": "string", "default": "", "description": "fp16 or bf16: autocast on a GPU"},
        "stacked": {
            "type": "boolean",
            "default": False,
            "description": "take the batch as graphbook.stack gives it (the workers' slab, no "
            "copy) instead of torch.stack",
        },
    }
    load_fn = staticmethod(load_image)
    dump_fn = staticmethod(append_lines)

    def __init__(
        self,
        batch_size: int,
        item_key: str,
        model: torch.nn.Module,
        out: str,
        amp: str,
        stacked: bool = False,
    ) -> None:
        super().__init__(batch_size, item_key)
        self.model = model
        self.out = out
        self.amp = amp
        self.stacked = stacked

    def on_start(self) -> None:
        Path(self.out).parent.mkdir(parents=True, exist_ok=True)
        Path(self.out).write_text("")

    @torch.no_grad()
    def on_item_batch(self, images: list[torch.Tensor], items: list[str], data: list[Any]) -> Any:
        batch = stack(images) if self.stacked else torch.stack(images)
        with self.autocast():
            probabilities = self.model(batch).float().softmax(dim=1)
        scores, classes = probabilities.topk(5, dim=1)
        return [(self.out, items, classes.tolist(), scores.tolist())]

    def autocast(self) -> contextlib.AbstractContextManager[Any]:
        if not self.amp:
            return contextlib.nullcontext()
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[self.amp]
        return torch.autocast("cuda", dtype=dtype)
