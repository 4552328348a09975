"""Sources of files: image folders (labels from sub-folders, globs, limits, shuffles) and any
files by glob.

Both list names only (no file is opened), sorted so that a run is repeatable, and treat "no
file matched" as an error on the node rather than a run that completes with nothing.
"""

from __future__ import annotations

import glob
import os
import random
from collections.abc import Iterator
from typing import Any, ClassVar

from graphbook.lifecycle import GeneratorSourceStep
from graphbook.nodes.common import IMAGE_EXTENSIONS, Data, NodeInputError, image_record, local_path

FOLDER = {"type": "string", "required": True, "path": True, "description": "the folder to read"}
LIMIT = {"type": "int", "default": 0, "description": "at most this many files (0: all)"}
SHUFFLE = {
    "type": "boolean",
    "default": False,
    "description": "shuffle the files (before the limit: a random sample) instead of sorting",
}
SEED = {"type": "int", "default": 0, "description": "seed of the shuffle (same seed, same order)"}


def existing_folder(text: str) -> str:
    """The folder a parameter names, as an absolute path; missing or not a folder is refused."""
    folder = local_path(text, "folder")
    if not folder.exists():
        raise FileNotFoundError(
            f"folder {str(folder)!r} does not exist; check the path (a relative path starts "
            f"from {os.getcwd()})"
        )
    if not folder.is_dir():
        raise NotADirectoryError(f"{str(folder)!r} is a file, not a folder; set folder to one")
    return os.path.abspath(folder)


def matching_files(folder: str, pattern: str, extensions: tuple[str, ...] = ()) -> list[str]:
    """Files under `folder` matching the glob `pattern` (`**` recurses) and ending in one of
    `extensions` (any case; all when empty), as sorted relative paths. Hidden files and
    folders (names starting with '.') are left out, as a shell does."""
    pattern = str(pattern).strip() or "*"
    if os.path.isabs(pattern):
        raise NodeInputError(
            f"pattern {pattern!r} is an absolute path; write it relative to the folder, "
            "e.g. **/*.jpg"
        )
    names = glob.glob(pattern, root_dir=folder, recursive=True)
    if extensions:  # by name first: a stat per image is the slow part of a large folder
        names = [name for name in names if os.path.splitext(name)[1].lower() in extensions]
    return sorted(name for name in names if os.path.isfile(os.path.join(folder, name)))


def ordered(names: list[str], shuffle: bool, seed: int, limit: int) -> list[str]:
    """`names` shuffled by `seed` (or as sorted), then cut to `limit` (0: all)."""
    if shuffle:
        names = list(names)
        random.Random(int(seed)).shuffle(names)
    return names[: int(limit)] if int(limit) > 0 else names


def extension_set(text: str) -> tuple[str, ...]:
    """`.jpg,PNG, webp` -> ('.jpg', '.png', '.webp')."""
    parts = [part.strip().lower() for part in str(text).split(",") if part.strip()]
    if not parts:
        raise NodeInputError("extensions is empty; list some, e.g. .jpg,.png")
    return tuple(part if part.startswith(".") else f".{part}" for part in parts)


class ImageFolder(GeneratorSourceStep):
    """Yields the images of a folder, one per dict (or `per_dict` per dict), without opening
    them: listing 100,000 files takes a moment, decoding happens downstream in the worker pool.

    Each dict, with `per_dict` 1:

        {"image": {"type": "image", "value": "/abs/photos/cat/001.jpg"},
         "label": "cat", "label_index": 0}

    `label` and `label_index` are there only with `labels_from_folders`: as torchvision's
    ImageFolder does, the class of an image is the sub-folder of `folder` it lies in
    (`folder/cat/x.jpg`, or deeper: `folder/cat/2021/x.jpg`, is "cat"), and `label_index` its
    position among the sorted classes found. Images directly in `folder` have no class then
    and are left out (the log says how many).

    With `per_dict` above 1 the images come as a list, each record carrying its own label:
    `{"image": [{"type": "image", "value": PATH, "label": "cat", "label_index": 0}, ...]}`.

    Files are sorted by path (the same order on every run) unless `shuffle` is set; `limit`
    applies after the shuffle, so shuffle + limit is a random sample, repeatable by `seed`.
    Hidden files (names starting with '.', such as macOS's `._IMG_1.jpg`) are left out.
    Finding no image is an error, not an empty run.

    Example: `folder` = `~/photos`, `pattern` = `**/*` (all sub-folders) or `*.jpg` (the
    top folder's JPEGs only)."""

    Parameters: ClassVar[dict[str, Any]] = {
        "folder": FOLDER,
        "pattern": {
            "type": "string",
            "default": "**/*",
            "description": "glob relative to the folder; ** recurses (*.jpg: top folder only)",
        },
        "extensions": {
            "type": "string",
            "default": ",".join(IMAGE_EXTENSIONS),
            "description": "file extensions that are images, comma-separated (any case)",
        },
        "labels_from_folders": {
            "type": "boolean",
            "default": False,
            "description": "label each image by its class sub-folder (torchvision's layout)",
        },
        "limit": LIMIT,
        "shuffle": SHUFFLE,
        "seed": SEED,
        "per_dict": {"type": "int", "default": 1, "description": "images per dict"},
        "key": {"type": "string", "default": "image", "description": "field of the images"},
    }
    Outputs: ClassVar[list[str]] = ["out"]
    Category: ClassVar[str] = "Sources"
    folder: str
    pattern: str = "**/*"
    extensions: str = ",".join(IMAGE_EXTENSIONS)
    labels_from_folders: bool = False
    limit: int = 0
    shuffle: bool = False
    seed: int = 0
    per_dict: int = 1
    key: str = "image"

    def load(self) -> Iterator[Data]:
        images = self.images()
        key, per_dict = str(self.key) or "image", int(self.per_dict)
        if per_dict <= 1:
            for path, labels in images:
                yield {key: image_record(path), **labels}
            return
        for start in range(0, len(images), per_dict):
            chunk = images[start : start + per_dict]
            yield {key: [image_record(path, **labels) for path, labels in chunk]}

    def images(self) -> list[tuple[str, Data]]:
        """The images to yield, in order, each with its label fields (none unless asked)."""
        folder = existing_folder(self.folder)
        extensions = extension_set(self.extensions)
        names = matching_files(folder, self.pattern, extensions)
        classes = self.classes(names) if self.labels_from_folders else None
        if classes is not None:
            names = [name for name in names if class_of(name) is not None]
        if not names:
            raise NodeInputError(self.none_found(folder, extensions))
        found = f"found {len(names)} images in {folder}"
        self.log(found + (f" in {len(classes)} classes" if classes else ""))
        chosen = ordered(names, self.shuffle, self.seed, self.limit)
        if len(chosen) < len(names):
            self.log(f"using {len(chosen)} of them (limit {self.limit})")
        return [(os.path.join(folder, name), labels_of(name, classes)) for name in chosen]

    def classes(self, names: list[str]) -> dict[str, int]:
        """Class names (sorted) and their indexes; logs images that lie outside any class."""
        found = {class_of(name) for name in names}
        loose = sum(1 for name in names if class_of(name) is None)
        if loose:
            self.log(
                f"{loose} images lie directly in the folder, in no class sub-folder: left out",
                "warning",
            )
        return {name: index for index, name in enumerate(sorted(c for c in found if c))}

    def none_found(self, folder: str, extensions: tuple[str, ...]) -> str:
        where = " in class sub-folders" if self.labels_from_folders else ""
        return (
            f"0 images found in {folder} matching {self.pattern!r} with extensions "
            f"{', '.join(extensions)}{where}; check the folder, the pattern (**/* also reads "
            "sub-folders) and the extensions"
        )


def labels_of(name: str, classes: dict[str, int] | None) -> Data:
    if classes is None:
        return {}
    label = class_of(name) or ""
    return {"label": label, "label_index": classes[label]}


def class_of(name: str) -> str | None:
    """The class of an image at relative path `name`: its top sub-folder, if any."""
    top, sep, _ = name.partition(os.sep)
    return top if sep else None


class Files(GeneratorSourceStep):
    """Yields the files of a folder that match a glob, one per dict, without opening them:

        {"path": "/abs/docs/report.pdf", "name": "report.pdf", "size": 48213}

    `size` is in bytes. Files are sorted by path unless `shuffle` is set (`limit` applies
    after it). Folders and hidden files (names starting with '.') are left out. No match is
    an error.

    Example: `pattern` = `**/*.csv` for every CSV below the folder."""

    Parameters: ClassVar[dict[str, Any]] = {
        "folder": FOLDER,
        "pattern": {
            "type": "string",
            "default": "*",
            "description": "glob relative to the folder; ** recurses (**/*.txt)",
        },
        "limit": LIMIT,
        "shuffle": SHUFFLE,
        "seed": SEED,
    }
    Outputs: ClassVar[list[str]] = ["out"]
    Category: ClassVar[str] = "Sources"
    folder: str
    pattern: str = "*"
    limit: int = 0
    shuffle: bool = False
    seed: int = 0

    def load(self) -> Iterator[Data]:
        folder = existing_folder(self.folder)
        names = matching_files(folder, self.pattern)
        if not names:
            raise NodeInputError(
                f"0 files found in {folder} matching {self.pattern!r}; check the folder and "
                "the pattern (**/* also reads sub-folders)"
            )
        self.log(f"found {len(names)} files in {folder}")
        for name in ordered(names, self.shuffle, self.seed, self.limit):
            path = os.path.join(folder, name)
            yield {"path": path, "name": os.path.basename(path), "size": os.path.getsize(path)}
