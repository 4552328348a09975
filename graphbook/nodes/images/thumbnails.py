"""Thumbnails: a small copy of each image, named after its source, reused when there."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from graphbook.lifecycle import BatchStep
from graphbook.nodes.common import (
    Data,
    NodeInputError,
    choice,
    image_record,
    local_path,
    sink_path,
)
from graphbook.nodes.images.codec import FORMATS, existing_file, open_image, safe_name, save_image
from graphbook.nodes.images.items import ImageItems, PoolWork, common_parameters

THUMBNAIL_FORMATS = ("jpg", "webp")


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
