"""Checkpoints of a batch run: what one holds (the files written through `upload_path()`, the
reducers' state, the metrics reported since the previous one), staging it, and finding the
latest again.

Layout, under the data directory ($GRAPHBOOK_HOME, else ./.graphbook):

    batch/<run id>/
        staging/<attempt>/rank_<r>/   files from upload_path() since the last checkpoint
        checkpoints/<uuid>/           one committed checkpoint:
            checkpoint.json           its Progress and the list of its files
            reducers.pkl              the reducers' state (pickle), if there are reducers
            files/rank_<r>/...        the files ranks wrote through upload_path()
        checkpoints/<uuid>.tmp/       a checkpoint being written, or left by a crash
        tensorboard/                  get_tensorboard_path()

A checkpoint is committed by the durable runtime's protocol (graphbook/durable/folders.py,
NOTE [commit protocol]). Before it, once every rank has finished `on_checkpoint_start`, rank 0
moves the attempt's staging folder to `checkpoints/<uuid>.tmp/files` and writes reducers.pkl
beside it; then the ranks may go on (see `Committer`) while the commit runs. A crash before the
commit point rolls back: those batches are processed again.
"""

from __future__ import annotations

import json
import logging
import pickle
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from graphbook.batch_process.dataset import DatasetInfo
from graphbook.batch_process.metrics import MetricRow
from graphbook.batch_process.reducers import ReducerState
from graphbook.durable.folders import RunFolders, commit
from graphbook.store import CheckpointCommit, CheckpointRecord, Store

logger = logging.getLogger(__name__)
FORMAT = 1


@dataclass(frozen=True)
class Progress:
    """What a checkpoint records about the run. `batches_completed` global batches (the first
    ones, in dataset order) are done; the rest are checked when the run resumes."""

    batches_completed: int
    total_batches: int | None
    world_size: int
    batch_size: int
    drop_last: bool
    dataset: DatasetInfo
    sequence: int
    final: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Progress:
        fields = {k: v for k, v in data.items() if k not in ("format", "files")}
        return cls(**{**fields, "dataset": DatasetInfo(**fields["dataset"])})


@dataclass(frozen=True)
class Draft:
    """One checkpoint, ready to commit on rank 0."""

    run_id: str
    uuid: str
    attempt: str
    progress: Progress
    reducers: ReducerState | None
    metrics: tuple[MetricRow, ...]
    counts: dict[str, Any]
    status: str | None = None


@dataclass(frozen=True)
class Staged:
    """A checkpoint whose files are in its `.tmp` folder, not yet committed."""

    draft: Draft
    tmp: Path
    final: Path


def stage(folders: RunFolders, draft: Draft) -> Staged:
    """The staged files moved and the reducers' state pickled: what must happen before the
    ranks go on (they write new staged files, and their reducers change)."""
    final = folders.checkpoint(draft.uuid)
    tmp = folders.unsealed(draft.uuid)
    tmp.mkdir(parents=True)
    staged = folders.staging(draft.attempt)
    if staged.exists():
        staged.rename(tmp / "files")
    if draft.reducers is not None:
        (tmp / "reducers.pkl").write_bytes(pickle.dumps(draft.reducers, protocol=5))
    return Staged(draft, tmp, final)


def seal(store: Store, staged: Staged) -> Path:
    """checkpoint.json written, then the commit (NOTE [commit protocol]); returns the
    checkpoint's folder."""
    draft, tmp, final = staged.draft, staged.tmp, staged.final
    files = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
    _write_json(tmp / "checkpoint.json", {**draft.progress.to_json(), "files": files})
    commit(
        store,
        tmp,
        CheckpointCommit(
            run_id=draft.run_id,
            uuid=draft.uuid,
            path=str(final),
            steps_completed=draft.progress.batches_completed,
            metadata={**draft.progress.to_json(), "files": len(files)},
            metrics=draft.metrics,
            status=draft.status,
            counts=draft.counts,
        ),
    )
    logger.info("checkpoint %s: %d batch(es) done", draft.uuid, draft.progress.batches_completed)
    return final


class Committer:
    """Rank 0's commits, in order and one at a time. A periodic checkpoint is staged at once and
    sealed in a background thread while the ranks go on (fsync and the store transaction are
    slow); the next commit waits for it, and so does `close`. A crash meanwhile is a crash
    during a commit, which the protocol covers."""

    def __init__(self, store: Store, folders: RunFolders, committed: int) -> None:
        self.store = store
        self.folders = folders
        self.committed = committed
        """Global batches committed so far."""
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="graphbook-commit")
        self._sealing: Future[Path] | None = None
        self._sealing_batches = committed

    def commit(self, draft: Draft, background: bool = False) -> None:
        self.wait()
        staged = stage(self.folders, draft)
        if background:
            self._sealing = self._pool.submit(seal, self.store, staged)
            self._sealing_batches = draft.progress.batches_completed
        else:
            seal(self.store, staged)
            self.committed = draft.progress.batches_completed

    def wait(self) -> None:
        """Wait for the commit in the background, if any; raise its error if it failed."""
        sealing, self._sealing = self._sealing, None
        if sealing is not None:
            sealing.result()
            self.committed = self._sealing_batches

    def close(self) -> None:
        """Let the commit in the background finish (its batches are done), then stop."""
        try:
            self.wait()
        finally:
            self._pool.shutdown()


def latest(store: Store, run_id: str) -> CheckpointRecord | None:
    """The run's most recent checkpoint."""
    records = store.checkpoints(run_id)
    if not records:
        return None
    return max(records, key=lambda c: (c.metadata.get("sequence", -1), c.steps_completed))


def load_reducers(folder: Path) -> ReducerState | None:
    path = folder / "reducers.pkl"
    if not path.exists():
        return None
    state = pickle.loads(path.read_bytes())
    if not isinstance(state, ReducerState):
        raise TypeError(f"{path} does not hold reducer state")
    return state


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True, default=str))
