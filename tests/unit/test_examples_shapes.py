"""Tests for the synthetic shapes data set and the shipped ShapesNet weights."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest
import torch
from PIL import Image

from graphbook.examples.shapes import (
    CLASSES,
    HOLDOUT_SEED_OFFSET,
    WEIGHTS,
    ShapesNet,
    draw_shape,
    evaluate,
    label_of,
    load_model,
    make_dataset,
    preprocess,
)

UNSEEN_SEED = 20_240_611  # neither the training seed (0) nor 0 + HOLDOUT_SEED_OFFSET


def test_make_dataset_names_labels_and_balance(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "shapes"
    paths = make_dataset(folder, 12, seed=3)

    assert paths == sorted(folder.iterdir())
    assert [p.name[:5] for p in paths] == [f"{i:05d}" for i in range(12)]
    assert all(re.fullmatch(r"\d{5}_(circle|square|triangle)\.jpg", p.name) for p in paths)
    assert [label_of(p) for p in paths] == [CLASSES[i % 3] for i in range(12)]
    assert Counter(label_of(p) for p in paths) == {label: 4 for label in CLASSES}
    for path in paths:
        with Image.open(path) as image:
            assert image.format == "JPEG"
            assert image.mode == "RGB"
            assert image.size == (64, 64)


def test_make_dataset_custom_size(tmp_path: Path) -> None:
    (path,) = make_dataset(str(tmp_path), 1, size=96)
    with Image.open(path) as image:
        assert image.size == (96, 96)


def test_draw_shape_is_deterministic_given_rng() -> None:
    first = draw_shape("triangle", random.Random(5))
    second = draw_shape("triangle", random.Random(5))
    other = draw_shape("triangle", random.Random(6))
    assert first.tobytes() == second.tobytes()
    assert first.tobytes() != other.tobytes()


def test_draw_shape_rejects_unknown_label() -> None:
    with pytest.raises(ValueError, match="hexagon"):
        draw_shape("hexagon", random.Random(0))


def test_label_of_rejects_foreign_names() -> None:
    assert label_of("/any/dir/00042_square.jpg") == "square"
    with pytest.raises(ValueError, match=r"cat\.jpg"):
        label_of("cat.jpg")


def test_preprocess_resizes_to_unit_range_tensor() -> None:
    tensor = preprocess(Image.new("L", (100, 80), 255))
    assert tensor.shape == (3, 64, 64)
    assert tensor.dtype == torch.float32
    assert float(tensor.min()) == pytest.approx(1.0)


def test_shapes_net_output_shape() -> None:
    logits = ShapesNet().eval()(torch.rand(2, 3, 64, 64))
    assert logits.shape == (2, len(CLASSES))


def test_shipped_weights_are_small_and_accurate() -> None:
    assert WEIGHTS.is_file()
    assert WEIGHTS.stat().st_size < 1_000_000
    assert UNSEEN_SEED not in (0, HOLDOUT_SEED_OFFSET)

    model = load_model()

    assert isinstance(model, ShapesNet)
    assert not any(module.training for module in model.modules())
    assert evaluate(model, 300, UNSEEN_SEED) >= 0.9


def test_load_model_missing_weights_says_how_to_train(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"python -m graphbook\.examples\.shapes"):
        load_model(tmp_path / "missing.pt")
