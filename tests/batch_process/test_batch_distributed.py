"""Under torchrun (gloo on CPU): two processes commit what one does; a stop or a killed rank
resumes with one or two processes, and the reducers end as in a single process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphbook.batch_process import BatchPreempted

from .jobs import FAULT_ENV
from .outcome import Outcome, assert_complete, outcome, run_job
from .test_batch_process import BATCH, ITEMS, process

pytestmark = pytest.mark.timeout(300)


def comparable(result: Outcome) -> dict[str, Any]:
    """What must not depend on the number of processes."""
    rows = sorted(
        ((row["batch"], row["items"], row["outputs"]) for row in result.rows), key=lambda r: r[0]
    )
    return {"rows": rows, "reduced": result.reduced()}


def test_two_processes_commit_what_one_does(tmp_path: Path) -> None:
    items = 25  # 13 batches: the second rank has nothing to do on the last step
    homes = {n: tmp_path / f"{n}-processes" for n in (1, 2)}
    for processes, home in homes.items():
        args = ("--items", str(items), "--batch-size", str(BATCH), "--also-stream")
        ran = run_job(home, *args, processes=processes)
        assert ran.returncode == 0, ran.stderr[-3000:]
    for name in ("numbers", "numbers-stream"):  # map-style, then iterable with 2 workers
        one, both = outcome(homes[1], name), outcome(homes[2], name)
        assert_complete(both, items, BATCH)
        assert comparable(both) == comparable(one)
        assert (one.run.counts["world_size"], both.run.counts["world_size"]) == (1, 2)
        for row in both.rows:  # rank r's k-th batch is global batch 2k + r
            assert (row["rank"], row["batch_idx"]) == (row["batch"] % 2, row["batch"] // 2)
        finished = [m for m in both.group("inference") if "finished" in m.metrics]
        assert sorted(m.steps_completed for m in finished) == [0, 1], "on_finish on each rank"


def test_sigterm_to_torchrun_then_resume_in_one_process(home: Path) -> None:
    ran = run_job(
        home,
        "--items",
        str(ITEMS),
        "--batch-size",
        str(BATCH),
        fault="term-parent:4",
        fault_rank=0,
        processes=2,
    )
    assert ran.returncode != 0  # torchrun itself reports the SIGTERM it got
    stopped = outcome(home)
    assert stopped.run.status == "stopped", ran.stderr[-3000:]
    done = stopped.run.counts["batches_completed"]
    assert 5 <= done < 12 and done % 2 == 0  # both ranks finished their batches of that step
    assert sorted(row["batch"] for row in stopped.rows) == list(range(done))
    process()  # world size 2 -> 1
    resumed = outcome(home)
    assert resumed.run.id == stopped.run.id
    assert_complete(resumed, ITEMS, BATCH)


def test_killed_rank_then_resume_with_two_processes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAULT_ENV, "term-batch:2")
    with pytest.raises(BatchPreempted):
        process()  # one process: batches 0-2
    monkeypatch.delenv(FAULT_ENV)
    args = ("--items", str(ITEMS), "--batch-size", str(BATCH))
    # 1 -> 2 processes: steps (3, 4) (5, 6) (7, 8), a checkpoint, then rank 1 dies on 10
    killed = run_job(home, *args, fault="kill-batch:10", fault_rank=1, processes=2)
    assert killed.returncode != 0
    failed = outcome(home)
    assert failed.run.status == "failed", killed.stderr[-3000:]  # rank 0 lost its peer
    assert sorted(row["batch"] for row in failed.rows) == list(range(9))
    ran = run_job(home, *args, processes=2)  # 2 -> 2
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stderr.count("resuming run") == 1, "the chief says it, the other rank is quiet"
    assert ran.stderr.count(" completed: batch 12/12") == 1
    assert_complete(outcome(home), ITEMS, BATCH)
