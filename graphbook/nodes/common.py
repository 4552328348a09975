"""What the library's packs share: image records, paths, sink files and expressions.

Conventions every pack keeps, so that nodes wire together without glue:

- An image travels as a record `{"type": "image", "value": PATH}` (the editor shows it as a
  picture); a plain path string is accepted wherever an image is read.
- One image per dict (the default of every source) puts results on the dict itself
  (`data["prediction"]`); a list of images under the item key puts them on each record.
- Sinks write beside their target and put it in place at the end (a reader never sees half a
  file; a failed or stopped run leaves the old one), in the mode the umask gives. A sink
  replaces what a sink wrote before and nobody changed since (a hidden marker beside it says
  so: "run, change, run again" just works); any other file it refuses, unless its `overwrite`
  parameter is set. Temporaries left by a killed process are removed by the next run that
  writes there. No node deletes or changes its inputs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graphbook.atomic import atomic_write, new_file_mode
from graphbook.errors import GraphbookError
from graphbook.plain import plain

Data = dict[str, Any]
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp")


class NodeInputError(GraphbookError):
    """A node was given something it cannot use; the message names it and the fix."""


def image_record(path: Path | str, **fields: Any) -> Data:
    return {"type": "image", "value": str(path), **fields}


def is_image_record(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "image" and "value" in value


def image_path(value: Any) -> str:
    """The file of an image record, or a path given as text."""
    if is_image_record(value):
        value = value["value"]
    if isinstance(value, str | os.PathLike):
        return os.fspath(value)
    raise NodeInputError(
        f"expected an image (a path, or a record {{'type': 'image', 'value': PATH}}), got "
        f"{type(value).__name__}: {value!r:.80}; set item_key to the field that holds the images"
    )


def targets(data: Data, key: str, count: int) -> list[Data]:
    """Where results for the items under `key` go: the dict itself when it holds one image
    there, each item's record when it holds a list of them."""
    value = data.get(key)
    if isinstance(value, list | tuple):
        if not all(isinstance(item, dict) for item in value):
            raise NodeInputError(
                f"{key!r} holds a list of paths; results go on records: make them records "
                "({'type': 'image', 'value': PATH}) or send one image per dict"
            )
        return list(value)
    return [data] * count


def choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    """A parameter that takes one of a few words, compared in lower case; any other value is
    refused naming them."""
    text = str(value).strip().lower()
    if text not in allowed:
        raise NodeInputError(f"{what} is {value!r}; set it to one of: {', '.join(allowed)}")
    return text


def local_path(text: str, what: str = "path") -> Path:
    """A path parameter as the person wrote it, `~` expanded; empty is refused."""
    if not str(text).strip():
        raise NodeInputError(f"{what} is empty; set it to a file or folder")
    return Path(os.path.expanduser(str(text)))


def plain_value(value: Any) -> Any:
    """A value as a table cell or JSON can hold it: image records as their path, arrays and
    tensors as lists, numpy scalars as numbers, non-finite floats as None (graphbook/plain.py's
    walk)."""
    return plain(value, _cell, _null)


def _cell(value: Any) -> Any:
    if is_image_record(value):
        return str(value["value"])
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "tolist"):  # numpy arrays and scalars, torch tensors
        return value.tolist()
    return value


def _null(value: float) -> None:
    return None


def plain_row(data: Data, columns: list[str] | None = None) -> Data:
    """One table row of a dict: the `columns` asked for (all when None), values made plain."""
    if columns is None:
        return {str(k): plain_value(v) for k, v in data.items()}
    missing = [c for c in columns if c not in data]
    if missing:
        raise NodeInputError(
            f"the dict has no field {', '.join(map(repr, missing))} (fields: "
            f"{', '.join(map(repr, data))}); fix the columns parameter"
        )
    return {c: plain_value(data[c]) for c in columns}


MARKER_SUFFIX = ".graphbook"
"""A sink's marker beside the file it wrote (`.NAME.graphbook`): the file's size and mtime."""


def marker_of(path: Path) -> Path:
    return path.parent / f".{path.name}{MARKER_SUFFIX}"


def stamp(path: Path) -> list[int]:
    """What says a file is unchanged: its size and modification time (ns)."""
    found = path.stat()
    return [found.st_size, found.st_mtime_ns]


def written_by_a_sink(path: Path) -> bool:
    """`path` is a file a sink wrote and nobody has changed since (its marker says so)."""
    try:
        return bool(json.loads(marker_of(path).read_text()) == stamp(path))
    except (OSError, ValueError):
        return False


def refuse_existing(path: Path, overwrite: bool) -> None:
    """A sink may replace `path` if it does not exist, if a sink wrote it and nobody changed it
    since, or if `overwrite` is set; otherwise FileExistsError names the parameter."""
    if path.exists() and not overwrite and not written_by_a_sink(path):
        raise FileExistsError(
            f"{path} exists and was not written by a Graphbook sink (or was changed since); "
            "a sink replaces only its own earlier output: set overwrite to true to replace "
            "it, or choose another path"
        )


def temporary_beside(path: Path, folder: bool = False) -> Path:
    """A new hidden temporary beside `path` (`.NAME.PID.XXXXXXXX.tmp`: atomic.TEMPORARY's
    form, with the writing process's id, so a later run can tell a dead writer's), made
    after sweeping those that dead processes left there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_temporaries(path)
    prefix, where = f".{path.name}.{os.getpid()}.", path.parent
    if folder:
        return Path(tempfile.mkdtemp(prefix=prefix, suffix=".tmp", dir=where))
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=where)
    os.close(fd)
    return Path(name)


def sweep_temporaries(path: Path) -> list[Path]:
    """Remove the temporaries beside `path` that processes no longer running left (a sink's
    writer killed with SIGKILL); those of live processes stay. Returns those removed."""
    removed: list[Path] = []
    start = f".{path.name}."
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(start) and name.endswith(".tmp")):
            continue
        pid = name[len(start) :].split(".", 1)[0]
        if not pid.isdigit() or _running(int(pid)):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def commit(temporary: Path, path: Path, mark: bool = True) -> None:
    """Put the finished `temporary` in `path`'s place, in the mode the umask gives a new file
    (mkstemp made it 0600), with its marker (`mark`) written first: the marker's stamp is the
    file's own, which a rename keeps."""
    os.chmod(temporary, new_file_mode())
    if mark:
        atomic_write(marker_of(path), json.dumps(stamp(temporary)))
    os.replace(temporary, path)


@contextmanager
def sink_path(path: Path, overwrite: bool, mark: bool = True) -> Iterator[Path]:
    """A file written whole or not at all: the block writes the hidden temporary path it is
    given, beside `path`, which is put in `path`'s place (`commit`) when the block ends
    without an error (and removed when it raises). `path` must be one a sink may replace
    (`refuse_existing`), checked before and after the block."""
    refuse_existing(path, overwrite)
    temporary = temporary_beside(path)
    try:
        yield temporary
        refuse_existing(path, overwrite)
        commit(temporary, path, mark)
    finally:
        temporary.unlink(missing_ok=True)


class Expression:
    """A Python expression over a dict's fields (`confidence >= 0.8 and label != "cat"`): the
    fields are names in it, the whole dict is `data`. Compiled once; a field the dict lacks
    is named in the error."""

    def __init__(self, text: str, what: str = "expression") -> None:
        self.text = str(text).strip()
        if not self.text:
            raise NodeInputError(f"{what} is empty; write one, e.g. confidence >= 0.8")
        try:
            self.code = compile(self.text, f"<{what}>", "eval")
        except SyntaxError as exc:
            raise NodeInputError(
                f"{what} {self.text!r} is not a Python expression: {exc.msg}"
            ) from None

    def __call__(self, data: Data) -> Any:
        try:
            return eval(self.code, {"__builtins__": __builtins__}, {**data, "data": data})
        except NameError as exc:
            raise NodeInputError(
                f"{self.text!r}: {exc}; the dict's fields are {', '.join(map(repr, data))}"
            ) from None
