"""The image benchmark's work and its nodes: decode -> batch 32 -> model -> top-5 JSON lines.

The same functions run in every contender (Graphbook, DataLoader, the limit), so they differ
only in how the work is scheduled.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torchvision
from PIL import Image, ImageDraw
from torchvision.transforms import functional as tf

from graphbook import batch, event, param, resource, source, step

SIZE = (320, 240)
INPUT = 224
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
MODELS = ("mobilenet_v3_small", "resnet18")  # the CPU benchmarks'; bench.gpu adds its own
GPU_MODELS = ("resnet50", "vit_b_16")
ALL_MODELS = MODELS + GPU_MODELS


# -- the work ---------------------------------------------------------------------------------
def load_image(path: str) -> torch.Tensor:
    """Decode a JPEG, resize it to 224x224, make it a normalised float tensor (3, 224, 224)."""
    with Image.open(path) as image:
        resized = image.convert("RGB").resize((INPUT, INPUT), Image.Resampling.BILINEAR)
    tensor: torch.Tensor = tf.normalize(tf.to_tensor(resized), MEAN, STD)
    return tensor


def build_model(name: str) -> torch.nn.Module:
    """A torchvision classifier with random weights (nothing is downloaded), in eval mode."""
    if name not in ALL_MODELS:
        raise ValueError(f"model is one of {ALL_MODELS}, got {name!r}")
    torch.manual_seed(0)
    model: torch.nn.Module = getattr(torchvision.models, name)(weights=None)
    return model.eval()


def top5(model: torch.nn.Module, images: torch.Tensor) -> tuple[list[list[int]], list[list[float]]]:
    """The five best classes of each image and their probabilities."""
    with torch.inference_mode():
        probabilities = model(images).softmax(dim=1)
        values, indices = probabilities.topk(5, dim=1)
    return indices.tolist(), values.tolist()


def json_lines(paths: list[str], classes: list[list[int]], scores: list[list[float]]) -> str:
    rows = zip(paths, classes, scores, strict=True)
    lines = [
        json.dumps({"path": p, "top5": c, "scores": [round(s, 5) for s in v]}) for p, c, v in rows
    ]
    return "\n".join(lines) + "\n"


def append_lines(out: str, paths: list[str], classes: list[list[int]], scores: Any) -> None:
    """Append one batch's lines in one write, which O_APPEND keeps whole between writers."""
    with open(out, "a", encoding="utf-8") as file:
        file.write(json_lines(paths, classes, scores))


# -- synthetic images -------------------------------------------------------------------------
def make_images(folder: Path, count: int, originals: Path, distinct: int = 2000) -> list[Path]:
    """`count` 320x240 JPEGs in `folder`: hard links to `distinct` deterministic images made
    once in `originals` (so that 20,000 images cost no more time or disk than 2,000)."""
    folder.mkdir(parents=True, exist_ok=True)
    originals.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{n:06d}.jpg" for n in range(count)]
    for n, path in enumerate(paths):
        original = originals / f"{n % distinct:06d}.jpg"
        if not original.exists():
            synthetic_image(n % distinct).save(original, quality=90)
        if not path.exists():
            path.hardlink_to(original)
    return paths


def synthetic_image(seed: int) -> Image.Image:
    """A smooth colour gradient with a few shapes and some grain, like a photo to a codec."""
    rng = np.random.default_rng(seed)
    width, height = SIZE
    x = np.linspace(0.0, 1.0, width)[None, :, None]
    y = np.linspace(0.0, 1.0, height)[:, None, None]
    a, b, c = (rng.uniform(0, 255, 3) for _ in range(3))
    pixels = a * x + b * y + c * (1 - x) * (1 - y) + rng.normal(0, 6, (height, width, 3))
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(4):
        x0, y0 = int(rng.integers(0, width - 40)), int(rng.integers(0, height - 40))
        box = (x0, y0, x0 + int(rng.integers(20, 120)), y0 + int(rng.integers(20, 100)))
        colour = tuple(int(v) for v in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=colour)
    return image


# -- the nodes --------------------------------------------------------------------------------
@step("Bench/ImageFiles")
@source()
@param("folder", "string", required=True, description="folder of .jpg files")
@param("per_dict", "int", default=1, description="image paths per dict")
def image_files(ctx: Any) -> Any:
    """Yields the folder's JPEGs in name order: `{"images": [path, ...]}`, `per_dict` at a time."""
    paths = sorted(str(p) for p in Path(ctx.folder).glob("*.jpg"))
    for start in range(0, len(paths), ctx.per_dict):
        yield {"images": paths[start : start + ctx.per_dict]}


@resource("Bench/Classifier")
@param("model", "string", default="mobilenet_v3_small", description=" or ".join(ALL_MODELS))
@param(
    "cpu_slices",
    "int",
    default=0,
    description="slices of a batch run at once on the CPU (0: cores + 1, 1: the plain model)",
)
@param("device", "string", default="cpu", description="cpu, cuda ...")
def classifier(ctx: Any) -> torch.nn.Module:
    """A torchvision classifier with random weights. On the CPU, Graphbook runs each batch as
    `cpu_slices` slices at once, one torch thread each (graphbook/engine/slices.py)."""
    return build_model(ctx.model)


def _reset_output(ctx: Any) -> None:
    Path(ctx.out).parent.mkdir(parents=True, exist_ok=True)
    Path(ctx.out).write_text("")


@step("Bench/Classify")
@batch(32, "images", load_fn=load_image, dump_fn=append_lines)
@event("on_start", _reset_output)
@param("model", "resource", required=True, description="a Classifier")
@param("out", "string", default="out/bench/top5.jsonl", description="JSON lines written here")
def classify(ctx: Any, images: list[torch.Tensor], paths: list[str], data: list[Any]) -> Any:
    """Runs the model on each batch; the dump workers append each image's top-5 to `out`."""
    device = next(ctx.model.parameters()).device
    classes, scores = top5(ctx.model, torch.stack(images).to(device))
    return [(ctx.out, paths, classes, scores)]
