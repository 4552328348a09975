"""JPEG decoding on the GPU: the load workers read each file's bytes, the batch step decodes the
batch with nvJPEG (`torchvision.io.decode_jpeg(list, device="cuda")`, one call a batch) and
resizes and centre-crops it there with the CPU loader's geometry (preprocess.crop_box).

What goes to the GPU is what nvJPEG decodes in its batched call (on A100/H100-class GPUs, on
their hardware JPEG engines): whole baseline JPEGs of 8-bit YCbCr. Anything else (PNG, a
progressive or grey JPEG, CMYK, a file cut short) the worker decodes on the CPU as with decode
"cpu", so its errors read the same; a JPEG nvJPEG still refuses is decoded on the CPU in the
step, one image (`DecodedBatch.cpu_fallbacks`).

Where decode "auto" decodes is `choose_decode`, a rule rather than a measurement (the choice is
fixed before the workers start, and no machine here has a GPU to time): on the CPU when the model
is not on CUDA; on a CUDA GPU with hardware JPEG decoders (`hardware_jpeg`), on the GPU: the
engines decode baseline JPEGs in batches beside the model's compute and the workers only read
files; on other GPUs, in the workers: there nvJPEG decodes one image at a time with part of the
work (Huffman decoding) on the thread that feeds the GPU, where N workers decode at once.
`python -m bench.gpu` is where to check the rule on a GPU machine.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from graphbook.nodes.common import NodeInputError, image_path
from graphbook.nodes.preprocess import ImageLoader, crop_box, describe

if TYPE_CHECKING:
    import numpy as np
    import torch

DecodeAt = Literal["cpu", "gpu"]
DECODES = ("auto", "cpu", "gpu")
HARDWARE_JPEG = {(8, 0), (9, 0), (10, 0)}
"""CUDA compute capabilities of the GPUs with hardware JPEG decoders (NVJPG engines) that
nvJPEG's hardware backend drives: A100 and A30 (8.0), H100, H200 and GH200 (9.0), B200 and
GB200 (10.0)."""
BASELINE = (0xC0, 0xC1)
"""Start-of-frame markers of sequential Huffman JPEGs (baseline, extended): what nvJPEG batches."""
FRAMES = {*range(0xC0, 0xD0)} - {0xC4, 0xC8, 0xCC}
"""Every start-of-frame marker (0xC4, 0xC8 and 0xCC are other segments in that range)."""


# -- where to decode ---------------------------------------------------------------------------
@dataclass(frozen=True)
class DeviceFacts:
    """What choosing where to decode needs to know of the model's device."""

    type: str
    name: str = ""
    cuda_available: bool = False
    capability: tuple[int, int] | None = None


def device_facts(device: torch.device) -> DeviceFacts:
    import torch

    available = torch.cuda.is_available()
    if device.type != "cuda" or not available:
        return DeviceFacts(device.type, str(device), available)
    major, minor = torch.cuda.get_device_capability(device)
    return DeviceFacts("cuda", torch.cuda.get_device_name(device), True, (major, minor))


def hardware_jpeg(capability: tuple[int, int] | None) -> bool:
    """Whether a GPU of this compute capability decodes JPEGs on hardware engines."""
    return capability in HARDWARE_JPEG


def choose_decode(asked: Any, device: DeviceFacts, arrays: bool = False) -> tuple[DecodeAt, str]:
    """Where a batch's JPEGs are decoded, "cpu" (the load workers) or "gpu", and why, for the
    node's log. `asked` is the decode parameter; `arrays`: the model takes decoded images as
    arrays (a Hugging Face pipeline), never GPU tensors. A "gpu" that cannot be is refused."""
    choice = str(asked or "").strip().lower()
    if choice not in DECODES:
        raise NodeInputError(f'decode is "auto", "cpu" or "gpu", not {asked!r}')
    if choice == "gpu":
        refuse_gpu(device, arrays)
        return "gpu", "decode is gpu"
    if choice == "cpu":
        return "cpu", "decode is cpu"
    if device.type != "cuda":
        return "cpu", f"the model is on {device.name or device.type}"
    if arrays:
        return "cpu", "a Hugging Face pipeline takes decoded images"
    if hardware_jpeg(device.capability):
        return "gpu", (
            f"{device.name} decodes baseline JPEGs on its hardware JPEG engines, in batches, "
            "beside the model; the load workers only read the files (decode cpu to decode "
            "there instead)"
        )
    return "cpu", (
        f"{device.name} has no hardware JPEG decoder: nvJPEG would decode one image at a time "
        "on the thread that feeds the GPU, where the load workers decode in parallel (decode "
        "gpu to try it)"
    )


def refuse_gpu(device: DeviceFacts, arrays: bool) -> None:
    if not device.cuda_available:
        raise NodeInputError(
            "decode is gpu, but CUDA is not available here (torch.cuda.is_available() is "
            "False); set decode to cpu or auto"
        )
    if device.type != "cuda":
        raise NodeInputError(
            f"decode is gpu, but the model is on {device.name or device.type}: GPU decoding "
            "feeds a model on a CUDA device; set the model's device to cuda, or decode to auto"
        )
    if arrays:
        raise NodeInputError(
            "decode is gpu, but a Hugging Face pipeline takes decoded images, not GPU tensors; "
            "set decode to auto or cpu"
        )


# -- in the load workers -----------------------------------------------------------------------
@dataclass(frozen=True)
class Frame:
    """A JPEG's start of frame: its kind (marker), bits per sample, size and components, and
    the colour transform an Adobe segment declares (0: the components are RGB or CMYK as they
    are, not YCbCr), if any."""

    marker: int
    precision: int
    width: int
    height: int
    components: int
    adobe_transform: int | None = None


def jpeg_frame(data: bytes | memoryview) -> Frame | None:
    """The JPEG's frame header, read from its segments; None for data that is not a JPEG, or
    whose frame header cannot be found before its image data."""
    view = memoryview(data).cast("B")
    if bytes(view[:3]) != b"\xff\xd8\xff":
        return None
    position, adobe = 2, None
    while position + 4 <= len(view):
        if view[position] != 0xFF:
            return None
        marker = view[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:  # markers without a segment
            position += 2
            continue
        length = (view[position + 2] << 8) | view[position + 3]
        body = view[position + 4 : position + 2 + length]
        if marker in FRAMES and len(body) >= 6:
            height, width = (body[1] << 8) | body[2], (body[3] << 8) | body[4]
            return Frame(marker, body[0], width, height, body[5], adobe)
        if marker == 0xEE and bytes(body[:5]) == b"Adobe" and len(body) >= 12:
            adobe = body[11]
        if marker in (0xDA, 0xD9):  # image data (or the end) before any frame header
            return None
        position += 2 + length
    return None


def gpu_decodable(data: bytes | memoryview) -> bool:
    """Whether nvJPEG's batched decoding takes this JPEG as it is: baseline (or extended)
    sequential, 8 bits, three components in YCbCr, and whole: ending in its end-of-image
    marker (nvJPEG may decode a file cut short without a word, where the CPU says so)."""
    frame = jpeg_frame(data)
    if frame is None or frame.marker not in BASELINE:
        return False
    if frame.precision != 8 or frame.components != 3 or frame.adobe_transform == 0:
        return False
    tail = bytes(memoryview(data).cast("B")[-64:]).rstrip(b"\x00\r\n ")
    return tail.endswith(b"\xff\xd9")


def encoded(item: Any) -> np.ndarray[Any, Any] | None:
    """The bytes of the image file an item names (a path, an image record, a Hugging Face
    image's bytes), as uint8; None when they cannot be read (the CPU loader says why) or the
    item is an image already decoded."""
    import numpy as np

    if isinstance(item, dict) and "bytes" in item and "type" not in item:
        data = item.get("bytes")
        if data is not None:
            return np.frombuffer(bytearray(data), dtype=np.uint8)
    if type(item).__module__.startswith("PIL"):
        return None
    try:
        return np.fromfile(image_path(item), dtype=np.uint8)
    except (OSError, NodeInputError):
        return None


@dataclass(frozen=True)
class JpegBytes:
    """decode "gpu"'s load_fn, run in the worker pool: a JPEG the GPU decodes as its bytes (a
    1-D uint8 tensor), anything else decoded here by `loader` (a uint8 (3, H, W) tensor, or
    its Unreadable, or its error)."""

    loader: ImageLoader

    def __call__(self, item: Any) -> Any:
        import torch

        data = encoded(item)
        if data is not None and gpu_decodable(data.data):
            return torch.from_numpy(data)
        return self.loader(item)


# -- in the batch step -------------------------------------------------------------------------
@dataclass(frozen=True)
class DecodedBatch:
    """A batch's images on the device (Unreadable where the loader skipped one), and how many
    JPEGs nvJPEG refused that the CPU decoded instead."""

    images: list[Any]
    cpu_fallbacks: int = 0


def decode_batch(
    outputs: Sequence[Any], items: Sequence[Any], loader: ImageLoader, device: Any
) -> DecodedBatch:
    """The load outputs of a batch as uint8 (3, H, W) tensors on `device`: JPEG bytes (1-D
    tensors) decoded there in one call and cut as `loader` cuts (its size and crop), images the
    workers decoded copied there; a JPEG the decoder refuses is decoded by `loader` here
    (an Unreadable when it skips, its error when it fails: that fails the batch's dicts)."""
    images = list(outputs)
    bytes_at = [n for n, output in enumerate(outputs) if is_encoded(output)]
    fallbacks = 0
    if bytes_at:
        decoded = decode_jpegs([outputs[n] for n in bytes_at], device)
        good = [n for n, image in zip(bytes_at, decoded, strict=True) if image is not None]
        cut = cut_all([image for image in decoded if image is not None], loader.size, loader.crop)
        images_at = dict(zip(good, cut, strict=True))
        for n in bytes_at:
            if n in images_at:
                images[n] = images_at[n]
            else:
                fallbacks += 1
                source = {"bytes": outputs[n].numpy().tobytes(), "path": describe(items[n])}
                images[n] = loader(source)
    return DecodedBatch([on_device(image, device) for image in images], fallbacks)


def is_encoded(output: Any) -> bool:
    import torch

    return isinstance(output, torch.Tensor) and output.dim() == 1


def on_device(image: Any, device: Any) -> Any:
    import torch

    if isinstance(image, torch.Tensor):
        return image.to(device, non_blocking=True)
    return image


def decode_jpegs(encoded: list[torch.Tensor], device: Any) -> list[torch.Tensor | None]:
    """Each JPEG decoded on `device` as RGB in one call; when that call fails (the decoder
    gives no partial results) one by one, None for each it refuses."""
    from torchvision.io import ImageReadMode, decode_jpeg

    with warnings.catch_warnings():  # torchvision 0.29 deprecates its image codecs
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return list(decode_jpeg(encoded, mode=ImageReadMode.RGB, device=device))
        except RuntimeError:
            found: list[torch.Tensor | None] = []
            for data in encoded:
                try:
                    found.append(decode_jpeg(data, mode=ImageReadMode.RGB, device=device))
                except RuntimeError:
                    found.append(None)
            return found


def cut_all(images: list[torch.Tensor], size: int, crop: int) -> list[torch.Tensor]:
    """Each uint8 (3, H, W) image resized and centre-cropped (`cut`), those of one shape
    together."""
    import torch

    by_shape: dict[tuple[int, ...], list[int]] = {}
    for n, image in enumerate(images):
        by_shape.setdefault(tuple(image.shape), []).append(n)
    cut_images: list[Any] = [None] * len(images)
    for indices in by_shape.values():
        batch = cut(torch.stack([images[n] for n in indices]), size, crop)
        for n, image in zip(indices, batch, strict=True):
            cut_images[n] = image
    return cut_images


def cut(batch: torch.Tensor, size: int, crop: int) -> torch.Tensor:
    """uint8 images (N, 3, H, W) resized so the short side is `size` (0: kept; bilinear with
    antialiasing, as PIL resamples) and centre-cropped to `crop` (0: none; a crop larger than
    the image centres it on black): the CPU loader's `resized`, on tensors where they are."""
    import torch
    import torch.nn.functional as functional

    height, width = batch.shape[-2:]
    box = crop_box(int(width), int(height), size, crop)
    if (box.out_w, box.out_h) != (width, height):
        pixels = functional.interpolate(
            batch.float(), size=(box.out_h, box.out_w), mode="bilinear", antialias=True
        )
        batch = pixels.round_().clamp_(0, 255).to(torch.uint8)
    batch = batch[..., box.top : box.top + box.height, box.left : box.left + box.width]
    if box.pads:
        pad_w, pad_h = max(0, crop - box.width), max(0, crop - box.height)
        padding = (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2)
        batch = functional.pad(batch, padding)
    return batch
