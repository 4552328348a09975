"""Images: per-image statistics (size, brightness, blur), thumbnails, and image folders as sinks.

Every node here is a batch step whose work (decoding, measuring, writing files) runs in the
worker pool: its `load_fn` is an instance of a module-level class, so it pickles, and what
comes back is small (a few numbers, a path). A JPEG is decoded at reduced size (PIL's draft
mode: 1/2, 1/4 or 1/8 scale, straight from the compressed data) whenever a small picture is
all a node needs, which is most of the time for camera-sized photos.

Results go on the dict when it holds one image under `item_key`, on each image's record when
it holds a list of them (graphbook.nodes.common). An image that cannot be read fails its item,
or with `on_error` "skip" is dropped (from its dict's list, or the whole dict when it was its
only image), logged and counted.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from graphbook.lifecycle import BatchStep
from graphbook.nodes.common import (
    Data,
    NodeInputError,
    choice,
    image_path,
    image_record,
    local_path,
    sink_path,
    targets,
)

if TYPE_CHECKING:
    from PIL.Image import Image

    _Base = BatchStep
else:
    _Base = object

WORK_SIDE = 256
"""ImageStats measures blur and light on a grey copy whose short side is this long."""
ON_ERROR = ("fail", "skip")
WRITE_MODES = ("copy", "link", "resize")
FORMATS = {"jpg": "JPEG", "jpeg": "JPEG", "png": "PNG", "webp": "WEBP"}
"""File formats a node may be asked to write, by the extension it gives the file."""
THUMBNAIL_FORMATS = ("jpg", "webp")
WRITES = "__graphbook_image_writes__"
"""WriteImageFolder's jobs for one dict while it is in the node (removed before it leaves)."""


class UnreadableImage(NodeInputError):
    """An image file that does not exist, or cannot be decoded (truncated, damaged, not an
    image); `on_error` "skip" passes over it."""


# -- decoding ---------------------------------------------------------------------------------


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


# -- work done in the pool ------------------------------------------------------------------


@dataclass(frozen=True)
class Skipped:
    """What a load gives for an image it could not read when on_error is "skip"."""

    reason: str


@dataclass(frozen=True)
class PoolWork:
    """A load_fn: `run(item)` in the worker pool, an unreadable image turned into Skipped
    when `skip` is set (any other error fails the item)."""

    skip: bool

    def __call__(self, item: Any) -> Any:
        try:
            return self.run(item)
        except UnreadableImage as exc:
            if not self.skip:
                raise
            return Skipped(str(exc))

    def run(self, item: Any) -> Any:
        raise NotImplementedError


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
class MakeThumbnail(PoolWork):
    """Thumbnails' work: the thumbnail's path, made unless it is there already."""

    folder: str
    size: int
    extension: str

    def run(self, item: Any) -> str:
        source = existing_file(item)
        target = Path(self.folder) / thumbnail_name(source, self.size, self.extension)
        if target.is_file():
            return str(target)
        image = open_image(source, long_side=self.size)
        image.thumbnail((self.size, self.size))
        with sink_path(target, overwrite=True) as temporary:
            save_image(image, temporary, FORMATS[self.extension], quality=85)
        return str(target)


def thumbnail_name(source: Path, size: int, extension: str) -> str:
    """A thumbnail's file name: the source's name, a hash of its full path, length and time
    of change (two photos called IMG_0001.jpg in different folders get different thumbnails,
    and so does a photo that changed), the size. The same name is the same thumbnail."""
    found = source.stat()
    key = f"{source.resolve()}\0{found.st_size}\0{found.st_mtime_ns}"
    digest = hashlib.sha1(key.encode()).hexdigest()[:16]
    return f"{safe_name(source.stem, 40)}-{digest}-{size}.{extension}"


@dataclass(frozen=True)
class WriteFile(PoolWork):
    """WriteImageFolder's work on one job (source, target): the path written and whether a
    hard link had to be a copy."""

    mode: str
    size: int
    overwrite: bool

    def run(self, job: dict[str, Any]) -> tuple[str, bool]:
        source, target = existing_file(job["source"]), Path(job["target"])
        if job.get("again"):
            return str(target), False
        refuse_own_source(source, target)
        copied = False
        with sink_path(target, self.overwrite) as temporary:
            if self.mode == "resize" or job.get("convert"):
                image = open_image(source, long_side=self.size if self.mode == "resize" else 0)
                if self.mode == "resize":
                    image.thumbnail((self.size, self.size))
                save_image(image, temporary, format_of(target))
            elif self.mode == "link":
                copied = not hard_link(source, temporary)
            else:
                shutil.copy2(source, temporary)
        return str(target), copied


def hard_link(source: Path, temporary: Path) -> bool:
    """Hard-link `source` as `temporary` (an empty file it replaces); False, and a copy made
    instead, where the file system cannot (another device, no hard links there)."""
    temporary.unlink()
    try:
        os.link(source, temporary)
        return True
    except FileNotFoundError:
        raise
    except OSError:
        shutil.copy2(source, temporary)
        return False


def refuse_own_source(source: Path, target: Path) -> None:
    """Replacing `target` must never replace the source file (overwrite set, the folder
    being the source's own)."""
    entry = target.parent.resolve() / target.name
    if entry in (source.parent.resolve() / source.name, source.resolve()):
        raise NodeInputError(
            f"{target} is the source image itself; WriteImageFolder never changes its input: "
            "choose another folder"
        )


@dataclass(frozen=True)
class DifferenceHash(PoolWork):
    """ImageHash's work: the 64-bit difference hash of an image, as 16 hex digits: the same
    hash DeduplicateImages writes (graphbook.nodes.curation.dhash), so the two agree."""

    def run(self, item: Any) -> str:
        from graphbook.nodes.curation import dhash, small_grey

        return f"{dhash(small_grey(open_image(item, short_side=64, mode='L'))):016x}"


# -- the steps --------------------------------------------------------------------------------


def common_parameters(batch_size: int = 16) -> dict[str, Any]:
    return {
        "item_key": {
            "type": "string",
            "default": "image",
            "description": "the field holding the image: a path, an image record, or a list "
            "of image records",
        },
        "on_error": {
            "type": "string",
            "default": "fail",
            "description": "an unreadable or missing image: fail (its dict fails; the run "
            "goes on when errors are let through) or skip (dropped, logged, counted)",
        },
        "batch_size": {
            "type": "int",
            "default": batch_size,
            "description": "images gathered before their results are written onto the dicts",
        },
    }


class ImageItems(_Base):
    """What the pack's steps share: the images under `image_key` of a dict, where results
    go, and images skipped (on_error "skip")."""

    image_key: str
    on_error: str
    skipped: int
    _skipped_from: dict[int, list[Data]]

    def setup(self, item_key: str, on_error: str) -> None:
        self.image_key = str(item_key or "image")
        self.on_error = choice(on_error, ON_ERROR, "on_error")
        self.reset()

    def use(self, work: PoolWork) -> None:
        """Run `work` in the pool on each image (the engine reads the instance's load_fn)."""
        self.load_fn = work  # type: ignore[misc]

    @property
    def skip(self) -> bool:
        return self.on_error == "skip"

    def on_start(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.skipped = 0
        self._skipped_from = {}

    def on_data(self, data: Data) -> None:
        targets(data, self.image_key, 1)  # a list of bare paths cannot hold results: say so now

    def holds_list(self, data: Data) -> bool:
        return isinstance(data.get(self.image_key), list | tuple)

    def results(
        self, outputs: list[Any], items: list[Any], data: list[Data]
    ) -> Iterator[tuple[Any, Data]]:
        """(what the pool gave, where it goes) for each image not skipped."""
        for output, item, holder in zip(outputs, items, data, strict=True):
            target = item if self.holds_list(holder) else holder
            if isinstance(output, Skipped):
                self.skipped += 1
                self._skipped_from.setdefault(id(holder), []).append(target)
                self.log(f"skipped: {output.reason}", "warning")
            else:
                yield output, target

    def on_after_item(self, data: Data) -> None:
        dropped = self._skipped_from.get(id(data))
        if dropped and self.holds_list(data):
            kept = [r for r in data[self.image_key] if all(r is not d for d in dropped)]
            data[self.image_key] = kept
            if kept:
                del self._skipped_from[id(data)]

    def route(self, data: Data) -> str | None:
        if self._skipped_from.pop(id(data), None) is not None:
            return None
        return self.Outputs[0]

    def on_end(self) -> None:
        if self.skipped:
            plural = "s" if self.skipped != 1 else ""
            self.log(f"skipped {self.skipped} unreadable image{plural}", "warning")


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


class Thumbnails(ImageItems, BatchStep):
    """Makes a small copy of each image (its long side `size` pixels, JPEG or WebP) and adds
    `thumbnail`: an image record pointing at it, so previews in the editor show a small
    picture instead of loading a camera-sized photo.

    Thumbnails are named after their source (its name, and a hash of its full path, length
    and time of change) and the size, so two photos with the same name in different folders
    never share one, and a photo that changed gets a new one. A thumbnail that exists is
    reused: running again is quick. The node never writes over any other file (old
    thumbnails are left for you to remove), and never changes the images it reads.

    `folder` "" puts them in `thumbnails/` under Graphbook's data folder (`.graphbook/` in the
    folder the run starts in, or $GRAPHBOOK_HOME), which the editor's server shows images
    from (unless `graphbook serve --data` names another folder). Another folder works as
    well, but the editor shows only images under its media folders (`graphbook serve
    --media FOLDER`; `data/` by default).

    Example: `{"image": {"type": "image", "value": "photos/IMG_0001.jpg"}}` gets `"thumbnail":
    {"type": "image", "value": "/home/me/project/.graphbook/thumbnails/IMG_0001-3f2a...-128.jpg"}`
    (the folder made absolute)."""

    Parameters: ClassVar[dict[str, Any]] = {
        "size": {"type": "int", "default": 128, "description": "long side, in pixels"},
        "folder": {
            "type": "string",
            "default": "",
            "path": True,
            "description": "where thumbnails are written; empty: .graphbook/thumbnails",
        },
        "format": {"type": "string", "default": "jpg", "description": "jpg or webp"},
        **common_parameters(),
    }
    Category: ClassVar[str] = "Images"
    Writes: ClassVar[tuple[str, ...]] = ("folder",)

    def __init__(
        self,
        size: int = 128,
        folder: str = "",
        format: str = "jpg",
        item_key: str = "image",
        on_error: str = "fail",
        batch_size: int = 16,
    ) -> None:
        super().__init__(batch_size=batch_size, item_key=item_key)
        self.setup(item_key, on_error)
        if int(size) < 1:
            raise NodeInputError(f"size is {size}; set it to the thumbnail's long side, e.g. 128")
        extension = choice(format, THUMBNAIL_FORMATS, "format")
        self.folder = thumbnail_folder(folder)
        self.use(MakeThumbnail(self.skip, str(self.folder), int(size), extension))

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        for path, target in self.results(outputs, items, data):
            target["thumbnail"] = image_record(path)


def thumbnail_folder(folder: str) -> Path:
    if str(folder).strip():
        return local_path(folder, "folder").absolute()
    from graphbook.store import data_home

    return (data_home() / "thumbnails").absolute()


class WriteImageFolder(ImageItems, BatchStep):
    """Writes each image into `folder` and adds `written` (the new file's path) to the dict,
    or to each image's record when the dict holds a list of them; every dict is passed on.

    - `by`: a field whose value names a sub-folder, e.g. `prediction` or `label` puts each
      image into FOLDER/VALUE/ (read from the image's record when there is a list, else from
      the dict). A value that is not a safe folder name is made one: characters other than
      letters, digits, `.`, `-`, `_` and spaces become `_` (`a/b` -> `a_b`).
    - `mode`: `copy` (the file as it is, times kept); `link` (a hard link: the same file under
      a second name, taking no space; where the file system cannot, e.g. the folder is on
      another device, it copies instead and says so in the log. Graphbook never edits
      either name, but an editor that changes the file in place changes both); `resize`
      (decoded, long side at most `size` pixels, never enlarged, EXIF orientation applied).
      copy and link do not decode: a damaged image is copied as it is.
    - `format`: "" keeps each file's format; `jpg` or `png` writes that (copy then decodes
      and re-encodes; link cannot change a format).

    A file is written whole or not at all (a temporary name in the same folder, renamed), and
    an existing file is never replaced unless `overwrite` is set: otherwise its item fails,
    naming the file. Names are never changed to dodge a clash: two images with the same file
    name bound for the same folder fail the second one. The source files are never moved,
    changed or deleted.

    Example: with `folder` "sorted" and `by` "prediction", `{"image": {"type": "image",
    "value": "photos/a.jpg"}, "prediction": "cat"}` gets `"written": "sorted/cat/a.jpg"`."""

    Parameters: ClassVar[dict[str, Any]] = {
        "folder": {
            "type": "string",
            "required": True,
            "path": True,
            "description": "where images are written",
        },
        "by": {
            "type": "string",
            "default": "",
            "description": "field naming each image's sub-folder (e.g. label); empty: none",
        },
        "mode": {"type": "string", "default": "copy", "description": "copy, link or resize"},
        "size": {"type": "int", "default": 512, "description": "long side for mode resize"},
        "format": {"type": "string", "default": "", "description": "empty (keep), jpg or png"},
        "overwrite": {
            "type": "boolean",
            "default": False,
            "description": "replace files that exist in the folder",
        },
        **common_parameters(),
    }
    Category: ClassVar[str] = "Sinks"
    Writes: ClassVar[tuple[str, ...]] = ("folder",)

    def __init__(
        self,
        folder: str,
        by: str = "",
        mode: str = "copy",
        size: int = 512,
        format: str = "",
        overwrite: bool = False,
        item_key: str = "image",
        on_error: str = "fail",
        batch_size: int = 16,
    ) -> None:
        super().__init__(batch_size=batch_size, item_key=WRITES)
        self.setup(item_key, on_error)
        self.folder = local_path(folder, "folder")
        self.by = str(by or "").strip()
        self.mode = choice(mode, WRITE_MODES, "mode")
        self.format = choice(format, ("", *FORMATS), "format") if format else ""
        if self.mode == "link" and self.format:
            raise NodeInputError(
                "mode link keeps each file as it is; set format to empty, or mode to copy"
            )
        if self.mode == "resize" and int(size) < 1:
            raise NodeInputError(f"size is {size}; set it to the long side to resize to")
        self.use(WriteFile(self.skip, self.mode, int(size), bool(overwrite)))

    def reset(self) -> None:
        super().reset()
        self.copied = 0
        self._claimed: dict[Path, Path] = {}

    def on_start(self) -> None:
        super().on_start()
        if self.folder.exists() and not self.folder.is_dir():
            raise NotADirectoryError(f"{self.folder} is a file; set folder to a folder")

    def on_data(self, data: Data) -> None:
        super().on_data(data)
        value = data.get(self.image_key)
        if isinstance(value, list | tuple):
            data[WRITES] = [self.job(image, image, i) for i, image in enumerate(value)]
        else:
            data[WRITES] = [self.job(value, data, 0)]

    def job(self, image: Any, holder: Data, index: int) -> dict[str, Any]:
        """What the pool is to do for one image: its source, its target, how."""
        if image is None:
            raise NodeInputError(
                f"the dict has no image under {self.image_key!r} (fields: "
                f"{', '.join(map(repr, holder))}); set item_key to the field holding images"
            )
        source = Path(image_path(image))
        name = f"{source.stem}.{self.format}" if self.format else source.name
        target = self.subfolder(holder) / name
        claimed = self._claimed.setdefault(target, source)
        if claimed != source:
            raise NodeInputError(
                f"{claimed} and {source} would both be written to {target}; "
                "WriteImageFolder never renames: give them different names, or set by to "
                "sort them into sub-folders"
            )
        again = claimed is not source  # the same file sent twice: written once
        kept = FORMATS.get(source.suffix.lower().lstrip("."), "")
        convert = bool(self.format) and FORMATS[self.format] != kept
        return {
            "source": str(source),
            "target": str(target),
            "convert": convert,
            "again": again,
            "index": index,
        }

    def subfolder(self, holder: Data) -> Path:
        if not self.by:
            return self.folder
        if self.by not in holder:
            raise NodeInputError(
                f"by is {self.by!r}, but the dict has no such field (fields: "
                f"{', '.join(map(repr, holder))}); set by to one of them, or empty"
            )
        return self.folder / safe_name(holder[self.by])

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        records = [self.record_of(job, holder) for job, holder in zip(items, data, strict=True)]
        for (path, copied), target in self.results(outputs, records, data):
            target["written"] = path
            self.copied += copied

    def record_of(self, job: dict[str, Any], holder: Data) -> Any:
        """Where a job's result goes: its image's record, or the dict holding one image."""
        return holder[self.image_key][job["index"]] if self.holds_list(holder) else holder

    def on_after_item(self, data: Data) -> None:
        data.pop(WRITES, None)
        super().on_after_item(data)

    def on_end(self) -> None:
        super().on_end()
        if self.copied:
            self.log(
                f"{self.copied} images could not be hard-linked into {self.folder} (another "
                "device, or no hard links there) and were copied instead"
            )


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
