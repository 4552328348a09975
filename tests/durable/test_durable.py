"""The durable runtime's refusals come as the calling API's own error, saying how to fix them;
its commit protocol leaves a whole checkpoint or none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graphbook.batch_process import BatchError
from graphbook.durable.errors import DurableError
from graphbook.durable.folders import RunFolders, commit, recover
from graphbook.durable.lock import run_lock
from graphbook.durable.reducers import as_reducer, named_metrics
from graphbook.store import CheckpointCommit, Store
from graphbook.trainer.errors import TrainerError


def test_a_held_run_name_is_refused_with_the_api_s_error(tmp_path: Path) -> None:
    with run_lock(tmp_path, "train:job", TrainerError):
        held = pytest.raises(TrainerError, match=f"process {os.getpid()}; wait for it")
        with held, run_lock(tmp_path, "train:job", TrainerError):
            pass
        with run_lock(tmp_path, "other", BatchError):
            pass
    with run_lock(tmp_path, "train:job"):
        pass


def test_a_wrapped_value_that_is_no_reducer_is_refused() -> None:
    assert as_reducer(sum, lambda: 0).per_slot_reduce() == []
    with pytest.raises(TrainerError, match="expects a MetricReducer or a function, got 3"):
        as_reducer(3, lambda: 0, TrainerError)


def test_an_unnamed_reducer_must_give_a_dict_of_metrics() -> None:
    reducer = as_reducer(sum, lambda: 0)
    assert named_metrics("total", reducer, 6) == {"total": 6}
    assert named_metrics(None, reducer, {"a": 1}) == {"a": 1}
    with pytest.raises(BatchError, match="pass name= to wrap_reducer"):
        named_metrics(None, reducer, 6, BatchError)
    assert issubclass(BatchError, DurableError) and issubclass(TrainerError, DurableError)


def _row(run_id: str, folder: Path) -> CheckpointCommit:
    return CheckpointCommit(run_id, folder.name, str(folder), 1, {})


def test_recover_rolls_an_uncommitted_checkpoint_back_and_a_committed_one_forward(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "graphbook.sqlite")
    run_id = store.start_run("train", "job")
    folders = RunFolders.of(tmp_path, "train", run_id)
    for uuid in ("kept", "dropped"):
        folders.unsealed(uuid).mkdir(parents=True)
        (folders.unsealed(uuid) / "state").write_text(uuid)
    assert commit(store, folders.unsealed("kept"), _row(run_id, folders.checkpoint("kept")))
    folders.checkpoint("kept").rename(folders.unsealed("kept"))  # a crash before the rename
    recover(store, folders, run_id)
    assert sorted(p.name for p in folders.checkpoints.iterdir()) == ["kept"]
    assert (folders.checkpoint("kept") / "state").read_text() == "kept"
