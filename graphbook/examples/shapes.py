"""Synthetic shapes data set, the tiny ShapesNet classifier, and its offline training."""

from __future__ import annotations

import io
import math
import random
from pathlib import Path
from typing import Literal, cast

import numpy as np
import torch
import torchvision.transforms.functional as tf
from PIL import Image, ImageDraw
from torch import nn

CLASSES = ("circle", "square", "triangle")
WEIGHTS = Path(__file__).with_name("shapes_net.pt")
IMAGE_SIZE = 64
HOLDOUT_SEED_OFFSET = 1_000_003
JPEG_QUALITY = 95

_MIN_COLOUR_DISTANCE = 110.0
_BATCH_SIZE = 64

Colour = tuple[int, int, int]


def _random_colour(rng: random.Random) -> Colour:
    return (rng.randrange(256), rng.randrange(256), rng.randrange(256))


def _contrasting_colour(rng: random.Random, other: Colour) -> Colour:
    while True:
        colour = _random_colour(rng)
        if math.dist(colour, other) >= _MIN_COLOUR_DISTANCE:
            return colour


def _polygon(
    sides: int, centre: tuple[float, float], radius: float, angle: float
) -> list[tuple[float, float]]:
    cx, cy = centre
    step = 2 * math.pi / sides
    return [
        (cx + radius * math.cos(angle + k * step), cy + radius * math.sin(angle + k * step))
        for k in range(sides)
    ]


def _add_noise(image: Image.Image, rng: random.Random) -> Image.Image:
    sigma = rng.uniform(0.0, 8.0)
    noise = np.random.default_rng(rng.getrandbits(32)).normal(0.0, sigma, (*image.size[::-1], 3))
    pixels = np.asarray(image, dtype=np.float32) + noise
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), mode="RGB")


def draw_shape(label: str, rng: random.Random, size: int = IMAGE_SIZE) -> Image.Image:
    """Draw one filled shape of class `label` on a random background; deterministic given rng."""
    if label not in CLASSES:
        raise ValueError(f"unknown shape {label!r}; expected one of {CLASSES}")
    background = _random_colour(rng)
    fill = _contrasting_colour(rng, background)
    radius = rng.uniform(0.14, 0.4) * size
    margin = radius + 1.0
    centre = (rng.uniform(margin, size - margin), rng.uniform(margin, size - margin))
    angle = rng.uniform(0.0, 2 * math.pi)
    image = Image.new("RGB", (size, size), background)
    draw = ImageDraw.Draw(image)
    if label == "circle":
        cx, cy = centre
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=fill)
    else:
        sides = 4 if label == "square" else 3
        draw.polygon(_polygon(sides, centre, radius, angle), fill=fill)
    return _add_noise(image, rng)


def _label_for(index: int) -> str:
    return CLASSES[index % len(CLASSES)]


def make_dataset(
    folder: Path | str, count: int, seed: int = 0, size: int = IMAGE_SIZE
) -> list[Path]:
    """Write `count` JPEGs named `{index:05d}_{label}.jpg`, classes round-robin; return sorted."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    paths = []
    for index in range(count):
        label = _label_for(index)
        path = root / f"{index:05d}_{label}.jpg"
        draw_shape(label, rng, size).save(path, format="JPEG", quality=JPEG_QUALITY)
        paths.append(path)
    return sorted(paths)


def label_of(path: Path | str) -> str:
    """Read the class label from a file name written by `make_dataset`."""
    _, _, label = Path(path).stem.partition("_")
    if label not in CLASSES:
        raise ValueError(f"cannot read a shape label from file name {Path(path).name!r}")
    return label


def preprocess(image: Image.Image) -> torch.Tensor:
    """Convert a PIL image to the (3, 64, 64) float tensor in 0..1 that ShapesNet expects."""
    image = image.convert("RGB")
    if image.size != (IMAGE_SIZE, IMAGE_SIZE):
        image = image.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BILINEAR)
    return cast(torch.Tensor, tf.to_tensor(image))


def _conv_block(channels_in: int, channels_out: int, stride: int = 1) -> list[nn.Module]:
    return [
        nn.Conv2d(channels_in, channels_out, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(channels_out),
        nn.ReLU(inplace=True),
    ]


class ShapesNet(nn.Module):
    """Tiny CNN mapping (N, 3, 64, 64) tensors in 0..1 to logits over CLASSES.

    `pool="max"` pools the last feature map by its maximum instead of its mean, and
    `standardise=True` first scales each image's channels to mean 0 and deviation 1: neither
    adds a weight (the state dict is the same), and together they learn the shapes in a fifth of
    the batches (measured in docs/trainer.md). The shipped weights are the plain net's.
    """

    def __init__(self, pool: Literal["avg", "max"] = "avg", *, standardise: bool = False) -> None:
        super().__init__()
        if pool not in ("avg", "max"):
            raise ValueError(f"ShapesNet pool must be 'avg' or 'max', not {pool!r}")
        self.standardise: nn.Module = nn.InstanceNorm2d(3) if standardise else nn.Identity()
        self.features = nn.Sequential(
            *_conv_block(3, 16, stride=2),  # 32x32
            nn.MaxPool2d(2),  # 16x16
            *_conv_block(16, 32),
            nn.MaxPool2d(2),  # 8x8
            *_conv_block(32, 64),
            nn.MaxPool2d(2),  # 4x4
            *_conv_block(64, 64),
        )
        self.pool = nn.AdaptiveMaxPool2d(1) if pool == "max" else nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(64, len(CLASSES))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.pool(self.features(self.standardise(x))).flatten(1)
        return cast(torch.Tensor, self.head(features))


def load_model(weights: Path = WEIGHTS) -> ShapesNet:
    """Return a ShapesNet in eval mode with the trained weights loaded from `weights`."""
    if not weights.is_file():
        raise FileNotFoundError(
            f"ShapesNet weights not found at {weights}; "
            "train them with `python -m graphbook.examples.shapes`"
        )
    model = ShapesNet()
    model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
    return model.eval()


def _jpeg_roundtrip(image: Image.Image, quality: int) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return decoded.convert("RGB")


def _make_tensors(count: int, seed: int, *, augment: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Images as `make_dataset(seed)` would write and read them; `augment` varies JPEG quality."""
    rng = random.Random(seed)
    labels = [_label_for(index) for index in range(count)]
    tensors = []
    for label in labels:
        image = draw_shape(label, rng)
        quality = rng.randint(60, 95) if augment else JPEG_QUALITY
        tensors.append(preprocess(_jpeg_roundtrip(image, quality)))
    targets = torch.tensor([CLASSES.index(label) for label in labels])
    return torch.stack(tensors), targets


def evaluate(model: ShapesNet, count: int, seed: int) -> float:
    """Put `model` in eval mode; return its accuracy on `make_dataset(_, count, seed)` images."""
    images, targets = _make_tensors(count, seed, augment=False)
    model.eval()
    correct = 0
    with torch.inference_mode():
        for start in range(0, count, _BATCH_SIZE):
            logits = model(images[start : start + _BATCH_SIZE])
            correct += int((logits.argmax(1) == targets[start : start + _BATCH_SIZE]).sum())
    return correct / count


def _train_epoch(
    model: ShapesNet,
    optimiser: torch.optim.Optimizer,
    data: tuple[torch.Tensor, torch.Tensor],
    generator: torch.Generator,
) -> None:
    images, targets = data
    model.train()
    order = torch.randperm(len(targets), generator=generator)
    for start in range(0, len(order), _BATCH_SIZE):
        batch = order[start : start + _BATCH_SIZE]
        optimiser.zero_grad()
        loss = nn.functional.cross_entropy(model(images[batch]), targets[batch])
        torch.autograd.backward(loss)
        optimiser.step()


def train(epochs: int = 12, count: int = 6000, seed: int = 0, *, weights: Path = WEIGHTS) -> float:
    """Train ShapesNet on CPU, save its state dict to `weights`, return held-out accuracy."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = ShapesNet()
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=epochs)
    data = _make_tensors(count, seed, augment=True)
    for _ in range(epochs):
        _train_epoch(model, optimiser, data, generator)
        scheduler.step()
    model.eval()
    torch.save(model.state_dict(), weights)
    return evaluate(model, max(count // 5, 300), seed + HOLDOUT_SEED_OFFSET)


if __name__ == "__main__":
    import time

    started = time.perf_counter()
    accuracy = train()
    elapsed = time.perf_counter() - started
    print(f"saved {WEIGHTS} ({WEIGHTS.stat().st_size} bytes)")
    print(f"held-out accuracy {accuracy:.4f}, trained in {elapsed:.1f} s")
