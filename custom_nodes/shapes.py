"""Nodes of the image example, in the shape of seed 004: images -> batches -> model -> dump."""

from pathlib import Path
from typing import Any, ClassVar

import torch
from PIL import Image

from graphbook import batch, param, resource, source, step
from graphbook.examples.shapes import CLASSES, label_of, load_model, make_dataset, preprocess
from graphbook.steps import Step


@step("Shapes/ShapeImages")
@source()
@param("folder", "string", default="data/shapes", description="where the images are made")
@param("count", "int", default=240, description="how many images")
@param("per_dict", "int", default=4, description="images per dict")
@param("seed", "int", default=7, description="seed of the image generator")
def shape_images(ctx: Any) -> Any:
    """Makes `count` labelled images of circles, squares and triangles in `folder` (unless
    they are there already) and yields them `per_dict` at a time:
    `{"image_paths": [{"type": "image", "value": PATH, "label": "circle"}, ...]}`."""
    folder = Path(ctx.folder)
    paths = sorted(folder.glob("*.jpg"))
    if len(paths) != ctx.count:
        for old in paths:
            old.unlink()
        ctx.log(f"making {ctx.count} images in {folder}")
        paths = make_dataset(folder, ctx.count, seed=ctx.seed)
    for start in range(0, len(paths), ctx.per_dict):
        chunk = paths[start : start + ctx.per_dict]
        yield {"image_paths": [image_item(path) for path in chunk]}


def image_item(path: Path) -> dict[str, Any]:
    return {"type": "image", "value": str(path), "label": label_of(path)}


@resource("Shapes/ShapesModel")
@param("device", "string", default="auto", description="cpu, cuda, cuda:1 ... or auto")
def shapes_model(ctx: Any) -> torch.nn.Module:
    """ShapesNet: a small CNN that tells circles, squares and triangles apart. Graphbook trains
    it itself (`python -m graphbook.examples.shapes`) and ships the weights."""
    return load_model()


def load_image(item: dict[str, Any]) -> torch.Tensor:
    """Runs in the worker pool: decode one image into the model's input tensor."""
    with Image.open(item["value"]) as image:
        return preprocess(image)


@step("Shapes/Classify")
@batch(32, "image_paths", load_fn=load_image)
@param("model", "resource", required=True, description="a ShapesModel")
@torch.no_grad()
def classify(ctx: Any, images: list[torch.Tensor], items: list[Any], data: list[Any]) -> None:
    """Classifies each image of each dict; adds `prediction` and `confidence` to its item."""
    device = next(ctx.model.parameters()).device
    probabilities = ctx.model(torch.stack(images).to(device)).softmax(dim=1)
    confidence, index = probabilities.max(dim=1)
    for item, conf, i in zip(items, confidence.tolist(), index.tolist(), strict=True):
        item["prediction"] = CLASSES[i]
        item["confidence"] = round(conf, 4)


class Accuracy(Step):
    """Counts the predictions that match their labels and logs the accuracy when the run ends.
    Each dict gets `correct`: how many of its images were classified right."""

    Category: ClassVar[str] = "Shapes"
    correct = 0
    total = 0

    def on_start(self) -> None:
        self.correct = self.total = 0

    def on_data(self, data: dict[str, Any]) -> None:
        hits = [item["prediction"] == item["label"] for item in data["image_paths"]]
        data["correct"] = sum(hits)
        self.correct += sum(hits)
        self.total += len(hits)

    def on_end(self) -> None:
        if self.total:
            share = self.correct / self.total
            self.log(f"accuracy {share:.1%} ({self.correct} of {self.total} images)")
