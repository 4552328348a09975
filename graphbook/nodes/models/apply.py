"""ApplyModel: any model's raw output, per image."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from graphbook.nodes.common import Data, NodeInputError
from graphbook.nodes.inference import (
    MODEL_STEP_PARAMETERS,
    ImageBatchStep,
    is_pipeline,
)


class ApplyModel(ImageBatchStep):
    """Runs any model on each batch of images and writes its raw output for each image under
    `output_field`: a numpy array (a tuple or dict of them for a model with several outputs;
    a Hugging Face pipeline's results as it returns them).

    A torch model's outputs come out as float32 arrays whatever its `precision` (bf16 or fp16
    run it under autocast); `decode` chooses where JPEGs are decoded, the load workers or the
    model's GPU (auto: GPUs with hardware JPEG decoders)."""

    Parameters: ClassVar[dict[str, Any]] = {
        **MODEL_STEP_PARAMETERS,
        "output_field": {"type": "string", "default": "output", "description": "field written"},
    }
    output_field: str = "output"

    def results(self, images: Sequence[Any]) -> list[Data]:
        field = str(self.output_field or "output")
        if is_pipeline(self.model):
            from PIL import Image

            found = self.model([Image.fromarray(i) for i in images], batch_size=len(images))
            return [{field: r} for r in found]
        per_item = split_output(self.forward(self.model, images), len(images))
        return [{field: value} for value in per_item]


def split_output(output: Any, count: int) -> list[Any]:
    """A batch's output as one value per item: arrays, or tuples/dicts of arrays."""
    import torch

    if isinstance(output, torch.Tensor):
        return (
            list(output.detach().float().cpu().numpy()) if output.dim() else [output.item()] * count
        )
    if isinstance(output, dict):
        parts = {k: split_output(v, count) for k, v in output.items()}
        return [{k: v[n] for k, v in parts.items()} for n in range(count)]
    if isinstance(output, list | tuple):
        columns = [split_output(v, count) for v in output]
        return [tuple(c[n] for c in columns) for n in range(count)]
    raise NodeInputError(
        f"cannot split the model's output of type {type(output).__name__} by image"
    )
