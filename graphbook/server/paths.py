"""Root: a folder the API may touch, and the checks that keep every path inside it."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from graphbook.server.errors import ServerError
from graphbook.text import encodable_text

_ENCODED = re.compile(r"%(2f|5c|2e|00)", re.IGNORECASE)
MAX_PATH = 512
MAX_NAME = 255
"""Bytes in one file or folder name, as most file systems allow."""


class Root:
    """A folder; `resolve` turns a relative path from a client into a path inside it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()

    def resolve(self, relative: str) -> Path:
        """The path `relative` names under this root; ServerError(400, bad_path) if it is
        absolute, climbs out (`..`, symlinks), is hidden, or hides separators."""
        parts = _parts(relative)
        try:
            path = self.folder.joinpath(*parts).resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop, a name the system refuses
            raise bad_path(relative, f"it cannot be resolved ({exc})") from None
        if not path.is_relative_to(self.folder):
            raise bad_path(relative, "it leads outside the folder")
        return path

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.folder).as_posix()

    def contains(self, path: Path) -> bool:
        try:
            return path.resolve().is_relative_to(self.folder)
        except (OSError, RuntimeError, ValueError):
            return False


def _parts(relative: str) -> tuple[str, ...]:
    if not isinstance(relative, str) or not relative or len(relative) > MAX_PATH:
        raise bad_path(str(relative)[:80], f"give a relative path of 1 to {MAX_PATH} characters")
    if "\\" in relative or "\x00" in relative or _ENCODED.search(relative):
        raise bad_path(relative, "backslashes, NUL and encoded separators are not allowed")
    if relative.startswith("/") or re.match(r"^[A-Za-z]:", relative):
        raise bad_path(relative, "absolute paths are not allowed; give it relative to the folder")
    parts = PurePosixPath(relative).parts
    if any(part in ("..", ".") or part.startswith(".") for part in parts):
        raise bad_path(relative, "'..' and hidden names (starting with '.') are not allowed")
    if encodable_text(relative) != relative:
        raise bad_path(relative, "it is not valid UTF-8 (it holds a lone surrogate)")
    if any(ord(c) < 32 for c in relative):
        raise bad_path(relative, "control characters are not allowed")
    if any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME for part in parts):
        raise bad_path(relative[:80] + "...", f"a file or folder name is at most {MAX_NAME} bytes")
    return parts


def bad_path(relative: str, why: str) -> ServerError:
    return ServerError(400, "bad_path", f"path {relative!r} refused: {why}")
