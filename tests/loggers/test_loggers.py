"""Metric loggers: what a training run killed and resumed, and a batch run killed and resumed,
wrote to CSV, TensorBoard and MLflow is, read back with each format's reader, what the store
holds, each step once; `graphbook runs export` writes the same from the store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphbook.loggers import CSVLogger, LoggedRun, MLflowLogger, TensorBoardLogger, export_run
from graphbook.store import Store
from graphbook.trainer.errors import EXIT_PREEMPTED
from tests.batch_process.outcome import assert_complete, outcome, run_job
from tests.trainer.runner import ROOT, SCRIPTS, result, run_script

from .readers import by_step, csv_rows, mlflow_rows, store_rows, tensorboard_rows

pytestmark = pytest.mark.timeout(720)  # several processes; MLflow's import is slow


def test_a_killed_and_resumed_training_run_logs_each_step_once(tmp_path: Path) -> None:
    home, logs = tmp_path / "home", tmp_path / "logs"
    env = {
        "GRAPHBOOK_HOME": str(home),
        "RESULT": str(tmp_path / "res.json"),
        "LOGS": str(logs),
        # killed after the reports at step 8 (the last checkpoint is at 6), then stopped at 10
        "FAULTS": "train:8:KILL,train:10:TERM",
        "FAULT_MARKS": str(tmp_path),
        "EPOCHS": "2",
        "GRAPHBOOK_TRAIN_HPARAMS": '{"lr": 0.01}',
    }
    codes = [run_script(SCRIPTS / "resume_job.py", env, tmp_path, timeout=240) for _ in range(3)]
    assert [c.returncode for c in codes] == [-9, EXIT_PREEMPTED, 0], codes[-1].stderr[-3000:]
    run_id = result(tmp_path / "res.json")["run_id"]
    stored = store_rows(home, run_id)
    steps = [step for step, _ in stored["training"]]
    assert steps == sorted(set(steps)) and 8 in steps and steps[-1] == 12

    assert csv_rows(logs / "csv") == stored
    assert tensorboard_rows(logs / "tb") == by_step(store_rows(home, run_id, as_float32=True))
    mlflow, mlflow_run = mlflow_rows((logs / "mlruns").resolve().as_uri(), run_id)
    assert mlflow == by_step(stored)
    assert mlflow_run.data.params == {"lr": "0.01"}

    exported = tmp_path / "exported"
    done = graphbook("runs", "export", run_id, "--to", "csv", str(exported / "csv"), home=home)
    assert done.returncode == 0, done.stderr
    assert csv_rows(exported / "csv") == stored
    # What `--to tensorboard` and `--to mlflow` run, in this process (an import of mlflow alone
    # takes seconds on a busy machine).
    again = [
        TensorBoardLogger(exported / "tensorboard"),
        MLflowLogger((exported / "mlflow").resolve().as_uri()),
    ]
    assert export_run(Store(home / "graphbook.sqlite"), run_id, again) == len(
        Store(home / "graphbook.sqlite").metrics([run_id])
    )
    assert tensorboard_rows(exported / "tensorboard") == tensorboard_rows(logs / "tb")
    assert mlflow_rows((exported / "mlflow").resolve().as_uri(), run_id)[0] == mlflow


def test_a_killed_and_resumed_batch_run_logs_each_row_once(tmp_path: Path) -> None:
    home, logs = tmp_path / "home", tmp_path / "csv"
    args = ("--items", "23", "--batch-size", "2", "--logs", str(logs))
    killed = run_job(home, *args, fault="kill-batch:8")
    assert killed.returncode == -9, killed.stderr[-3000:]
    resumed = run_job(home, *args)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    done = outcome(home)
    assert_complete(done, 23, 2)
    written = csv_rows(logs)
    assert written == store_rows(home, done.run.id)
    assert [step for step, _ in written["batches"]] == list(range(12))


def test_csv_header_grows_with_new_metric_names(tmp_path: Path) -> None:
    logger = CSVLogger(tmp_path)
    logger.open(LoggedRun("r", "name", "train"), [])
    logger.log_hparams({"lr": 0.1})
    logger.log_metrics("training", 2, {"loss": 0.5})
    logger.log_metrics("training", 4, {"loss": 0.25, "accuracy": 0.75})
    logger.log_metrics("training", 6, {"loss": 0.125})
    logger.close()
    text = (tmp_path / "training.csv").read_text()
    assert text.splitlines() == ["step,loss,accuracy", "2,0.5,", "4,0.25,0.75", "6,0.125,"]
    assert '"lr": 0.1' in (tmp_path / "hparams.json").read_text()


def test_export_of_an_unknown_run_says_so(tmp_path: Path) -> None:
    Store(tmp_path / "graphbook.sqlite")
    done = graphbook("runs", "export", "nope", "--to", "csv", str(tmp_path / "out"), home=tmp_path)
    assert done.returncode != 0
    assert "no run 'nope'" in done.stderr


def graphbook(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    path = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "graphbook", *args, "--home", str(home)],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
