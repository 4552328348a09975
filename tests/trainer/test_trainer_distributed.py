"""Under torchrun (gloo on CPU): two processes train one run in DDP on sharded data, with
metrics reduced across them and only rank 0 writing; a SIGTERM stops both after the same step,
and the run resumes and completes in one process."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from graphbook.store import Store

from .runner import SCRIPTS, metric_rows, result, run_python, run_script

pytestmark = pytest.mark.timeout(300)


def test_torchrun_two_processes_then_resume_in_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {
        "GRAPHBOOK_HOME": str(home),
        "RESULT": str(tmp_path / "res.json"),
        "FAULTS": "train:9:TERM",
        "FAULT_MARKS": str(tmp_path),
        "GRAPHBOOK_TRAIN_RUN_NAME": "ddp",
    }
    torchrun = (
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        str(SCRIPTS / "resume_job.py"),
    )
    stopped = run_python(torchrun, env, tmp_path, timeout=240)
    assert stopped.returncode != 0  # torchrun reports the stop it saw
    store = Store(home / "graphbook.sqlite")
    (run,) = store.list_runs("train")
    assert run.status == "stopped", stopped.stderr[-3000:]
    assert run.config["world_size"] == 2 and run.config["global_batch_size"] == 8
    assert run.counts["batches_completed"] == 10  # both ranks finished step 10, then stopped
    validation = store.metrics([run.id], "validation")
    assert [m.steps_completed for m in validation] == [4, 8]
    assert 0.0 <= validation[-1].metrics["accuracy"] <= 1.0  # reduced over both shards
    ranks = {m.metrics.get("rank") for m in store.metrics([run.id])}
    assert ranks == {None}  # one row per report, written by rank 0 only

    resumed = run_script(SCRIPTS / "resume_job.py", env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming run" in resumed.stderr and "10 of 24 batches done" in resumed.stderr
    final = result(tmp_path / "res.json")
    assert final["run_id"] == run.id and final["batches"] == 24
    assert store.get_run(run.id).status == "completed"
    steps = [m.steps_completed for m in store.metrics([run.id], "validation")]
    assert steps == [4, 8, 12, 16, 20, 24]


@pytest.mark.timeout(720)  # three torchrun launches of two processes each
def test_torchrun_stopped_and_resumed_with_two_processes_is_exact(tmp_path: Path) -> None:
    """SIGTERM to one worker: both checkpoint after the same step and exit 75 (torchrun itself
    exits 1, naming the workers' status); the same torchrun command again ends with the weights
    and metric rows of a run that never stopped."""

    def torchrun(home: Path, out: str, faults: str = "") -> subprocess.CompletedProcess[str]:
        env = {
            "GRAPHBOOK_HOME": str(home),
            "RESULT": str(tmp_path / out),
            "FAULTS": faults,
            "FAULT_MARKS": str(tmp_path),
            "GRAPHBOOK_TRAIN_RUN_NAME": "ddp",
            "EPOCHS": "2",
        }
        launch = ("-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2")
        return run_python((*launch, str(SCRIPTS / "resume_job.py")), env, tmp_path, timeout=240)

    reference = torchrun(tmp_path / "ref", "ref.json")
    assert reference.returncode == 0, reference.stderr[-3000:]
    stopped = torchrun(tmp_path / "home", "res.json", "train:5:TERM")
    assert stopped.returncode == 1, stopped.stderr[-3000:]
    assert re.search(r"exitcode\s*:\s*75", stopped.stderr), stopped.stderr[-3000:]
    resumed = torchrun(tmp_path / "home", "res.json", "train:5:TERM")  # its mark is left
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    want, got = result(tmp_path / "ref.json"), result(tmp_path / "res.json")
    assert got["digest"] == want["digest"]
    assert got["validation"] == want["validation"] and got["training"] == want["training"]
    assert metric_rows(tmp_path / "home", got["run_id"]) == metric_rows(
        tmp_path / "ref", want["run_id"]
    )
