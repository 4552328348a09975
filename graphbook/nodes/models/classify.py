"""ClassifyImages, and the class names it gives: from its labels parameter (a file or a
list), else the model's own."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from graphbook.nodes.common import Data, NodeInputError
from graphbook.nodes.inference import (
    MODEL_STEP_PARAMETERS,
    ImageBatchStep,
    is_pipeline,
)
from graphbook.nodes.models.weights import LABELS_ATTR


def read_labels(text: str) -> list[str] | None:
    """Class names from a parameter: a text file (one a line), a JSON list file, or a
    comma-separated list; None when empty."""
    text = str(text or "").strip()
    if not text:
        return None
    path = Path(os.path.expanduser(text))
    if path.is_file():
        return labels_in_file(path)
    if "," not in text and (os.sep in text or path.suffix.lower() in {".txt", ".json", ".csv"}):
        raise FileNotFoundError(f"labels file {path} does not exist; check the path")
    return [label.strip() for label in text.split(",")]


def labels_in_file(path: Path) -> list[str]:
    content = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        loaded = json.loads(content)
        if isinstance(loaded, dict):  # {"0": "cat", ...} as in id2label
            loaded = [loaded[k] for k in sorted(loaded, key=int)]
        if not isinstance(loaded, list):
            raise NodeInputError(f"{path} holds no JSON list of labels")
        return [str(label) for label in loaded]
    return [line.strip() for line in content.splitlines() if line.strip()]


def labels_of(model: Any) -> list[str] | None:
    """The class names a model value carries: torchvision's weights', a HF config's id2label."""
    labels = getattr(model, LABELS_ATTR, None)
    if labels:
        return list(labels)
    config = getattr(getattr(model, "model", model), "config", None)
    id2label = getattr(config, "id2label", None)
    if isinstance(id2label, dict) and id2label:
        return [str(id2label[k]) for k in sorted(id2label, key=int)]
    return None


class ClassifyImages(ImageBatchStep):
    """Classifies each image with an image classifier (TorchvisionModel, TorchScriptModel,
    ONNXModel, or a HuggingFaceModel of task image-classification).

    Each dict gets `prediction` (the class name; its index when no names are known) and
    `confidence` (its softmax probability), and with `top_k` above 1, `top_k`: the best
    classes as `[[label, probability], ...]`. With a list of image records under `item_key`,
    each record gets them. Class names: `labels`, else the model's own (torchvision's weights,
    a Hugging Face config's id2label).

    On a CUDA device the model runs under inference mode in channels-last memory format;
    `precision` bf16 or fp16 runs it under autocast (faster, and as a rule the same top class),
    and `decode` says where JPEGs are decoded: auto decodes them on the GPU where it has hardware
    JPEG decoders (A100, H100, ...), and the node's log says which it chose.

    Example: `{"image": {"type": "image", "value": "cat.jpg"}}` becomes
    `{"image": ..., "prediction": "tabby", "confidence": 0.91}`.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        **MODEL_STEP_PARAMETERS,
        "top_k": {"type": "int", "default": 1, "description": "best classes listed (1: none)"},
        "labels": {
            "type": "string",
            "default": "",
            "description": "class names: a .txt (one a line) or .json file, or a comma-"
            "separated list; empty: the model's own",
        },
    }
    top_k: int = 1
    labels: str = ""
    names: list[str] | None = None

    def on_start(self) -> None:
        super().on_start()
        self.names = read_labels(self.labels) or labels_of(self.model)
        if self.names is None:
            self.log("no class names (no labels given, none in the model): predictions are indices")

    def results(self, images: Sequence[Any]) -> list[Data]:
        if is_pipeline(self.model):
            return self.pipeline_results(images)
        import torch

        logits = self.forward(self.model, images)
        probabilities = torch.as_tensor(logits).float().reshape(len(images), -1).softmax(dim=1)
        self.check_width(probabilities.shape[1])
        k = max(1, min(int(self.top_k), probabilities.shape[1]))
        values, indices = probabilities.topk(k, dim=1)
        return [self.fields(i, v) for i, v in zip(indices.tolist(), values.tolist(), strict=True)]

    def check_width(self, outputs: int) -> None:
        if self.names is not None and outputs > len(self.names):
            raise NodeInputError(
                f"the model has {outputs} outputs but there are {len(self.names)} labels; give "
                f"one label per output (labels parameter) or check the model's num_classes"
            )

    def label(self, index: int) -> Any:
        return self.names[index] if self.names is not None else index

    def fields(self, indices: list[int], scores: list[float]) -> Data:
        result: Data = {"prediction": self.label(indices[0]), "confidence": round(scores[0], 6)}
        if int(self.top_k) > 1:
            pairs = zip(indices, scores, strict=True)
            result["top_k"] = [[self.label(i), round(s, 6)] for i, s in pairs]
        return result

    def pipeline_results(self, images: Sequence[Any]) -> list[Data]:
        from PIL import Image

        pictures = [Image.fromarray(image) for image in images]
        k = max(1, int(self.top_k))
        found = self.model(pictures, top_k=k, batch_size=len(pictures))
        results = []
        for ranked in found:
            ranked = ranked if isinstance(ranked, list) else [ranked]
            labels = [r["label"] for r in ranked]
            scores = [float(r["score"]) for r in ranked]
            result: Data = {"prediction": labels[0], "confidence": round(scores[0], 6)}
            if k > 1:
                result["top_k"] = [
                    [lab, round(s, 6)] for lab, s in zip(labels, scores, strict=True)
                ]
            results.append(result)
        return results
