"""Decoding and preprocessing images in the worker pool: presets (ImageNet, CLIP, none), sizes,
crops; uint8 out, normalised in the batch.

A batch step that feeds an image model sets `self.load_fn = ImageLoader(...)`: each worker
decodes one image, resizes its short side to `size` and centre-crops `crop` (torchvision's
Resize(256) + CenterCrop(224)), and hands back a uint8 CHW tensor, a quarter of a float one
through shared memory. A JPEG much larger than its target is decoded at 1/2, 1/4 or 1/8 scale
by libjpeg itself (PIL's draft mode): a 1024x768 photo for a 256 resize decodes in a fraction
of the time, and only the crop's region is resampled. The parent stacks a batch and normalises
it in one pass (`to_model_batch`), on the model's device, in channels-last memory format.
"""

from __future__ import annotations

import io
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from graphbook.lifecycle import BatchStep
from graphbook.nodes.common import Data, NodeInputError, image_path, targets

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
    out_w, out_h = _resized_size(width, height, size)
    box_w, box_h = (min(crop, out_w), min(crop, out_h)) if crop > 0 else (out_w, out_h)
    left, top = round((out_w - box_w) / 2), round((out_h - box_h) / 2)
    if image.format == "JPEG" and scale < 0.5:
        image.draft("RGB", (math.ceil(width * scale), math.ceil(height * scale)))
    image = rgb(image)  # decodes (at the draft's scale)
    factor_x, factor_y = image.size[0] / out_w, image.size[1] / out_h
    source = (left * factor_x, top * factor_y, (left + box_w) * factor_x, (top + box_h) * factor_y)
    if (box_w, box_h) != image.size or source != (0, 0, box_w, box_h):
        image = image.resize(
            (box_w, box_h), Image.Resampling.BILINEAR, box=source, reducing_gap=3.0
        )
    return padded(image, crop) if crop > min(box_w, box_h) else image


def padded(image: Image.Image, crop: int) -> Image.Image:
    """An image smaller than the crop, centred on black, as CenterCrop pads it."""
    from PIL import Image

    canvas = Image.new("RGB", (crop, crop))
    canvas.paste(image, ((crop - image.size[0]) // 2, (crop - image.size[1]) // 2))
    return canvas


def _resized_size(width: int, height: int, size: int) -> tuple[int, int]:
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
    tensors: list[torch.Tensor],
    preset: str = "imagenet",
    device: torch.device | str = "cpu",
    channels_last: bool = True,
) -> torch.Tensor:
    """Stack uint8 (3, H, W) tensors and normalise them for a model: float32 on `device`,
    (x / 255 - mean) / std in one multiply-add, channels-last unless told otherwise."""
    import torch

    try:
        batch = torch.stack(tensors)
    except RuntimeError:
        sizes = sorted({"x".join(map(str, t.shape)) for t in tensors})
        raise NodeInputError(
            f"images of different sizes ({', '.join(sizes[:3])}) cannot share a batch; set "
            "size and crop (e.g. 256 and 224) so every image comes out the same size, or "
            "batch_size to 1"
        ) from None
    recipe = preset_of(preset)
    batch = batch.to(device, non_blocking=True)
    if channels_last and batch.dim() == 4:
        batch = batch.contiguous(memory_format=torch.channels_last)
    scale = torch.tensor([1 / (255 * s) for s in recipe.std], device=batch.device)
    shift = torch.tensor([-m / s for m, s in zip(recipe.mean, recipe.std, strict=True)])
    out = torch.empty_like(batch, dtype=torch.float32)  # keeps the memory format
    # x / 255 * (1 / std) - mean / std, read and written in one pass
    return torch.addcmul(
        shift.to(batch.device).view(1, 3, 1, 1), batch, scale.view(1, 3, 1, 1), out=out
    )


# -- the base of image model steps -------------------------------------------------------------
def is_pipeline(model: Any) -> bool:
    transformers = sys.modules.get("transformers")
    pipelines = getattr(transformers, "Pipeline", None) if transformers else None
    return pipelines is not None and isinstance(model, pipelines)


def device_of(model: Any) -> torch.device:
    """The device of the model's first parameter; the CPU for one without (ONNX, ...)."""
    import torch

    parameters = getattr(model, "parameters", None)
    if callable(parameters):
        for parameter in parameters():
            return parameter.device  # type: ignore[no-any-return]
    return torch.device("cpu")


IMAGE_STEP_PARAMETERS: dict[str, Any] = {
    "model": {"type": "resource", "required": True, "description": "a model resource"},
    "batch_size": {"type": "int", "default": 32, "description": "images per forward pass"},
    "item_key": {
        "type": "string",
        "default": "image",
        "description": "the field holding the image (or a list of image records)",
    },
    "preset": {
        "type": "string",
        "default": "imagenet",
        "description": "normalisation: imagenet, clip or none (0..1)",
    },
    "size": {"type": "int", "default": 256, "description": "short side after resizing (0: keep)"},
    "crop": {"type": "int", "default": 224, "description": "centre crop side (0: none)"},
    "on_error": {
        "type": "string",
        "default": "fail",
        "description": 'an unreadable image: "fail" (that dict fails) or "skip" (dropped, counted)',
    },
}


class ImageBatchStep(BatchStep):
    """What the image model steps share: decoding in the workers, a batch on the model's
    device, results on each dict (or each record of a list), unreadable images skipped."""

    Parameters: ClassVar[dict[str, Any]] = IMAGE_STEP_PARAMETERS
    Category: ClassVar[str] = "Models"
    model: Any
    preset: str = "imagenet"

    def __init__(
        self,
        model: Any = None,
        batch_size: int = 32,
        item_key: str = "image",
        preset: str = "imagenet",
        size: int = 256,
        crop: int = 224,
        on_error: str = "fail",
        **params: Any,
    ) -> None:
        super().__init__(batch_size=batch_size, item_key=item_key or "image", **params)
        if model is None:
            raise NodeInputError("no model: wire a model resource (TorchvisionModel, ...) to it")
        self.model = model
        self.preset = preset
        self.on_error = check_on_error(on_error)
        mode: Mode = "array" if is_pipeline(model) else "tensor"
        loader = ImageLoader(preset, int(size), int(crop), self.on_error, mode)
        self.load_fn = loader  # type: ignore[misc]  # the engine reads the instance's
        self.skipped_ids: set[int] = set()
        self.skipped = 0
        self.first_skip = ""

    def on_start(self) -> None:
        self.skipped, self.first_skip = 0, ""
        self.skipped_ids.clear()

    def on_end(self) -> None:
        if self.skipped:
            self.log(f"skipped {self.skipped} unreadable images: first {self.first_skip}")

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        kept = [
            (o, i, d) for o, i, d in zip(outputs, items, data, strict=True) if self.keep(o, i, d)
        ]
        if not kept:
            return
        results = self.results([o for o, _, _ in kept])
        for (_, item, owner), result in zip(kept, results, strict=True):
            self.target(item, owner).update(result)

    def results(self, images: list[Any]) -> list[Data]:
        """One dict of fields for each image of the batch."""
        raise NotImplementedError

    def keep(self, output: Any, item: Any, owner: Data) -> bool:
        if not isinstance(output, Unreadable):
            return True
        if not self.skipped:
            self.first_skip = f"{output.file}: {output.reason}"
            self.log(f"skipping unreadable image {self.first_skip}", "warning")
        self.skipped += 1
        self.skipped_ids.add(id(self.target(item, owner)))
        return False

    def target(self, item: Any, owner: Data) -> Data:
        """The dict an image's results go on: the dict itself, or the image's record."""
        key = str(self.item_key)
        if isinstance(owner.get(key), list | tuple):
            targets(owner, key, 0)  # refuses a list of plain paths, saying why
            return item  # type: ignore[no-any-return]
        return owner

    def route(self, data: Data) -> str | None:
        if not self.skipped_ids:
            return self.Outputs[0]
        if id(data) in self.skipped_ids:
            self.skipped_ids.discard(id(data))
            return None
        value = data.get(str(self.item_key))
        if isinstance(value, list) and any(id(r) in self.skipped_ids for r in value):
            kept = [r for r in value if id(r) not in self.skipped_ids]
            self.skipped_ids.difference_update(id(r) for r in value)
            data[str(self.item_key)] = kept
            if not kept:
                return None
        return self.Outputs[0]

    def forward(self, model: Any, images: list[Any]) -> Any:
        """The model's output on a batch of decoded images, under inference mode."""
        import torch

        device = device_of(model)
        batch = to_model_batch(images, self.preset, device, channels_last=device.type != "mps")
        with torch.inference_mode():
            return model(batch)
