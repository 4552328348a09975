"""Sample data the templates read, made here (nothing is downloaded): each maker writes its
files under a root folder at the relative path the templates name, unless they exist.

- `shapes`: 60 labelled pictures of circles, squares and triangles in one sub-folder per class
- `photos`: 40 textured 320x240 photos: 6 near-duplicates (smaller, re-encoded copies), 6
  blurred and 4 dark ones among them
- `table`: a CSV of 200 measurements (with 10 repeated rows and 5 rows without a value)
- `records`: 20 JSON lines
- `shapesnet`: ShapesNet (the CNN Graphbook trains and ships) as a TorchScript file, which tells
  the shapes apart; `shapesnet-features`: the same net up to its last layer (64 features)
- `tiny-hf-classifier`: a tiny untrained Hugging Face image classifier (transformers), to show
  the wiring of a local Hugging Face model (its predictions mean nothing)
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

Maker = Callable[[Path], None]


def _records(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"id": n, "text": f"record {n}", "score": (n * 37 % 100) / 100} for n in range(20)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _shapes(folder: Path) -> None:
    from graphbook.examples.shapes import CLASSES, draw_shape

    rng = random.Random(11)
    for index in range(60):
        label = CLASSES[index % len(CLASSES)]
        (folder / label).mkdir(parents=True, exist_ok=True)
        draw_shape(label, rng).save(folder / label / f"{index:03d}.jpg", quality=95)


def _photo(seed: int) -> Any:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    image = Image.fromarray(coarse).resize((320, 240), Image.Resampling.BICUBIC)
    grain = rng.normal(0, 12, (240, 320, 3))
    pixels = np.clip(np.asarray(image, dtype=np.float64) + grain, 0, 255).astype(np.uint8)
    return Image.fromarray(pixels)


def _photos(folder: Path) -> None:
    from PIL import ImageEnhance, ImageFilter

    folder.mkdir(parents=True, exist_ok=True)
    for n in range(30):
        _photo(n).save(folder / f"photo_{n:02d}.jpg", quality=90)
    for n in range(6):  # near-duplicates: smaller, re-encoded copies
        copy = _photo(n).resize((256, 192))
        copy.save(folder / f"photo_{n:02d}_copy.jpg", quality=60)
    for n in range(30, 36):
        _photo(n).filter(ImageFilter.GaussianBlur(6)).save(folder / f"blurry_{n}.jpg")
    for n in range(36, 40):
        ImageEnhance.Brightness(_photo(n)).enhance(0.15).save(folder / f"dark_{n}.jpg")


def _table(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(5)
    sites = ["north", "south", "east", "west"]
    rows = [
        {"id": n, "site": rng.choice(sites), "value": round(rng.uniform(0, 100), 2)}
        for n in range(190)
    ]
    rows += [dict(rows[n]) for n in range(10)]  # repeated rows
    for row in rows[20:25]:
        row["value"] = ""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "site", "value"])
        writer.writeheader()
        writer.writerows(rows)


def _shapesnet(path: Path) -> None:
    from graphbook.examples.shapes import load_model

    _save_torchscript(load_model(), path)


def _shapesnet_features(path: Path) -> None:
    import torch

    from graphbook.examples.shapes import load_model

    model = load_model()
    _save_torchscript(torch.nn.Sequential(model.features, model.pool, torch.nn.Flatten(1)), path)


def _save_torchscript(model: Any, path: Path) -> None:
    """Trace `model` on a batch of ShapesNet's input size and save it (torch says TorchScript
    is deprecated in favour of torch.export; its files still load everywhere)."""
    import warnings

    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", FutureWarning)
        traced = torch.jit.trace(model.eval(), torch.zeros(2, 3, 64, 64))  # type: ignore[no-untyped-call]
        traced.save(str(path))


def _tiny_hf_classifier(folder: Path) -> None:
    try:
        from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor
    except ImportError:
        raise ImportError(
            "the tiny Hugging Face model needs transformers: pip install 'graphbook[hf]'"
        ) from None
    import torch

    from graphbook.examples.shapes import CLASSES

    torch.manual_seed(0)
    labels = dict(enumerate(CLASSES))
    settings: dict[str, Any] = dict(
        image_size=32,
        patch_size=8,
        num_hidden_layers=1,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=len(labels),
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    config = ViTConfig(**settings)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    ViTForImageClassification(config).save_pretrained(folder)
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)


SAMPLES: dict[str, tuple[str, Maker]] = {
    "records": ("data/samples/records.jsonl", _records),
    "shapes": ("data/samples/shapes", _shapes),
    "photos": ("data/samples/photos", _photos),
    "table": ("data/samples/measurements.csv", _table),
    "shapesnet": ("models/shapesnet.pt", _shapesnet),
    "shapesnet-features": ("models/shapesnet-features.pt", _shapesnet_features),
    "tiny-hf-classifier": ("models/tiny-hf-classifier", _tiny_hf_classifier),
}
"""Sample name -> (where it goes, relative to the root; the function that writes it there)."""


def make_sample(name: str, root: Path) -> Path | None:
    """Write sample `name` under `root`; its path, or None when it was there already. A maker
    that fails leaves nothing half-written behind for the next try to mistake for done."""
    relative, maker = SAMPLES[name]
    path = root / relative
    if path.exists():
        return None
    try:
        maker(path)
    except BaseException:
        _remove(path)
        raise
    return path


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
