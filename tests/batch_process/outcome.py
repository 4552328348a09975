"""What a run of tests/batch_process/jobs.py committed, read back through the client; the
checks every complete run must pass; and running the job as a script or under torchrun."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphbook.batch_process.client import Client
from graphbook.store import MetricRecord, RunRecord, Store

from .jobs import FAULT_ENV, FAULT_RANK_ENV

JOBS = Path(__file__).with_name("jobs.py")
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


@dataclass(frozen=True)
class Outcome:
    run: RunRecord
    rows: list[dict[str, Any]]
    metrics: list[MetricRecord]
    folder: Path

    def group(self, name: str) -> list[MetricRecord]:
        return [m for m in self.metrics if m.group == name]

    def reduced(self) -> dict[str, Any]:
        [record] = [m for m in self.group("inference") if "sum" in m.metrics]
        return record.metrics


def outcome(home: Path, run_name: str = "numbers") -> Outcome:
    store = Store(home / "graphbook.sqlite")
    record = store.latest_run("batch", run_name)
    assert record is not None, f"no batch run named {run_name!r}"
    run = Client(store).get_run(record.id)
    rows = [row for path in run.files() for row in json.loads(path.read_text())]
    return Outcome(record, rows, run.get_metrics(), home / "batch" / record.id)


def assert_complete(result: Outcome, items: int, batch_size: int) -> None:
    """Every batch committed exactly once, with the right items, outputs, metrics and reducers."""
    batches = math.ceil(items / batch_size)
    assert result.run.status == "completed"
    assert sorted(row["batch"] for row in result.rows) == list(range(batches))
    for row in result.rows:
        first = row["batch"] * batch_size
        assert row["items"] == list(range(first, min(first + batch_size, items)))
        assert row["outputs"] == [2 * i for i in row["items"]]
    counted = sorted(m.steps_completed for m in result.group("batches"))
    assert counted == list(range(batches)), "each batch's metric is committed exactly once"
    reduced = result.reduced()
    assert reduced["sum"] == items * (items - 1) // 2
    assert reduced["count"] == items
    assert reduced["order"] == list(range(items))
    assert not list(result.folder.glob("checkpoints/*.tmp")), "no uncommitted checkpoint left"
    assert not (result.folder / "staging").exists()


def run_job(
    home: Path,
    *args: str,
    fault: str = "",
    fault_rank: int | None = None,
    processes: int = 0,
) -> subprocess.CompletedProcess[str]:
    """Run jobs.py as a plain process (processes=0) or under torchrun with that many."""
    env = {**os.environ, "GRAPHBOOK_HOME": str(home), FAULT_ENV: fault}
    env.pop(FAULT_RANK_ENV, None)
    if fault_rank is not None:
        env[FAULT_RANK_ENV] = str(fault_rank)
    launcher = [sys.executable]
    if processes:
        launcher += ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]
    return subprocess.run(
        [*launcher, str(JOBS), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
