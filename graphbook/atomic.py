"""Writing a file atomically: readers see the old file or the new one, never half of one; the
new file keeps the old one's permissions (or the umask's); a temporary file left by a crash is
named so that listings skip it (TEMPORARY)."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path


def atomic_write(path: Path, text: str) -> Path:
    """Write `text` to a hidden temporary file next to `path`, then rename it over `path`: a
    reader sees the old file or the new one, never half of one. The file keeps its mode (a new
    one gets 0666 less the umask, as `open` would give it). A save killed midway leaves a
    `.NAME.XXXXXXXX.tmp` file (`TEMPORARY` matches its name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


TEMPORARY = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")
"""The name of a temporary file `atomic_write` makes (tempfile's 8 random characters)."""


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return new_file_mode()


def new_file_mode() -> int:
    """The mode `open` gives a new file here: 0666 less the umask."""
    return 0o666 & ~_umask()


def new_folder_mode() -> int:
    """The mode `mkdir` gives a new folder here: 0777 less the umask."""
    return 0o777 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it (os.umask would, for a moment, in every
    thread); 0o022 where it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022
