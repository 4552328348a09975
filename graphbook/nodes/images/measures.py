"""Numbers per image: ImageStats (size, brightness, contrast, blur, file size) and
ImageHash (a 64-bit difference hash, the one DeduplicateImages uses)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, ClassVar

from graphbook.lifecycle import BatchStep
from graphbook.nodes.common import (
    Data,
    image_path,
)
from graphbook.nodes.images.codec import full_size, open_image
from graphbook.nodes.images.items import ImageItems, PoolWork, common_parameters

WORK_SIDE = 256
"""ImageStats measures blur and light on a grey copy whose short side is this long."""


@dataclass(frozen=True)
class Measure(PoolWork):
    """ImageStats' work: an image's numbers."""

    def run(self, item: Any) -> dict[str, Any]:
        import numpy as np
        from PIL import Image as PILImage

        image = open_image(item, short_side=WORK_SIDE, mode="L")
        width, height = full_size(image)
        grey = image.convert("L")
        scale = WORK_SIDE / max(1, min(grey.size))
        working = (max(1, round(grey.width * scale)), max(1, round(grey.height * scale)))
        grey = grey.resize(working, PILImage.Resampling.BILINEAR)
        pixels = np.asarray(grey, dtype=np.float32)
        stats = {
            "width": width,
            "height": height,
            "aspect": round(width / height, 4) if height else 0.0,
            "brightness": round(float(pixels.mean()) / 255, 4),
            "contrast": round(float(pixels.std()) / 255, 4),
            "blur": round(laplacian_variance(pixels), 2),
        }
        if not isinstance(item, PILImage.Image):
            stats["file_size"] = os.stat(image_path(item)).st_size
        return stats


def laplacian_variance(grey: Any) -> float:
    """The variance of the 4-neighbour Laplacian of a grey image (0..255 values)."""
    if grey.shape[0] < 3 or grey.shape[1] < 3:
        return 0.0
    centre = grey[1:-1, 1:-1]
    laplacian = grey[:-2, 1:-1] + grey[2:, 1:-1] + grey[1:-1, :-2] + grey[1:-1, 2:] - 4 * centre
    return float(laplacian.var())


@dataclass(frozen=True)
class DifferenceHash(PoolWork):
    """ImageHash's work: the 64-bit difference hash of an image, as 16 hex digits: the same
    hash DeduplicateImages writes (graphbook.nodes.curation.near_duplicates.dhash), so the
    two agree."""

    def run(self, item: Any) -> str:
        from graphbook.nodes.curation.near_duplicates import dhash, small_grey

        return f"{dhash(small_grey(open_image(item, short_side=64, mode='L'))):016x}"


class ImageStats(ImageItems, BatchStep):
    """Measures each image and adds its numbers to the dict (or to each image's record, when
    the dict holds a list of them):

    - `width`, `height`: pixels, upright (EXIF orientation applied); `aspect`: width / height
    - `brightness`: mean luma, 0 (black) to 1 (white)
    - `contrast`: standard deviation of luma, 0 (one flat colour) to 0.5
    - `blur`: variance of the Laplacian of a grey copy whose short side is 256 pixels (pixel
      values 0..255). Low means blurry. As a guide, measured on photos blurred on purpose: a
      sharp, detailed photo gives 500 to 2000 or more; a visibly soft one about 100; a
      clearly out-of-focus one under 30; a flat image 0. Scenes with little detail (sky, a
      wall) score low even when sharp. Every image is measured at the same working size
      (small ones are enlarged to it, which lowers their value), so one threshold serves a
      whole folder: look at a few images, then keep the sharp ones with a filter downstream.
    - `file_size`: bytes, when the image is a file

    Example: `{"image": {"type": "image", "value": "photos/a.jpg"}}` becomes
    `{"image": ..., "width": 4032, "height": 3024, "aspect": 1.3333, "brightness": 0.4821,
    "contrast": 0.2213, "blur": 612.4, "file_size": 2811904}`; keep the sharp ones with a
    filter such as `blur > 100`.

    JPEGs are decoded at reduced size (1/2 to 1/8 scale, grey) in the worker pool, so a
    folder of camera photos is measured quickly. An unreadable image fails its dict, naming
    the file; with on_error "skip" it is dropped and counted."""

    Parameters: ClassVar[dict[str, Any]] = common_parameters()
    Category: ClassVar[str] = "Images"

    def __init__(
        self, item_key: str = "image", on_error: str = "fail", batch_size: int = 16
    ) -> None:
        super().__init__(batch_size=batch_size, item_key=item_key)
        self.setup(item_key, on_error)
        self.use(Measure(self.skip))

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        for stats, target in self.results(outputs, items, data):
            target.update(stats)


class ImageHash(ImageItems, BatchStep):
    """Adds `phash`: a 64-bit perceptual hash of each image (a difference hash of a 9x8
    grey copy) as 16 hex digits. Near-identical pictures (resized, recompressed, slightly
    brightened) get hashes a few bits apart; unrelated ones differ in about half of the 64.

    Example: `{"image": ...}` gets `"phash": "f0e4c8c8d8b0b070"`; count differing bits with
    `bin(int(a, 16) ^ int(b, 16)).count("1")`."""

    Parameters: ClassVar[dict[str, Any]] = common_parameters(batch_size=32)
    Category: ClassVar[str] = "Images"

    def __init__(
        self, item_key: str = "image", on_error: str = "fail", batch_size: int = 32
    ) -> None:
        super().__init__(batch_size=batch_size, item_key=item_key)
        self.setup(item_key, on_error)
        self.use(DifferenceHash(self.skip))

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        for digest, target in self.results(outputs, items, data):
            target["phash"] = digest
