"""Resume is exact: a run killed (SIGKILL) or stopped (SIGTERM) at several points and run again
ends with the same weights and the same metrics, bit for bit on CPU, as one that never stopped
(a shuffled loader, random augmentation, dropout, an LR scheduler, a callback and a reducer)."""

from __future__ import annotations

from pathlib import Path

from graphbook.store import Store
from graphbook.trainer.errors import EXIT_PREEMPTED

from .runner import SCRIPTS, metric_rows, result, run_script

JOB = SCRIPTS / "resume_job.py"


def test_killed_and_stopped_run_resumes_bit_for_bit(tmp_path: Path) -> None:
    ref_home, home = tmp_path / "ref", tmp_path / "home"
    done = run_script(
        JOB, {"GRAPHBOOK_HOME": str(ref_home), "RESULT": str(tmp_path / "ref.json")}, tmp_path
    )
    assert done.returncode == 0, done.stderr
    reference = result(tmp_path / "ref.json")

    faults = "train:7:KILL,save:12:KILL,val:16:KILL,write:21:KILL,train:10:TERM,train:22:TERM"
    env = {
        "GRAPHBOOK_HOME": str(home),
        "RESULT": str(tmp_path / "res.json"),
        "FAULTS": faults,
        "FAULT_MARKS": str(tmp_path),
    }
    codes: list[int] = []
    while not (tmp_path / "res.json").exists():
        assert len(codes) < 8, f"did not finish: exit statuses {codes}"
        attempt = run_script(JOB, env, tmp_path)
        codes.append(attempt.returncode)
        if attempt.returncode == 0:
            break
        assert attempt.returncode in (-9, EXIT_PREEMPTED), attempt.stderr
    assert codes == [-9, EXIT_PREEMPTED, -9, -9, -9, EXIT_PREEMPTED, 0]
    resumed = result(tmp_path / "res.json")

    assert resumed["digest"] == reference["digest"]
    assert resumed["validation"] == reference["validation"]
    assert resumed["training"] == reference["training"]
    assert resumed["epochs"] == reference["epochs"] == 4  # the callback's state survived
    assert metric_rows(home, resumed["run_id"]) == metric_rows(ref_home, reference["run_id"])
    runs = Store(home / "graphbook.sqlite").list_runs("train")
    assert [(r.id, r.status) for r in runs] == [(resumed["run_id"], "completed")]


def test_resume_says_from_where_and_start_over_starts_a_new_run(tmp_path: Path) -> None:
    env = {
        "GRAPHBOOK_HOME": str(tmp_path / "home"),
        "RESULT": str(tmp_path / "res.json"),
        "FAULTS": "train:13:TERM",
        "FAULT_MARKS": str(tmp_path),
        "EPOCHS": "3",
    }
    stopped = run_script(JOB, env, tmp_path)
    assert stopped.returncode == EXIT_PREEMPTED
    assert "stopped after batch 14" in stopped.stderr
    resumed = run_script(JOB, env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "from checkpoint" in resumed.stderr
    assert "epoch 3, batch 2 of 6 (14 of 18 batches done)" in resumed.stderr
    first = result(tmp_path / "res.json")["run_id"]

    again = run_script(JOB, {**env, "GRAPHBOOK_TRAIN_START_OVER": "1"}, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "resuming" not in again.stderr
    assert result(tmp_path / "res.json")["run_id"] != first


def test_gradients_accumulated_at_a_checkpoint_resume_with_it(tmp_path: Path) -> None:
    """aggregation_frequency=2, checkpoints at odd batches (every 5, and on a SIGTERM): the
    gradients of the batch not yet stepped on are in the checkpoint."""
    settings = {"AGGREGATE": "2", "CHECKPOINT": "5", "EPOCHS": "2", "VALIDATE": "3"}
    ref_home, home = tmp_path / "ref", tmp_path / "home"
    env = {**settings, "GRAPHBOOK_HOME": str(ref_home), "RESULT": str(tmp_path / "ref.json")}
    done = run_script(JOB, env, tmp_path)
    assert done.returncode == 0, done.stderr
    reference = result(tmp_path / "ref.json")

    env = {
        **settings,
        "GRAPHBOOK_HOME": str(home),
        "RESULT": str(tmp_path / "res.json"),
        "FAULTS": "train:6:KILL,train:8:TERM",  # resumes from 5, stops after 9
        "FAULT_MARKS": str(tmp_path),
    }
    codes = [run_script(JOB, env, tmp_path).returncode for _ in range(3)]
    assert codes == [-9, EXIT_PREEMPTED, 0]
    resumed = result(tmp_path / "res.json")
    assert resumed["digest"] == reference["digest"]
    assert metric_rows(home, resumed["run_id"]) == metric_rows(ref_home, reference["run_id"])
