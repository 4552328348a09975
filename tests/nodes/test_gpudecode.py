"""JPEG decoding on the GPU, its parts run here on the CPU: which files go to the GPU as bytes,
the workers' loader, a batch decoded and cut as the CPU loader cuts it, a JPEG the decoder
refuses decoded on the CPU instead, and where decode "auto" decodes. The CUDA paths run where
CUDA is."""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image

from graphbook.nodes.common import NodeInputError
from graphbook.nodes.gpudecode import (
    DeviceFacts,
    JpegBytes,
    choose_decode,
    cut,
    decode_batch,
    decode_jpegs,
    gpu_decodable,
    hardware_jpeg,
    jpeg_frame,
)
from graphbook.nodes.preprocess import ImageLoader, Unreadable
from tests.nodes.test_models import classify, error_of, jpegs, saved_state, torchvision_model
from tests.nodes.test_preprocess import photo

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def encoded(image: Image.Image, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, format=options.pop("format", "JPEG"), **options)
    return out.getvalue()


@pytest.fixture(scope="module")
def picture() -> Image.Image:
    rng = np.random.default_rng(0)
    return Image.fromarray(rng.integers(0, 256, (60, 80, 3), dtype=np.uint8))


# -- which files go to the GPU -----------------------------------------------------------------
def test_the_frame_header_of_a_jpeg(picture: Image.Image) -> None:
    frame = jpeg_frame(encoded(picture, quality=90))
    assert frame is not None
    assert (frame.marker, frame.precision, frame.width, frame.height) == (0xC0, 8, 80, 60)
    assert frame.components == 3 and frame.adobe_transform is None
    assert jpeg_frame(encoded(picture, format="PNG")) is None
    assert jpeg_frame(b"\xff\xd8\xff") is None


def test_only_whole_baseline_colour_jpegs_go_to_the_gpu(picture: Image.Image) -> None:
    baseline = encoded(picture, quality=90)
    assert gpu_decodable(baseline)
    assert gpu_decodable(baseline + b"\x00" * 10), "padding after the end marker is fine"
    assert not gpu_decodable(baseline[: len(baseline) // 2]), "cut short"
    assert not gpu_decodable(encoded(picture, progressive=True))
    assert not gpu_decodable(encoded(picture.convert("L")))
    assert not gpu_decodable(encoded(picture.convert("CMYK")))
    assert not gpu_decodable(encoded(picture, format="PNG"))


def test_the_workers_read_jpegs_and_decode_the_rest(tmp_path: Path, picture: Image.Image) -> None:
    loader = ImageLoader("imagenet", 48, 40, "skip")
    load = pickle.loads(pickle.dumps(JpegBytes(loader)))  # as the worker pool ships it
    jpeg, png, grey = tmp_path / "a.jpg", tmp_path / "b.png", tmp_path / "c.jpg"
    jpeg.write_bytes(encoded(picture, quality=90))
    picture.save(png)
    picture.convert("L").save(grey)
    sent = load(str(jpeg))
    assert sent.dim() == 1 and sent.dtype == torch.uint8
    assert sent.numpy().tobytes() == jpeg.read_bytes()
    for path, item in [(png, {"type": "image", "value": str(png)}), (grey, str(grey))]:
        expected = loader(str(path))
        assert isinstance(expected, torch.Tensor) and torch.equal(load(item), expected)
    hf_image = {"bytes": jpeg.read_bytes(), "path": None}
    assert load(hf_image).dim() == 1
    missing = load(str(tmp_path / "gone.jpg"))
    assert isinstance(missing, Unreadable) and "no such file" in missing.reason
    with pytest.raises(NodeInputError, match=r"gone\.jpg: no such file"):
        JpegBytes(ImageLoader())(str(tmp_path / "gone.jpg"))


# -- the batch ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shape", "size", "crop"),
    [
        ((1024, 768), 256, 224),
        ((640, 480), 224, 224),
        ((128, 96), 64, 0),
        ((128, 96), 0, 100),
        ((128, 96), 0, 0),
        ((100, 300), 64, 80),
    ],
)
def test_decoded_and_cut_as_the_cpu_loader_cuts(
    tmp_path: Path, shape: tuple[int, int], size: int, crop: int
) -> None:
    path = photo(tmp_path / "photo.jpg", shape)
    expected = ImageLoader("imagenet", size, crop)(str(path))
    assert isinstance(expected, torch.Tensor)
    decoded = decode_jpegs([torch.from_numpy(np.fromfile(path, dtype=np.uint8))], "cpu")[0]
    assert decoded is not None
    got = cut(decoded[None], size, crop)[0]
    assert got.shape == expected.shape and got.dtype == torch.uint8
    assert (got.float() - expected.float()).abs().mean() < 1.0, "a 0..255 scale"


def test_a_batch_of_bytes_and_decoded_images(tmp_path: Path, picture: Image.Image) -> None:
    loader = ImageLoader("imagenet", 48, 40, "skip")
    good = tmp_path / "good.jpg"
    good.write_bytes(encoded(picture, quality=90))
    refused = tmp_path / "refused.jpg"
    refused.write_bytes(b"\xff\xd8\xff" + bytes(range(256)) * 4)
    outputs = [
        torch.from_numpy(np.fromfile(good, dtype=np.uint8)),
        loader(str(good)),  # decoded in a worker
        Unreadable("gone.jpg", "no such file"),
        torch.from_numpy(np.fromfile(refused, dtype=np.uint8)),
    ]
    items = [str(good), str(good), "gone.jpg", str(refused)]
    batch = decode_batch(outputs, items, loader, "cpu")
    first, second, skipped, bad = batch.images
    assert first.shape == second.shape == (3, 40, 40)
    assert (first.float() - second.float()).abs().mean() < 1.0
    assert skipped is outputs[2]
    assert isinstance(bad, Unreadable) and bad.file.endswith("refused.jpg")
    assert batch.cpu_fallbacks == 1
    with pytest.raises(NodeInputError, match=r"refused\.jpg"):
        decode_batch(outputs[3:], items[3:], ImageLoader("imagenet", 48, 40), "cpu")


# -- where decode auto decodes -----------------------------------------------------------------
H200 = DeviceFacts("cuda", "NVIDIA H200", True, (9, 0))
T4 = DeviceFacts("cuda", "Tesla T4", True, (7, 5))
CPU = DeviceFacts("cpu", "cpu", False)


def test_auto_decodes_on_the_cpu_without_cuda() -> None:
    assert choose_decode("auto", CPU) == ("cpu", "the model is on cpu")
    assert choose_decode("auto", DeviceFacts("cpu", "cpu", True))[0] == "cpu"


def test_auto_decodes_on_gpus_with_hardware_jpeg_decoders() -> None:
    where, why = choose_decode("auto", H200)
    assert where == "gpu" and "NVIDIA H200 decodes baseline JPEGs on its hardware" in why
    where, why = choose_decode("AUTO", T4)
    assert where == "cpu" and "Tesla T4 has no hardware JPEG decoder" in why
    assert choose_decode("auto", H200, arrays=True)[0] == "cpu", "a pipeline takes arrays"
    assert [hardware_jpeg(c) for c in [(8, 0), (9, 0), (10, 0), (8, 6), (7, 5), None]] == [
        True, True, True, False, False, False,
    ]  # fmt: skip


def test_decode_asked_for() -> None:
    assert choose_decode("cpu", H200) == ("cpu", "decode is cpu")
    assert choose_decode("gpu", T4) == ("gpu", "decode is gpu")
    with pytest.raises(NodeInputError, match="decode is gpu, but CUDA is not available here"):
        choose_decode("gpu", CPU)
    with pytest.raises(NodeInputError, match="decode is gpu, but the model is on cpu"):
        choose_decode("gpu", DeviceFacts("cpu", "cpu", True))
    with pytest.raises(NodeInputError, match="a Hugging Face pipeline takes decoded images"):
        choose_decode("gpu", H200, arrays=True)
    choices = 'decode is "auto", "cpu" or "gpu", not \'nvjpeg\''
    with pytest.raises(NodeInputError, match=choices):
        choose_decode("nvjpeg", H200)


def test_a_step_asked_to_decode_on_a_gpu_it_has_not(tmp_path: Path) -> None:
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    paths = jpegs(tmp_path / "images", 2)
    if not torch.cuda.is_available():
        message = error_of(classify(paths, model, decode="gpu"))
        assert "decode is gpu, but CUDA is not available here" in message
    result = classify(paths, model, decode="auto")
    assert result.ok, result.errors


# -- on CUDA -----------------------------------------------------------------------------------
@CUDA
def test_on_cuda_a_batch_decodes_as_on_the_cpu(tmp_path: Path) -> None:
    loader = ImageLoader("imagenet", 256, 224)
    paths = [photo(tmp_path / f"{n}.jpg", (1024, 768)) for n in range(3)]
    outputs = [JpegBytes(loader)(str(p)) for p in paths]
    on_gpu = decode_batch(outputs, [str(p) for p in paths], loader, "cuda").images
    for path, image in zip(paths, on_gpu, strict=True):
        assert image.device.type == "cuda" and image.shape == (3, 224, 224)
        expected = loader(str(path))
        assert isinstance(expected, torch.Tensor)
        assert (image.cpu().float() - expected.float()).abs().mean() < 2.0


@CUDA
@pytest.mark.parametrize("workers", [0, 2])
def test_on_cuda_decode_gpu_classifies_as_decode_cpu(tmp_path: Path, workers: int) -> None:
    model = torchvision_model(saved_state(tmp_path), num_classes=3, device="cuda")
    paths = jpegs(tmp_path / "images", 6, (160, 120))
    on_cpu = classify(paths, model, workers, decode="cpu", labels="a,b,c")
    on_gpu = classify(paths, model, workers, decode="gpu", labels="a,b,c")
    assert on_cpu.ok and on_gpu.ok, (on_cpu.errors, on_gpu.errors)
    for a, b in zip(on_cpu.output("step"), on_gpu.output("step"), strict=True):
        assert b["confidence"] == pytest.approx(a["confidence"], abs=5e-2)
