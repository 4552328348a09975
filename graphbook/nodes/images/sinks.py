"""Image folders as sinks: WriteImageFolder copies, links or resizes each image into a
folder (sorted into sub-folders by a field). A folder that is its own (absent, empty, or
written by it before and unchanged since) ends a completed run holding exactly the run's
images: they are written into a hidden folder beside it, swapped in at the end. A folder of
other files is refused, or, with `overwrite`, merged into (and the log says so)."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from graphbook.atomic import atomic_write, new_folder_mode
from graphbook.lifecycle import BatchStep
from graphbook.nodes.common import (
    Data,
    NodeInputError,
    choice,
    image_path,
    local_path,
    sink_path,
    stamp,
    sweep_temporaries,
    temporary_beside,
)
from graphbook.nodes.images.codec import (
    FORMATS,
    existing_file,
    format_of,
    open_image,
    safe_name,
    save_image,
)
from graphbook.nodes.images.items import ImageItems, PoolWork, common_parameters

WRITE_MODES = ("copy", "link", "resize")


WRITES = "__graphbook_image_writes__"
"""WriteImageFolder's jobs for one dict while it is in the node (removed before it leaves)."""


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
        place = Path(job.get("place") or target)  # in the folder being made, or the target
        with sink_path(place, self.overwrite, mark=False) as temporary:
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


FOLDER_MARKER = ".graphbook-written.json"
"""Inside a folder WriteImageFolder made: each file it wrote there, with its stamp."""


def files_in(folder: Path) -> dict[str, list[int]]:
    """Every file under `folder` (but its marker) by relative path, with its stamp."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != FOLDER_MARKER:
            found[path.relative_to(folder).as_posix()] = stamp(path)
    return found


def own_folder(folder: Path) -> bool:
    """`folder` may be replaced whole: it is absent, holds no file, or holds exactly what
    WriteImageFolder wrote there, unchanged since (its marker says so)."""
    if not folder.exists():
        return True
    present = files_in(folder)
    if not present:
        return True
    try:
        return bool(json.loads((folder / FOLDER_MARKER).read_text()) == present)
    except (OSError, ValueError):
        return False


def swap_in(made: Path, folder: Path) -> None:
    """Put the finished folder `made` in `folder`'s place (the old one, its own, removed)."""
    os.chmod(made, new_folder_mode())  # mkdtemp made it 0700
    atomic_write(made / FOLDER_MARKER, json.dumps(files_in(made)))
    if folder.exists():
        old = temporary_beside(folder, folder=True)
        os.rename(folder, old)  # onto the empty temporary folder
        os.rename(made, folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(made, folder)


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

    When the run completes, `folder` holds exactly this run's images: they are written into a
    hidden folder beside it, which takes its place at the end (`written` names where each
    image is then); a run that fails or is stopped leaves the folder as it was. That is so
    when the folder is absent, empty, or was written by this node before and is unchanged
    since. A folder holding other files is refused, naming `overwrite`; with `overwrite` set
    the images are merged into it instead (each written whole, replacing a file of the same
    name; the files it had stay, and the log says so). The folder is the node's own: two
    nodes writing one folder replace each other's images. Names are never changed to dodge
    a clash: two images with the same file name bound for the same folder fail the second
    one. The source files are never moved, changed or deleted (an image read from inside
    the folder a run replaces is refused).

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
            "description": "merge into a folder holding other files (replacing same names)",
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
        self.overwrite = bool(overwrite)
        self.use(WriteFile(self.skip, self.mode, int(size), self.overwrite))

    def reset(self) -> None:
        super().reset()
        self.copied = 0
        self._claimed: dict[Path, Path] = {}
        self._made: Path | None = None
        """The folder being made beside `folder` (None: merging into `folder` itself)."""

    def on_start(self) -> None:
        super().on_start()
        folder = self.folder
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(f"{folder} is a file; set folder to a folder")
        if own_folder(folder):
            self._made = temporary_beside(folder, folder=True)
            return
        sweep_temporaries(folder)
        if not self.overwrite:
            raise FileExistsError(
                f"{folder} holds files WriteImageFolder did not write (or that changed since "
                "it did); set overwrite to true to merge this run's images into it, or choose "
                "another folder (one of its own ends each run holding that run's images only)"
            )

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
        place = None if self._made is None else self._made / target.relative_to(self.folder)
        if place is not None and source.resolve().is_relative_to(self.folder.resolve()):
            raise NodeInputError(
                f"{source} is inside {self.folder}, which a completed run replaces; "
                "WriteImageFolder never changes its input: choose another folder"
            )
        return {
            "source": str(source),
            "target": str(target),
            "place": str(place) if place is not None else None,
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
        made, self._made = self._made, None
        if made is None:
            self.log(
                f"merged into {self.folder}, which also holds files this run did not write "
                "(overwrite is set); choose a folder of its own for this run's images only",
                "warning",
            )
        elif self.ended_as == "done":
            swap_in(made, self.folder)
        else:
            shutil.rmtree(made, ignore_errors=True)
            self.log(f"the run did not complete: {self.folder} is left as it was", "warning")
        if self.copied:
            self.log(
                f"{self.copied} images could not be hard-linked into {self.folder} (another "
                "device, or no hard links there) and were copied instead"
            )
