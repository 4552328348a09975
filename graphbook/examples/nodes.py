"""Nodes of the image example, in the shape of seed 004: images -> batches -> model -> dump.

Loaded with the library as the "examples" pack (graphbook.nodes.load_library); torch and PIL
are imported when a node runs, not when the catalog is read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from graphbook.decorators import batch, param, resource, source, step
from graphbook.lifecycle import Step

if TYPE_CHECKING:
    import torch

MARKER = ".graphbook-shapes.json"
"""What ShapeImages made in a folder (count, seed, file names): the only files it ever removes."""


@step("Shapes/ShapeImages")
@source()
@param(
    "folder", "string", default="data/shapes", description="where the images are made", path=True
)
@param("count", "int", default=240, description="how many images")
@param("per_dict", "int", default=4, description="images per dict")
@param("seed", "int", default=7, description="seed of the image generator")
def shape_images(ctx: Any) -> Any:
    """Makes `count` labelled images of circles, squares and triangles in `folder` (unless
    it made them there already) and yields them `per_dict` at a time:
    `{"image_paths": [{"type": "image", "value": PATH, "label": "circle"}, ...]}`.

    It never removes a file it did not make: a folder holding other images is refused (point
    `folder` at an empty or new one)."""
    paths = shape_files(Path(ctx.folder), ctx.count, ctx.seed, ctx.log)
    for start in range(0, len(paths), ctx.per_dict):
        chunk = paths[start : start + ctx.per_dict]
        yield {"image_paths": [image_item(path) for path in chunk]}


def shape_files(folder: Path, count: int, seed: int, log: Any = print) -> list[Path]:
    """The images of `count` and `seed` in `folder`, made there unless they are already."""
    from graphbook.examples.shapes import make_dataset

    made = _made_before(folder)
    wanted = {"count": count, "seed": seed}
    if made is not None and made["settings"] == wanted and _all_there(folder, made["files"]):
        return [folder / name for name in made["files"]]
    if made is None and _made_by_older_version(folder, wanted):
        return sorted(folder.glob("*.jpg"))
    for name in made["files"] if made is not None else []:
        (folder / name).unlink(missing_ok=True)
    if made is None:
        _refuse_foreign_images(folder)
    log(f"making {count} images in {folder}")
    paths = make_dataset(folder, count, seed=seed)
    record = {"settings": wanted, "files": [path.name for path in paths]}
    (folder / MARKER).write_text(json.dumps(record), encoding="utf-8")
    return paths


def _made_before(folder: Path) -> dict[str, Any] | None:
    try:
        record: dict[str, Any] = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record.get("files"), list) else None


def _all_there(folder: Path, names: list[str]) -> bool:
    return all((folder / name).is_file() for name in names)


def _made_by_older_version(folder: Path, wanted: dict[str, int]) -> bool:
    """Images an earlier Graphbook made here without a record: `count` files, all named as
    make_dataset names them. They are adopted (the record written), never removed."""
    from graphbook.examples.shapes import CLASSES

    names = [p.name for p in folder.glob("*")] if folder.is_dir() else []
    pattern = re.compile(rf"\d{{5}}_({'|'.join(CLASSES)})\.jpg")
    if len(names) != wanted["count"] or not all(pattern.fullmatch(name) for name in names):
        return False
    files = sorted(names)
    record = {"settings": wanted, "files": files}
    (folder / MARKER).write_text(json.dumps(record), encoding="utf-8")
    return True


def _refuse_foreign_images(folder: Path) -> None:
    if not folder.exists():
        return
    if not folder.is_dir():
        raise NotADirectoryError(f"ShapeImages: {folder} is a file; point `folder` at a folder")
    others = sorted(p.name for p in folder.iterdir() if p.name != MARKER)
    if others:
        shown = ", ".join(others[:3]) + (" ..." if len(others) > 3 else "")
        raise FileExistsError(
            f"ShapeImages: {folder} holds {len(others)} files it did not make ({shown}); it "
            "never removes or mixes in files of yours: point `folder` at an empty or new folder"
        )


def image_item(path: Path) -> dict[str, Any]:
    from graphbook.examples.shapes import label_of

    return {"type": "image", "value": str(path), "label": label_of(path)}


@resource("Shapes/ShapesModel")
@param("device", "string", default="auto", description="cpu, cuda, cuda:1 ... or auto")
def shapes_model(ctx: Any) -> torch.nn.Module:
    """ShapesNet: a small CNN that tells circles, squares and triangles apart. Graphbook trains
    it itself (`python -m graphbook.examples.shapes`) and ships the weights."""
    from graphbook.examples.shapes import load_model

    return load_model()


def load_image(item: dict[str, Any]) -> torch.Tensor:
    """Runs in the worker pool: decode one image into the model's input tensor."""
    from PIL import Image

    from graphbook.examples.shapes import preprocess

    with Image.open(item["value"]) as image:
        return preprocess(image)


@step("Shapes/Classify")
@batch(32, "image_paths", load_fn=load_image)
@param("model", "resource", required=True, description="a ShapesModel")
def classify(ctx: Any, images: list[torch.Tensor], items: list[Any], data: list[Any]) -> None:
    """Classifies each image of each dict; adds `prediction` and `confidence` to its item."""
    import torch

    from graphbook.examples.shapes import CLASSES

    device = next(ctx.model.parameters()).device
    with torch.no_grad():
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
