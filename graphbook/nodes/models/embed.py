"""EmbedImages: the vector a classifier's last layer reads, or any model's output, per image."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from graphbook.nodes.common import Data, NodeInputError
from graphbook.nodes.inference import (
    MODEL_STEP_PARAMETERS,
    ImageBatchStep,
    is_pipeline,
)
from graphbook.nodes.models.weights import ARCH_ATTR, last_linear_name

if TYPE_CHECKING:
    import torch


def feature_model(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of a torchvision classifier whose last Linear layer is an Identity: its output
    is the vector the classifier reads."""
    import copy

    import torch

    name = last_linear_name(model)
    if name is None:
        return model
    features = copy.deepcopy(model)
    parent_name, _, leaf = name.rpartition(".")
    parent = features.get_submodule(parent_name) if parent_name else features
    setattr(parent, leaf, torch.nn.Identity())
    return features


class EmbedImages(ImageBatchStep):
    """Turns each image into a vector: `embedding`, a float32 numpy array (unit length when
    `normalize` is on), on the dict or on each record of a list under `item_key`.

    For a TorchvisionModel classifier the vector is what its final classifier layer reads
    (resnet18: 512 numbers, mobilenet_v3_small: 1024): the step runs a copy of the model whose
    last Linear layer is replaced by an Identity (a copy, so the model stays whole for other
    steps, and no forward hook, which would stop the engine from running it on per-core
    slices). Any other model's output is flattened and used as it is.

    `precision` bf16 or fp16 computes the vectors under autocast (they come out float32, close
    to fp32's); `decode` gpu decodes JPEGs on the model's GPU (auto: where it has hardware JPEG
    decoders). On CUDA the model runs in channels-last memory format under inference mode.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        **MODEL_STEP_PARAMETERS,
        "normalize": {"type": "boolean", "default": True, "description": "L2-normalise vectors"},
    }
    normalize: bool = True
    features: Any = None

    def on_start(self) -> None:
        super().on_start()
        if is_pipeline(self.model):
            raise NodeInputError(
                "EmbedImages takes a torch, TorchScript or ONNX model, not a Hugging Face "
                "pipeline; use ApplyModel for the pipeline's results"
            )
        self.features = self.model
        if getattr(self.model, ARCH_ATTR, None):
            self.features = feature_model(self.model)

    def results(self, images: Sequence[Any]) -> list[Data]:
        import torch

        output = self.forward(self.features, images)
        vectors = torch.as_tensor(output).float().reshape(len(images), -1)
        if self.normalize:
            vectors = torch.nn.functional.normalize(vectors, dim=1)
        return [{"embedding": v} for v in vectors.cpu().numpy()]
