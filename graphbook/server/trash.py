"""Trash: files deleted through the MCP tools (a workflow, a node file), moved into the data
folder's `trash/` rather than removed, each with a note of where it came from, so that it can
be put back (restore) or found there by hand."""

from __future__ import annotations

import errno
import json
import os
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from graphbook.server.errors import ServerError, conflict, not_found

FOLDER = "trash"
NOTE = "deleted.json"
"""The note beside each kept file: what it was and where it lay."""
Kind = Literal["workflow", "node"]


@dataclass(frozen=True)
class Kept:
    """A deleted file in the trash: its id, what it was, its path relative to its folder (the
    workflows or the nodes folder), when it was deleted and where it is kept now."""

    trash_id: str
    kind: Kind
    path: str
    deleted: float
    kept_at: str


class Trash:
    def __init__(self, data: Path) -> None:
        self.folder = data.resolve() / FOLDER

    def keep(self, file: Path, kind: Kind, relative: str) -> Kept:
        """Move `file` into the trash (atomically: a rename, on the same file system as the
        data folder; across file systems, copied then removed)."""
        trash_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        place = self.folder / trash_id
        place.mkdir(parents=True)
        target = place / file.name
        kept = Kept(trash_id, kind, relative, time.time(), str(target))
        (place / NOTE).write_text(json.dumps(asdict(kept)))
        _move(file, target)
        return kept

    def find(self, trash_id: str) -> Kept:
        note = self.folder / trash_id / NOTE
        if "/" in trash_id or trash_id.startswith(".") or not note.is_file():
            raise not_found(f"nothing in the trash has id {trash_id!r}")
        found = json.loads(note.read_text())
        return Kept(**found)

    def take_back(self, kept: Kept, target: Path) -> None:
        """Move a kept file back to `target` (refused if something is there now); its place
        in the trash goes."""
        if target.exists():
            raise conflict(f"{kept.path} exists again; delete or rename it first")
        target.parent.mkdir(parents=True, exist_ok=True)
        _move(Path(kept.kept_at), target)
        (self.folder / kept.trash_id / NOTE).unlink()
        (self.folder / kept.trash_id).rmdir()


def _move(source: Path, target: Path) -> None:
    try:
        os.rename(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:  # not another file system: a real failure
            raise ServerError(500, "internal", f"cannot move {source.name}: {exc}") from None
        target.write_bytes(source.read_bytes())
        source.unlink()
