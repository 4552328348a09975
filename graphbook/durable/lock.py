"""The lock on a run's name: while an attempt runs, rank 0 holds it, so two commands cannot
process the same run at once. Batch and training runs lock under the same folder
(`<home>/batch/locks`), their names apart by kind (a training run's name starts `train:`)."""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from graphbook.durable.errors import DurableError


@contextmanager
def run_lock(
    home: Path, run_name: str, refused: type[DurableError] = DurableError
) -> Iterator[None]:
    """Hold the lock on `run_name` (released by the OS even if the process is killed); a name
    another process holds is `refused` (the API's own error) naming that process."""
    folder = home / "batch" / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (hashlib.sha256(run_name.encode()).hexdigest()[:24] + ".lock")
    with path.open("a+") as handle:
        _acquire(handle, run_name, refused)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _acquire(handle: IO[str], run_name: str, refused: type[DurableError]) -> None:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        raise refused(
            f"run {run_name!r} is being processed by {holder}; wait for it to finish or "
            "stop, or give this job another run_name"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"process {os.getpid()}")
    handle.flush()
