"""Training checkpoints in the run store: their folders and readable ids, what they hold, the
atomic commit (the batch API's protocol), finding one again, and the retention policy.

Layout, under the data directory ($GRAPHBOOK_HOME, else ./.graphbook):

    train/<run id>/checkpoints/<run id>-step-<batches>/
        state.pt          models, optimizers, LR schedulers, AMP scaler, callbacks, every
                          process's RNG states, reducers and unreported metrics, the loop's place
        checkpoint.json   readable: run, name, step, epoch, hparams, seed, trial class, metrics

A checkpoint is written to `<id>.tmp` and committed by the durable runtime's protocol
(graphbook/durable/folders.py, NOTE [commit protocol]), whose `recover` finishes or drops what a
crash left half done.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from graphbook.durable.folders import RunFolders, commit
from graphbook.store import CheckpointCommit, CheckpointRecord, Store
from graphbook.trainer.errors import TrainerError

logger = logging.getLogger(__name__)
FORMAT = 1
STATE = "state.pt"
INFO = "checkpoint.json"
Policy = Literal["best", "all", "none"]
POLICIES = ("best", "all", "none")


def folders_of(home: Path, run_id: str) -> RunFolders:
    return RunFolders.of(home, "train", run_id)


def checkpoint_id(run_id: str, batches: int) -> str:
    return f"{run_id}-step-{batches}"


@dataclass(frozen=True)
class Snapshot:
    """One checkpoint, ready to write on rank 0."""

    run_id: str
    batches: int
    state: dict[str, Any]
    info: dict[str, Any]
    """What checkpoint.json and the store's metadata say about it."""


def write(
    store: Store,
    folders: RunFolders,
    snapshot: Snapshot,
    status: str | None,
    counts: dict[str, Any],
) -> tuple[str, Path]:
    """Commit `snapshot` (with the run's new counts, and status if given) atomically; returns
    its id and folder."""
    uuid = checkpoint_id(snapshot.run_id, snapshot.batches)
    final = folders.checkpoint(uuid)
    if any(c.uuid == uuid for c in store.checkpoints(snapshot.run_id)):
        store.delete_checkpoint(uuid)  # taken again at the same step: this one replaces it
        shutil.rmtree(final, ignore_errors=True)
    tmp = folders.unsealed(uuid)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    torch.save(snapshot.state, tmp / STATE)
    info = {
        **snapshot.info,
        "format": FORMAT,
        "uuid": uuid,
        "metric_rows": store.metric_counts([snapshot.run_id]).get(snapshot.run_id, 0),
    }
    (tmp / INFO).write_text(json.dumps(info, indent=1, sort_keys=True, default=str))
    commit(
        store,
        tmp,
        CheckpointCommit(
            run_id=snapshot.run_id,
            uuid=uuid,
            path=str(final),
            steps_completed=snapshot.batches,
            metadata=info,
            status=status,
            counts=counts,
        ),
    )
    logger.info("checkpoint %s: %d batch(es)", uuid, snapshot.batches)
    return uuid, final


def latest(store: Store, run_id: str) -> CheckpointRecord | None:
    records = store.checkpoints(run_id)
    return max(records, key=lambda c: (c.steps_completed, c.time)) if records else None


def read_state(folder: Path) -> dict[str, Any]:
    path = folder / STATE
    if not path.is_file():
        raise TrainerError(f"{folder} is not a training checkpoint: it has no {STATE}")
    state = torch.load(path, map_location="cpu", weights_only=False)
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise TrainerError(f"{path} is not a training checkpoint of format {FORMAT}")
    return state


def read_info(folder: Path) -> dict[str, Any]:
    path = folder / INFO
    if not path.is_file():
        raise TrainerError(f"{folder} is not a training checkpoint: it has no {INFO}")
    info: dict[str, Any] = json.loads(path.read_text())
    return info


# -- the retention policy ------------------------------------------------------------------------
@dataclass(frozen=True)
class Retention:
    """Which checkpoints a run keeps: `all`, the `best` by `metric` (plus the latest, to resume),
    or `none` once training completes; `keep_last` also keeps the K most recent (and with
    `all`, only those and the best). Checkpoints registered as model versions are kept."""

    policy: Policy = "best"
    metric: str | None = None
    smaller_is_better: bool = True
    keep_last: int | None = None

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise TrainerError(
                f"checkpoint_policy must be one of {', '.join(POLICIES)}, got {self.policy!r}"
            )
        if self.keep_last is not None and (
            isinstance(self.keep_last, bool)
            or not isinstance(self.keep_last, int)
            or self.keep_last < 1
        ):
            raise TrainerError(f"keep_last must be a positive whole number, got {self.keep_last!r}")

    def metric_of(self, validation: dict[str, Any]) -> str | None:
        """The metric that ranks checkpoints, among these validation metrics."""
        if self.metric is not None:
            if self.metric not in validation:
                raise TrainerError(
                    f"searcher_metric {self.metric!r} is not among the validation metrics "
                    f"({', '.join(sorted(validation)) or 'none'})"
                )
            return self.metric
        for name in ("validation_loss", "loss"):
            if name in validation:
                return name
        return None

    def better(self, value: float, than: float | None) -> bool:
        if than is None:
            return True
        return value < than if self.smaller_is_better else value > than

    def kept(self, records: list[CheckpointRecord], best: str | None, done: bool) -> set[str]:
        ordered = sorted(records, key=lambda c: (c.steps_completed, c.time))
        if self.policy == "none" and done:
            return set()
        keep = {ordered[-1].uuid} if ordered else set()
        if self.policy == "all" and self.keep_last is None:
            keep |= {c.uuid for c in ordered}
        if self.keep_last is not None:
            keep |= {c.uuid for c in ordered[-self.keep_last :]}
        if best is not None and self.policy in ("best", "all"):
            keep.add(best)
        return keep


def prune(
    store: Store, run_id: str, retention: Retention, best: str | None, done: bool
) -> list[str]:
    """Delete the run's checkpoints the policy does not keep; returns their ids."""
    records = store.checkpoints(run_id)
    keep = retention.kept(records, best, done) | store.registered_checkpoints()
    dropped = []
    for record in records:
        if record.uuid in keep:
            continue
        store.delete_checkpoint(record.uuid)
        shutil.rmtree(record.path, ignore_errors=True)
        dropped.append(record.uuid)
    return dropped
