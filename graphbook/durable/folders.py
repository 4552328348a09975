"""A run's folders under the data directory, the atomic commit of a checkpoint folder, and the
recovery of what a crash left half done. The batch API and the Trainer lay out what goes in a
checkpoint their own way (graphbook/batch_process/checkpoint.py, graphbook/trainer/checkpoints.py);
both commit it by this protocol.

    <kind>/<run id>/                  kind: batch or train
        checkpoints/<id>/             a committed checkpoint
        checkpoints/<id>.tmp/         a checkpoint being written, or left by a crash
        staging/<attempt>/            files waiting for the next checkpoint (the batch API's)
        tensorboard/

NOTE [commit protocol]. Rank 0 writes the checkpoint into `checkpoints/<id>.tmp/`, then:
 1. fsyncs the whole folder;
 2. inserts the checkpoint row, the metrics reported since the last checkpoint and the run's
    counts (and, at the end, its status) in one SQLite transaction: the commit point;
 3. renames `<id>.tmp` to `<id>`.
A crash before 2 leaves a `.tmp` folder with no row: the next attempt deletes it (roll back) and
does that work again. A crash between 2 and 3 leaves a `.tmp` folder with a row: the next
attempt renames it (roll forward). So every folder without `.tmp` is committed, and every
committed checkpoint's files exist.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from graphbook.store import CheckpointCommit, Store

logger = logging.getLogger(__name__)
TMP = ".tmp"


@dataclass(frozen=True)
class RunFolders:
    """The folders of one run."""

    root: Path

    @classmethod
    def of(cls, home: Path, kind: str, run_id: str) -> RunFolders:
        return cls(home.resolve() / kind / run_id)

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def tensorboard(self) -> Path:
        return self.root / "tensorboard"

    def staging(self, attempt: str) -> Path:
        return self.root / "staging" / attempt

    def pending(self, attempt: str, rank: int) -> Path:
        """Where rank `rank`'s upload_path() files wait for the next checkpoint."""
        return self.staging(attempt) / f"rank_{rank}"

    def checkpoint(self, uuid: str) -> Path:
        return self.checkpoints / uuid

    def unsealed(self, uuid: str) -> Path:
        """Where checkpoint `uuid` is written before its commit."""
        return self.checkpoints / (uuid + TMP)


def commit(store: Store, tmp: Path, row: CheckpointCommit) -> Path:
    """Steps 1 to 3 of the commit protocol for the checkpoint written at `tmp`; returns its
    folder (`row.path`)."""
    fsync_tree(tmp)
    store.commit_checkpoint(row)
    final = Path(row.path)
    tmp.rename(final)
    fsync_dir(final.parent)
    return final


def recover(store: Store, folders: RunFolders, run_id: str) -> None:
    """Undo what a crashed attempt left half done: drop staged files and uncommitted checkpoint
    folders, finish the rename of committed ones. Call before any rank writes again."""
    shutil.rmtree(folders.root / "staging", ignore_errors=True)
    if not folders.checkpoints.is_dir():
        return
    committed = {c.uuid for c in store.checkpoints(run_id)}
    for path in folders.checkpoints.iterdir():
        if not path.name.endswith(TMP):
            continue
        uuid = path.name.removesuffix(TMP)
        if uuid in committed and not folders.checkpoint(uuid).exists():
            logger.info("finishing the commit of checkpoint %s", uuid)
            path.rename(folders.checkpoint(uuid))
        else:
            logger.info("removing uncommitted checkpoint folder %s", path)
            shutil.rmtree(path)


def fsync_tree(root: Path) -> None:
    for folder, _, names in os.walk(root):
        for name in names:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(folder))


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
