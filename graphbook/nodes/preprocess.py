"""Decoding and preprocessing images in the worker pool: presets (ImageNet, CLIP, none), sizes,
crops; uint8 out, normalised in the batch.

A batch step that feeds an image model sets `self.load_fn = ImageLoader(...)`: each worker
decodes one image, resizes its short side to `size` and centre-crops `crop` (torchvision's
Resize(256) + CenterCrop(224)), and hands back a uint8 CHW tensor, a quarter of a float one
through shared memory. A JPEG much larger than its target is decoded at 1/2, 1/4 or 1/8 scale
by libjpeg itself (PIL's draft mode): a 1024x768 photo for a 256 resize decodes in a fraction
of the time, and only the crop's region is resampled. The parent stacks a batch and normalises
it in one pass (`to_model_batch`), on the model's device, in channels-last memory format.

With decode "gpu" the workers send a JPEG's bytes instead, and the batch step decodes it on the
GPU and cuts the same box from it (`crop_box`; graphbook/nodes/gpudecode.py).
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from graphbook.nodes.common import NodeInputError, image_path
from graphbook.stacking import stack

if TYPE_CHECKING:
    import numpy as np
    import torch
    from PIL import Image

OnError = Literal["fail", "skip"]
Mode = Literal["tensor", "array"]


@dataclass(frozen=True)
class Preset:
    """A model family's input recipe: the resize, the crop, and the mean and std (0..1) of
    each channel that the batch is normalised with."""

    size: int
    crop: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]


PRESETS: dict[str, Preset] = {
    "imagenet": Preset(256, 224, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    "clip": Preset(
        224, 224, (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)
    ),
    "none": Preset(0, 0, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
}
"""`imagenet`: torchvision's classifiers; `clip`: OpenAI CLIP's; `none`: pixels as 0..1, the
image's own size unless `size`/`crop` say otherwise."""


def preset_of(name: str) -> Preset:
    try:
        return PRESETS[str(name).strip().lower()]
    except KeyError:
        raise NodeInputError(
            f"preset {name!r} is not one of {', '.join(PRESETS)}; pick one (imagenet for "
            "torchvision's models, none for 0..1 pixels)"
        ) from None


@dataclass(frozen=True)
class Unreadable:
    """What a loader with on_error="skip" hands back for an image it could not decode."""

    file: str
    reason: str


class ImageLoader:
    """A batch step's load_fn: one image (a path, an image record, a PIL image, or a Hugging
    Face image `{"bytes": ..., "path": ...}`) in, a uint8 tensor (3, H, W) out.

    `size`: the short side after resizing (None: the preset's; 0: the image's own size);
    `crop`: the side of the centre square cut from it (None: the preset's; 0: no crop).
    Without a crop, images of different shapes cannot share a batch. `mode="array"` hands the
    decoded RGB image unresized as a uint8 (H, W, 3) numpy array instead (for processors that
    resize themselves, such as Hugging Face pipelines). `on_error="skip"` returns an
    `Unreadable` for an image that cannot be decoded, instead of raising.
    """

    def __init__(
        self,
        preset: str = "imagenet",
        size: int | None = None,
        crop: int | None = None,
        on_error: OnError = "fail",
        mode: Mode = "tensor",
    ) -> None:
        recipe = preset_of(preset)
        self.preset = str(preset).strip().lower()
        self.size = recipe.size if size is None or size < 0 else int(size)
        self.crop = recipe.crop if crop is None or crop < 0 else int(crop)
        self.on_error = check_on_error(on_error)
        self.mode = mode

    def __call__(self, item: Any) -> torch.Tensor | np.ndarray | Unreadable:
        try:
            return self.load(item)
        except NodeInputError as exc:
            if self.on_error == "skip":
                return Unreadable(describe(item), str(exc))
            raise

    def load(self, item: Any) -> torch.Tensor | np.ndarray:
        """The image as the mode asks; a clear error naming the file when it cannot be read."""
        import numpy as np

        try:
            with opened(item) as image:
                if self.mode == "array":
                    image.load()
                    return np.array(rgb(image))
                return to_tensor(resized(image, self.size, self.crop))
        except NodeInputError:
            raise
        except Exception as exc:
            raise NodeInputError(
                f"cannot decode {describe(item)}: {what_is_wrong(exc, item)}"
            ) from None


def check_on_error(value: str) -> OnError:
    if value == "fail":
        return "fail"
    if value == "skip":
        return "skip"
    raise NodeInputError(f'on_error is "fail" or "skip", not {value!r}')


def describe(item: Any) -> str:
    """The file an item names, for messages."""
    if isinstance(item, dict) and "bytes" in item and "type" not in item:
        return str(item.get("path") or "an image given as bytes")
    if type(item).__module__.startswith("PIL"):
        return "an in-memory image"
    try:
        return image_path(item)
    except NodeInputError:
        return repr(item)[:80]


@contextmanager
def opened(item: Any) -> Iterator[Image.Image]:
    """An item's image, opened (not yet decoded); closed at the end unless it was given as one."""
    from PIL import Image

    if isinstance(item, Image.Image):
        yield item
        return
    if isinstance(item, dict) and "bytes" in item and "type" not in item:  # a HF datasets image
        data = item.get("bytes")
        source: Any = io.BytesIO(data) if data is not None else str(item["path"])
    else:
        source = image_path(item)
    with Image.open(source) as image:
        yield image


def what_is_wrong(exc: BaseException, item: Any) -> str:
    """Why an image could not be decoded, in a person's words, with the fix."""
    fix = "remove or replace the file, or set on_error to skip"
    if isinstance(exc, FileNotFoundError):
        return "no such file; check the path (or set on_error to skip)"
    if isinstance(exc, IsADirectoryError):
        return "it is a folder, not an image"
    if type(exc).__name__ == "UnidentifiedImageError":
        return f"not an image PIL can read (PIL says: {exc}); {fix}"
    text = str(exc)
    if "truncated" in text.lower() or "broken data stream" in text:
        kind = _format_of(item)
        return f"truncated {kind} (PIL says: {text}); {fix}"
    return f"{type(exc).__name__}: {text}; {fix}"


def _format_of(item: Any) -> str:
    name = describe(item).lower()
    if name.endswith((".jpg", ".jpeg")):
        return "JPEG"
    return name.rsplit(".", 1)[-1].upper() + " file" if "." in name else "image"


def rgb(image: Image.Image) -> Image.Image:
    return image if image.mode == "RGB" else image.convert("RGB")


def resized(image: Image.Image, size: int, crop: int) -> Image.Image:
    """Resize the short side to `size` (0: keep), then centre-crop `crop` (0: none), as
    torchvision's Resize(size) + CenterCrop(crop) do on a PIL image, in one resampling of just
    the cropped region. A JPEG is first decoded at the smallest 1/2, 1/4 or 1/8 scale that is
    still at least as large as the target (draft mode)."""
    from PIL import Image

    width, height = image.size
    if size <= 0 and crop <= 0:
        image.load()
        return rgb(image)
    scale = size / min(width, height) if size > 0 else 1.0
    box = crop_box(width, height, size, crop)
    if image.format == "JPEG" and scale < 0.5:
        image.draft("RGB", (math.ceil(width * scale), math.ceil(height * scale)))
    image = rgb(image)  # decodes (at the draft's scale)
    factor_x, factor_y = image.size[0] / box.out_w, image.size[1] / box.out_h
    source = (
        box.left * factor_x,
        box.top * factor_y,
        (box.left + box.width) * factor_x,
        (box.top + box.height) * factor_y,
    )
    if (box.width, box.height) != image.size or source != (0, 0, box.width, box.height):
        image = image.resize(
            (box.width, box.height), Image.Resampling.BILINEAR, box=source, reducing_gap=3.0
        )
    return padded(image, crop) if box.pads else image


@dataclass(frozen=True)
class CropBox:
    """Where Resize(size) + CenterCrop(crop) take an image: the resized size (out_w, out_h),
    the crop's place in it (left, top, width, height), and whether the crop is larger than
    the image (`pads`: the crop is centred on black)."""

    out_w: int
    out_h: int
    left: int
    top: int
    width: int
    height: int
    crop: int

    @property
    def pads(self) -> bool:
        return self.crop > min(self.width, self.height)


def crop_box(width: int, height: int, size: int, crop: int) -> CropBox:
    """The crop box of an image `width` x `height` resized to `size` (0: kept) and centre-
    cropped to `crop` (0: none); the CPU loader and the GPU decoder both cut it."""
    out_w, out_h = resized_size(width, height, size)
    box_w, box_h = (min(crop, out_w), min(crop, out_h)) if crop > 0 else (out_w, out_h)
    left, top = round((out_w - box_w) / 2), round((out_h - box_h) / 2)
    return CropBox(out_w, out_h, left, top, box_w, box_h, crop)


def padded(image: Image.Image, crop: int) -> Image.Image:
    """An image smaller than the crop, centred on black, as CenterCrop pads it."""
    from PIL import Image

    canvas = Image.new("RGB", (crop, crop))
    canvas.paste(image, ((crop - image.size[0]) // 2, (crop - image.size[1]) // 2))
    return canvas


def resized_size(width: int, height: int, size: int) -> tuple[int, int]:
    """torchvision's Resize(size) output: the short side `size`, the long side truncated."""
    if size <= 0:
        return width, height
    if width <= height:
        return size, int(size * height / width)
    return int(size * width / height), size


def to_tensor(image: Image.Image) -> torch.Tensor:
    """A uint8 (3, H, W) tensor of an RGB image."""
    import numpy as np
    import torch

    return torch.from_numpy(np.ascontiguousarray(np.asarray(image).transpose(2, 0, 1)))


def to_model_batch(
    tensors: Sequence[torch.Tensor],
    preset: str = "imagenet",
    device: torch.device | str = "cpu",
    channels_last: bool = True,
) -> torch.Tensor:
    """Stack uint8 (3, H, W) tensors and normalise them for a model: float32 on `device`,
    (x / 255 - mean) / std in one multiply-add, channels-last unless told otherwise.

    The tensors are stacked with `graphbook.stacking.stack`: a batch the load workers laid out
    as one slab (a `Loaded` list with its stacked form) is read where it lies, not copied."""
    import torch

    try:
        batch = stack(tensors)
    except RuntimeError:
        sizes = sorted({"x".join(map(str, t.shape)) for t in tensors})
        raise NodeInputError(
            f"images of different sizes ({', '.join(sizes[:3])}) cannot share a batch; set "
            "size and crop (e.g. 256 and 224) so every image comes out the same size, or "
            "batch_size to 1"
        ) from None
    recipe = preset_of(preset)
    batch = batch.to(device, non_blocking=True)
    scale = torch.tensor([1 / (255 * s) for s in recipe.std], device=batch.device)
    shift = torch.tensor([-m / s for m, s in zip(recipe.mean, recipe.std, strict=True)])
    out = torch.empty(batch.shape, dtype=torch.float32, device=batch.device)
    if channels_last and batch.dim() == 4:
        out = out.contiguous(memory_format=torch.channels_last)
    # x / 255 * (1 / std) - mean / std, read and written in one pass, straight into the
    # memory format asked for (reordering the uint8 batch first is one more pass over it)
    return torch.addcmul(
        shift.to(batch.device).view(1, 3, 1, 1), batch, scale.view(1, 3, 1, 1), out=out
    )
