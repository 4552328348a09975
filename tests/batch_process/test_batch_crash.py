"""kill -9 at every kind of moment, and SIGTERM, in real processes: each attempt resumes the
last, and the run ends with every batch's output, metric and reducer value committed once."""

from __future__ import annotations

import signal
from pathlib import Path

from graphbook.batch_process import EXIT_PREEMPTED

from .outcome import assert_complete, outcome, run_job
from .test_batch_process import BATCH, ITEMS, process

KILLED = -signal.SIGKILL


def committed(home: Path) -> list[int]:
    return sorted(row["batch"] for row in outcome(home).rows)


def attempt(home: Path, fault: str, expected_rc: int, expected_batches: int) -> None:
    result = run_job(home, "--items", str(ITEMS), "--batch-size", str(BATCH), fault=fault)
    assert result.returncode == expected_rc, result.stderr[-3000:]
    assert committed(home) == list(range(expected_batches)), fault


def test_kill_and_stop_at_every_stage_then_resume(home: Path) -> None:
    # 12 batches, a checkpoint every 3 steps of an attempt.
    attempt(home, "term-batch:1", EXIT_PREEMPTED, 2)  # stops after its batch: 0-1 committed
    attempt(home, "kill-batch:4", KILLED, 2)  # dies mid-interval: 2-3 are lost
    attempt(home, "kill-flush:1", KILLED, 2)  # file written, never committed
    assert list(home.glob("batch/*/staging/*/rank_0/batches_00002.json"))
    attempt(home, "kill-commit:1", KILLED, 2)  # files moved, no store row: rolled back
    [tmp] = home.glob("batch/*/checkpoints/*.tmp")
    assert (tmp / "files" / "rank_0" / "batches_00002.json").exists()
    attempt(home, "kill-committed:1", KILLED, 5)  # store row in, rename not done: kept
    assert len(list(home.glob("batch/*/checkpoints/*.tmp"))) == 1
    attempt(home, "kill-finish:0", KILLED, 11)  # on_finish's metrics die with it
    assert outcome(home).run.status == "running"
    process()  # resumes here: batch 11, then finishes
    result = outcome(home)
    assert_complete(result, ITEMS, BATCH)
    assert len([m for m in result.group("inference") if "finished" in m.metrics]) == 1


def test_a_dataset_that_augments_its_items_resumes_after_kill(home: Path) -> None:
    # Its items differ at every read; what identifies its data does not.
    args = ("--items", str(ITEMS), "--batch-size", str(BATCH), "--jitter")
    killed = run_job(home, *args, fault="kill-batch:8")
    assert killed.returncode == KILLED, killed.stderr[-3000:]
    done = committed(home)  # the checkpoint after batch 5 may still be committing
    assert done in ([0, 1, 2], [0, 1, 2, 3, 4, 5])
    resumed = run_job(home, *args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert_complete(outcome(home), ITEMS, BATCH)
