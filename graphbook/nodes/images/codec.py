"""Image files: opened (decoded upright, JPEGs at reduced size when a small picture is
all a node needs), saved (flattened for JPEG), their format by extension, safe names."""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphbook.nodes.common import (
    NodeInputError,
    image_path,
)

if TYPE_CHECKING:
    from PIL.Image import Image


FORMATS = {"jpg": "JPEG", "jpeg": "JPEG", "png": "PNG", "webp": "WEBP"}
"""File formats a node may be asked to write, by the extension it gives the file."""


class UnreadableImage(NodeInputError):
    """An image file that does not exist, or cannot be decoded (truncated, damaged, not an
    image); `on_error` "skip" passes over it."""


def open_image(source: Any, long_side: int = 0, short_side: int = 0, mode: str = "") -> Image:
    """An image from a path, an image record or a PIL image, decoded and turned upright (its
    EXIF orientation applied).

    With `long_side` or `short_side`, a JPEG decodes at the smallest reduced scale whose long
    (short) side is still at least that long; other formats decode whole. With `mode` "L" a
    JPEG decodes straight to grey. The size before any reduction is `full_size(image)`."""
    from PIL import Image as PILImage
    from PIL import ImageOps

    if isinstance(source, PILImage.Image):
        return source
    path = image_path(source)
    try:
        with PILImage.open(path) as image:
            full = image.size
            wanted = reduced_size(full, long_side, short_side)
            if wanted is not None or mode:
                image.draft(mode or None, wanted)
            image.load()
            upright = ImageOps.exif_transpose(image)  # a new image, whether turned or not
    except FileNotFoundError:
        raise UnreadableImage(
            f"image {path} does not exist; check the path (a relative one starts from the "
            "folder the run starts in), or set on_error to skip to pass over missing images"
        ) from None
    except (
        OSError,
        SyntaxError,
        ValueError,
        EOFError,
        struct.error,
        PILImage.DecompressionBombError,
    ) as exc:
        raise UnreadableImage(
            f"cannot read image {path}: {exc} (the file is truncated, damaged, or not an "
            "image); replace or remove it, or set on_error to skip to pass over unreadable images"
        ) from None
    turned = upright.size != image.size
    upright.info["full_size"] = full[::-1] if turned else full
    return upright


def full_size(image: Image) -> tuple[int, int]:
    """An opened image's width and height before it was decoded at reduced size, upright."""
    size = image.info.get("full_size", image.size)
    return int(size[0]), int(size[1])


def reduced_size(size: tuple[int, int], long_side: int, short_side: int) -> tuple[int, int] | None:
    """The size to ask PIL's draft for: the image scaled so its long (short) side is that
    long; None when it is that small already."""
    side = max(size) if long_side else min(size)
    wanted = long_side or short_side
    if wanted <= 0 or side <= wanted:
        return None
    scale = wanted / side
    return max(1, math.ceil(size[0] * scale)), max(1, math.ceil(size[1] * scale))


def flattened(image: Image) -> Image:
    """The image as RGB (or L), transparent parts on white: what JPEG can hold."""
    from PIL import Image as PILImage

    if image.mode in ("RGB", "L"):
        return image
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        canvas = PILImage.new("RGB", rgba.size, "white")
        canvas.paste(rgba, mask=rgba.getchannel("A"))
        return canvas
    return image.convert("RGB")


def save_image(image: Image, path: Path, file_format: str, quality: int = 90) -> None:
    """Write `image` to `path` (whatever its name) in `file_format` ("JPEG", "PNG", ...)."""
    if file_format == "JPEG":
        image = flattened(image)
    elif image.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        image = image.convert("RGBA" if "A" in image.mode else "RGB")
    options: dict[str, Any] = {"quality": quality} if file_format in ("JPEG", "WEBP") else {}
    image.save(path, format=file_format, **options)


def format_of(path: Path) -> str:
    """PIL's name of the format a file's extension says ("JPEG" for .jpg)."""
    from PIL import Image as PILImage

    found = PILImage.registered_extensions().get(path.suffix.lower())
    if found is None:
        raise NodeInputError(
            f"{path}: no image format has the extension {path.suffix!r}; set format to jpg or png"
        )
    return found


def existing_file(source: Any) -> Path:
    path = Path(image_path(source))
    if not path.is_file():
        raise UnreadableImage(
            f"image {path} does not exist; check the path (a relative one starts from the "
            "folder the run starts in), or set on_error to skip to pass over missing images"
        )
    return path


def safe_name(value: Any, limit: int = 100) -> str:
    """`value` as one folder or file name: no separators, no leading dots, not empty."""
    text = re.sub(r"[^\w.\- ]+", "_", str(value)).strip(" .")
    return text[:limit].strip(" .") or "_"
