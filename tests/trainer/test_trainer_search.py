"""Hyperparameter search: the seed's grid.yaml through `graphbook train`, trials in parallel
processes, each a training run in the store, the best reported, and a rerun that resumes
instead of training again; search spaces of every type."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from graphbook.store import Store
from graphbook.trainer import TrainerError
from graphbook.trainer.search import make_config, run_search
from graphbook.trainer.space import grid_trials, parse_space, random_trials

from .runner import ROOT, SCRIPTS, run_python


def test_seed_grid_yaml_through_the_cli(tmp_path: Path) -> None:
    shutil.copy(SCRIPTS / "seed_train.py", tmp_path / "train.py")  # its entrypoint_script
    shutil.copy(SCRIPTS / "grid.yaml", tmp_path / "grid.yaml")
    env = {"GRAPHBOOK_HOME": str(tmp_path / "home")}
    command = (
        "-m",
        "graphbook",
        "train",
        "--grid",
        "grid.yaml",
        "--hparam",
        "learning_rate=0.1",
        "--parallel",
        "2",
    )
    done = run_python(command, env, tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    store = Store(tmp_path / "home" / "graphbook.sqlite")
    (search,) = store.list_runs("search")
    assert search.status == "completed" and search.counts["completed"] == 3
    trials = sorted(store.list_runs("train"), key=lambda r: r.name)
    assert [r.config["hparams"]["global_batch_size"] for r in trials] == [16, 32, 64]
    assert all(r.status == "completed" for r in trials)
    for run in trials:  # searcher.max_length (20 epochs) wins over the script's 10
        validations = store.metrics([run.id], "validation")
        assert len(validations) == 20
    best = min(trials, key=lambda r: store.metrics([r.id], "validation")[-1].metrics["loss"])
    assert search.counts["best_run"] == best.id
    assert "best by loss" in done.stdout and re.search(rf"{best.id}\s+│ completed", done.stdout)

    again = run_python(command, env, tmp_path, timeout=120)  # everything done: nothing reruns
    assert again.returncode == 0, again.stderr[-3000:]
    assert "3 trial(s), 3 done" in again.stderr
    assert len(store.list_runs("train")) == 3


def start(command: tuple[str, ...], home: Path, cwd: Path) -> subprocess.Popen[str]:
    """`python command...` in a session of its own (a terminal's process group)."""
    env = {**os.environ, "GRAPHBOOK_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, *command],
        env=env,
        cwd=cwd,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 240
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def checkpointed(home: Path, name_end: str) -> Callable[[], bool]:
    """Whether the training run whose name ends with `name_end` has a checkpoint yet."""

    def check() -> bool:
        if not (home / "graphbook.sqlite").exists():
            return False
        store = Store(home / "graphbook.sqlite")
        runs = [r for r in store.list_runs("train") if r.name.endswith(name_end)]
        return bool(runs) and bool(store.checkpoints(runs[0].id))

    return check


def test_ctrl_c_stops_a_search_which_then_resumes(tmp_path: Path) -> None:
    shutil.copy(SCRIPTS / "slow_train.py", tmp_path / "slow_train.py")
    (tmp_path / "search.yaml").write_text(
        "hyperparameters:\n  learning_rate: {type: categorical, vals: [0.1, 0.2]}\n"
    )
    home = tmp_path / "home"
    command = ("-m", "graphbook", "train", "slow_train.py", "--grid", "search.yaml")
    search = start(command, home, tmp_path)
    wait_for(checkpointed(home, "#trial-1"), search)  # trial 0 done, trial 1 under way
    os.killpg(search.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole group
    _, err = search.communicate(timeout=240)
    assert search.returncode == 75, err
    store = Store(home / "graphbook.sqlite")
    (stopped,) = store.list_runs("search")
    assert stopped.status == "stopped"
    first, second = sorted(store.list_runs("train"), key=lambda r: r.name)
    assert first.status == "completed" and second.status == "stopped"
    assert 1 <= second.counts["batches_completed"] < 8

    again = run_python(command, {"GRAPHBOOK_HOME": str(home)}, tmp_path, timeout=240)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2 trial(s), 1 done" in again.stderr and "resuming run " + second.id in again.stderr
    runs = store.list_runs("train")
    assert sorted(r.id for r in runs) == sorted([first.id, second.id])  # nothing trained anew
    assert all(r.status == "completed" and r.counts["batches_completed"] == 8 for r in runs)
    assert store.get_run(stopped.id).status == "completed"


def test_sigterm_to_graphbook_train_reaches_the_script(tmp_path: Path) -> None:
    """A SIGTERM to `graphbook train` alone (as a scheduler sends it) is passed on: the script
    checkpoints and both exit 75."""
    home = tmp_path / "home"
    script = str(SCRIPTS / "slow_train.py")
    process = start(
        ("-m", "graphbook", "train", script, "--hparam", "learning_rate=0.1"), home, tmp_path
    )
    wait_for(checkpointed(home, "slow_train.py"), process)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=240)
    assert process.returncode == 75, err
    (run,) = Store(home / "graphbook.sqlite").list_runs("train")
    assert run.status == "stopped" and "run the same command again to resume" in err


def test_search_spaces() -> None:
    space = parse_space(
        {
            "lr": {"type": "log", "minval": -3, "maxval": -1, "count": 3},
            "layers": {"type": "int", "minval": 1, "maxval": 3, "count": 3},
            "act": {"type": "categorical", "vals": ["relu", "tanh"]},
            "dropout": {"type": "double", "minval": 0.0, "maxval": 0.5, "count": 2},
            "batch": 32,
        }
    )
    grid = grid_trials(space)
    assert len(grid) == 3 * 3 * 2 * 2
    assert grid[0] == {
        "lr": pytest.approx(1e-3),
        "layers": 1,
        "act": "relu",
        "dropout": 0.0,
        "batch": 32,
    }
    drawn = random_trials(space, 20, seed=3)
    assert drawn == random_trials(space, 20, seed=3)  # the same again: a search resumes
    assert all(1e-3 <= t["lr"] <= 1e-1 and t["layers"] in (1, 2, 3) for t in drawn)
    config = make_config(
        {
            "hyperparameters": {"x": {"type": "double", "minval": 0, "maxval": 1}},
            "searcher": {"name": "random", "max_trials": 4, "max_length": {"batches": 5}},
        },
        Path("."),
        Path("train.py"),
    )
    assert len(config.trials) == 4 and config.max_length == "batches:5"


def test_random_search_from_python(home: Path, tmp_path: Path) -> None:
    config = make_config(
        {
            "hyperparameters": {
                "global_batch_size": {"type": "categorical", "vals": [16, 32, 64]},
                "learning_rate": {"type": "log", "minval": -3, "maxval": -1},
            },
            "searcher": {
                "name": "random",
                "max_trials": 2,
                "seed": 5,
                "max_length": {"batches": 3},
                "metric": "loss",
            },
        },
        tmp_path,
        SCRIPTS / "seed_train.py",
    )
    result = run_search(config, name="python search")
    assert [t.status for t in result.trials] == ["completed", "completed"]
    store = Store()
    for trial, hparams in zip(result.trials, config.trials, strict=True):
        assert trial.hparams == hparams
        assert trial.run_id is not None
        run = store.get_run(trial.run_id)
        assert run.config["hparams"] == hparams and run.counts["batches_completed"] == 3
    best = min(result.trials, key=lambda t: t.validation["loss"])
    assert result.best is not None and result.best.run_id == best.run_id
    (search,) = store.list_runs("search")
    assert search.status == "completed" and search.counts["best_run"] == best.run_id


@pytest.mark.parametrize(
    ("hyperparameters", "message"),
    [
        ({"x": {"type": "double", "minval": 0, "maxval": 1}}, "needs `count` for a grid"),
        ({"x": {"type": "float"}}, "type must be one of const, categorical, int, double, log"),
        ({"x": {"type": "categorical", "vals": []}}, "vals must be a non-empty list"),
        ({"x": {"type": "int", "minval": 3, "maxval": 1}}, "need minval <= maxval"),
        ({"x": {"type": "int", "maxval": 1}}, "needs 'minval'"),
    ],
)
def test_bad_search_spaces(hyperparameters: dict[str, object], message: str) -> None:
    with pytest.raises(TrainerError, match=re.escape(message)):
        make_config({"hyperparameters": hyperparameters}, Path("."), Path("train.py"))


def test_a_search_whose_every_trial_failed_is_failed_and_says_why(home: Path) -> None:
    """The seed's script with no learning_rate: each trial fails in its trial's __init__,
    before it has a training run, and still shows its error."""
    config = make_config(
        {
            "hyperparameters": {"global_batch_size": {"type": "categorical", "vals": [16, 32]}},
            "searcher": {"name": "grid", "max_length": {"batches": 2}},
        },
        home,
        SCRIPTS / "seed_train.py",
    )
    result = run_search(config, name="doomed")
    assert [t.status for t in result.trials] == ["failed", "failed"]
    for trial in result.trials:
        assert trial.error is not None and "'learning_rate' is not set" in trial.error
    (search,) = Store().list_runs("search")
    assert search.status == "failed" and search.counts["completed"] == 0
    assert search.error is not None and "every trial failed" in search.error
    assert "'learning_rate' is not set" in search.error
