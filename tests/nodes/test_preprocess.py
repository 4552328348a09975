"""Decoding and preprocessing images: draft-mode decoding matches a full decode, sizes, crops,
presets, the batch's normalisation, and what an unreadable image gets."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import transforms

from graphbook.nodes.common import NodeInputError
from graphbook.nodes.preprocess import PRESETS, ImageLoader, Unreadable, to_model_batch


def photo(path: Path, size: tuple[int, int] = (1024, 768)) -> Path:
    """A JPEG with smooth regions, texture and edges, like a photo to the codec."""
    rng = np.random.default_rng(3)
    width, height = size
    x = np.linspace(0, 1, width)[None, :, None]
    y = np.linspace(0, 1, height)[:, None, None]
    waves = 40 * np.sin(np.arange(width) / 9.0)[None, :, None] * np.cos(y * 12)
    pixels = 180 * x + 60 * y + waves + rng.normal(0, 4, (height, width, 3))
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(path, quality=90)
    return path


def torchvision_recipe(path: Path, size: int = 256, crop: int = 224) -> torch.Tensor:
    recipe = transforms.Compose(
        [transforms.Resize(size), transforms.CenterCrop(crop), transforms.PILToTensor()]
    )
    with Image.open(path) as image:
        out: torch.Tensor = recipe(image.convert("RGB"))
    return out


def test_draft_decoding_matches_the_full_decode(tmp_path: Path) -> None:
    path = photo(tmp_path / "camera.jpg")
    fast = ImageLoader()(str(path))
    assert isinstance(fast, torch.Tensor)
    assert fast.dtype == torch.uint8 and fast.shape == (3, 224, 224)
    full = torchvision_recipe(path)
    difference = (fast.float() - full.float()).abs()
    assert difference.mean() < 2.0, "within JPEG's own error, on a 0..255 scale"


@pytest.mark.parametrize(
    ("size", "crop", "shape"),
    [
        (256, 224, (3, 224, 224)),
        (64, 0, (3, 64, 85)),
        (0, 100, (3, 100, 100)),
        (0, 0, (3, 96, 128)),
    ],
)
def test_sizes_and_crops(tmp_path: Path, size: int, crop: int, shape: tuple[int, ...]) -> None:
    path = photo(tmp_path / "small.jpg", (128, 96))
    out = ImageLoader("imagenet", size, crop)(str(path))
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == shape
    if size and crop:
        assert (out.float() - torchvision_recipe(path, size, crop).float()).abs().mean() < 2.0


def test_presets_give_their_sizes_and_explicit_ones_win(tmp_path: Path) -> None:
    path = photo(tmp_path / "small.jpg", (128, 96))
    assert ImageLoader("clip")(str(path)).shape == (3, 224, 224)  # type: ignore[union-attr]
    assert ImageLoader("none")(str(path)).shape == (3, 96, 128)  # type: ignore[union-attr]
    assert ImageLoader("none", 48, 32)(str(path)).shape == (3, 32, 32)  # type: ignore[union-attr]
    with pytest.raises(NodeInputError, match="preset 'vgg' is not one of imagenet, clip, none"):
        ImageLoader("vgg")


def test_every_kind_of_item_decodes_the_same(tmp_path: Path) -> None:
    path = photo(tmp_path / "a.jpg", (80, 60))
    load = ImageLoader("imagenet", 48, 40)
    expected = load(str(path))
    assert isinstance(expected, torch.Tensor)
    record = {"type": "image", "value": str(path)}
    hf_image = {"bytes": path.read_bytes(), "path": None}
    with Image.open(path) as image:
        image.load()
        given = [record, hf_image, image, path]
        assert all(torch.equal(load(item), expected) for item in given)  # type: ignore[arg-type]


def test_grey_and_transparent_images_become_rgb(tmp_path: Path) -> None:
    grey, rgba = tmp_path / "grey.png", tmp_path / "rgba.png"
    Image.new("L", (50, 40), 128).save(grey)
    Image.new("RGBA", (50, 40), (10, 20, 30, 0)).save(rgba)
    load = ImageLoader("none", 0, 32)
    assert load(str(grey)).shape == (3, 32, 32)  # type: ignore[union-attr]
    assert load(str(rgba))[:, 0, 0].tolist() == [10, 20, 30]  # type: ignore[index]


def test_array_mode_hands_back_the_image_unresized(tmp_path: Path) -> None:
    path = photo(tmp_path / "a.jpg", (80, 60))
    out = ImageLoader(mode="array")(str(path))
    assert isinstance(out, np.ndarray) and out.shape == (60, 80, 3) and out.dtype == np.uint8


def test_the_loader_pickles_for_the_worker_pool() -> None:
    load = pickle.loads(pickle.dumps(ImageLoader("clip", 300, 256, "skip")))
    assert (load.size, load.crop, load.on_error, load.preset) == (300, 256, "skip", "clip")


def test_unreadable_images_name_the_file_and_the_fix(tmp_path: Path) -> None:
    good = photo(tmp_path / "good.jpg", (200, 150)).read_bytes()
    (tmp_path / "cut.jpg").write_bytes(good[: len(good) // 3])
    (tmp_path / "text.jpg").write_text("hello")
    load = ImageLoader()
    with pytest.raises(NodeInputError, match=r"cut\.jpg: truncated JPEG \(PIL says: .*on_error"):
        load(str(tmp_path / "cut.jpg"))
    with pytest.raises(NodeInputError, match=r"text\.jpg: not an image PIL can read"):
        load(str(tmp_path / "text.jpg"))
    with pytest.raises(NodeInputError, match=r"gone\.jpg: no such file"):
        load(str(tmp_path / "gone.jpg"))
    with pytest.raises(NodeInputError, match="expected an image"):
        load(42)
    skipped = ImageLoader(on_error="skip")(str(tmp_path / "cut.jpg"))
    assert isinstance(skipped, Unreadable) and skipped.file.endswith("cut.jpg")
    assert "truncated JPEG" in skipped.reason
    corrupt_bytes = {"bytes": io.BytesIO(good[:100]).getvalue(), "path": "hf://row/7"}
    with pytest.raises(NodeInputError, match="hf://row/7"):
        load(corrupt_bytes)


def test_the_batch_is_normalised_channels_last() -> None:
    images = [
        torch.full((3, 4, 4), 255, dtype=torch.uint8),
        torch.zeros(3, 4, 4, dtype=torch.uint8),
    ]
    batch = to_model_batch(images, "imagenet")
    assert batch.dtype == torch.float32 and batch.shape == (2, 3, 4, 4)
    assert batch.is_contiguous(memory_format=torch.channels_last)
    mean, std = PRESETS["imagenet"].mean, PRESETS["imagenet"].std
    expected_white = [(1 - m) / s for m, s in zip(mean, std, strict=True)]
    expected_black = [-m / s for m, s in zip(mean, std, strict=True)]
    assert batch[0, :, 0, 0].tolist() == pytest.approx(expected_white, abs=1e-5)
    assert batch[1, :, 3, 3].tolist() == pytest.approx(expected_black, abs=1e-5)
    plain = to_model_batch(images, "none", channels_last=False)
    assert plain.is_contiguous() and plain.max() == 1.0 and plain.min() == 0.0


def test_images_of_different_sizes_cannot_share_a_batch() -> None:
    images = [torch.zeros(3, 4, 4, dtype=torch.uint8), torch.zeros(3, 5, 4, dtype=torch.uint8)]
    with pytest.raises(
        NodeInputError, match=r"different sizes \(3x4x4, 3x5x4\).*set size and crop"
    ):
        to_model_batch(images)
