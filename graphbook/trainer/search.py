"""Hyperparameter search: run a training script once per trial (one after another, or N at a
time in processes), each trial a training run in the store, and report the best. A search is
itself a run (kind "search") found again by its name, so an interrupted search resumes: trials
that completed are kept, the others resume or start.

The config has Determined's shape (`hyperparameters:` and `searcher:` with `name: grid` or
`random`, `max_trials`, `max_length: {epochs: N}` or `{batches: N}`, `metric`,
`smaller_is_better`); `entrypoint_script: python3 train.py` names the script when none is given.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml

from graphbook.durable.signals import StopSignals
from graphbook.store import RunRecord, Store
from graphbook.trainer.errors import EXIT_PREEMPTED, TrainerError
from graphbook.trainer.runs import (
    HPARAMS_ENV,
    MAX_LENGTH_ENV,
    PROGRESS_ENV,
    RUN_NAME_ENV,
    START_OVER_ENV,
)
from graphbook.trainer.space import grid_trials, parse_space, random_trials

logger = logging.getLogger(__name__)
Notify = Callable[[str], None]


@dataclass(frozen=True)
class SearchConfig:
    script: Path
    trials: list[dict[str, Any]]
    searcher: str
    max_length: str | None
    metric: str | None
    smaller_is_better: bool


@dataclass(frozen=True)
class TrialOutcome:
    index: int
    hparams: dict[str, Any]
    run_id: str | None
    status: str
    validation: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    """Why it failed: its run's error, or (failing before it had a run, in init() or the
    trial's __init__) its exit status and the last line it wrote to stderr."""


@dataclass(frozen=True)
class SearchResult:
    search_id: str
    name: str
    trials: list[TrialOutcome]
    metric: str | None
    best: TrialOutcome | None
    stopped: bool = False


def load_config(
    path: Path, script: Path | None = None, hparams: Mapping[str, Any] | None = None
) -> SearchConfig:
    """Read a search config file; `hparams` are constants added to every trial."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise TrainerError(f"cannot read search config {path}: {exc}") from None
    if not isinstance(data, dict) or "hyperparameters" not in data:
        raise TrainerError(f"{path} needs a `hyperparameters:` mapping")
    return make_config(data, path.parent, script, hparams)


def make_config(
    data: Mapping[str, Any],
    folder: Path,
    script: Path | None = None,
    hparams: Mapping[str, Any] | None = None,
) -> SearchConfig:
    searcher = dict(data.get("searcher") or {"name": "grid"})
    space = parse_space({**dict(hparams or {}), **data["hyperparameters"]})
    name = searcher.get("name", "grid")
    if name == "grid":
        trials = grid_trials(space)
    elif name == "random":
        trials = random_trials(
            space, int(searcher.get("max_trials", 0)), int(searcher.get("seed", 0))
        )
    else:
        raise TrainerError(f"searcher name must be grid or random, got {name!r}")
    return SearchConfig(
        script=_script(script, data.get("entrypoint_script"), folder),
        trials=trials,
        searcher=name,
        max_length=_length(searcher.get("max_length")),
        metric=searcher.get("metric"),
        smaller_is_better=bool(searcher.get("smaller_is_better", True)),
    )


def _script(given: Path | None, entrypoint: Any, folder: Path) -> Path:
    if given is not None:
        return given.resolve()
    words = shlex.split(str(entrypoint or ""))
    scripts = [w for w in words if w.endswith(".py")]
    if not scripts:
        raise TrainerError(
            "name the training script: graphbook train SCRIPT --grid CONFIG, or "
            "entrypoint_script: python3 train.py in the config"
        )
    return (folder / scripts[-1]).resolve()


def _length(spec: Any) -> str | None:
    if spec is None:
        return None
    if isinstance(spec, Mapping) and len(spec) == 1:
        ((unit, count),) = spec.items()
        if unit in ("epochs", "batches") and isinstance(count, int) and count > 0:
            return f"{unit}:{count}"
    raise TrainerError(f"searcher.max_length must be {{epochs: N}} or {{batches: N}}, got {spec!r}")


def trial_name(search: str, index: int) -> str:
    return f"{search}#trial-{index}"


def run_search(
    config: SearchConfig,
    *,
    name: str | None = None,
    parallel: int = 1,
    start_over: bool = False,
    notify: Notify = logger.info,
    python: str = sys.executable,
) -> SearchResult:
    """Run every trial of `config` not yet completed, `parallel` at a time; returns them all
    with the best. A trial stopped by a signal stops the search (status "stopped")."""
    if parallel < 1:
        raise TrainerError(f"parallel must be >= 1, got {parallel}")
    store = Store()
    name = name or f"search:{config.script}"
    search_id = _search_run(store, name, config, start_over, notify)
    pending = [i for i in range(len(config.trials)) if not _completed(store, name, i)]
    notify(
        f"search {search_id} ({name}): {len(config.trials)} trial(s), "
        f"{len(config.trials) - len(pending)} done, {parallel} at a time"
    )
    failures: dict[int, str] = {}
    with StopSignals() as stop:
        stopped = _run_trials(
            config, name, pending, parallel, start_over, notify, python, stop, failures
        )
    result = summarize(store, search_id, name, config, failures)
    completed = sum(t.status == "completed" for t in result.trials)
    failed = [t for t in result.trials if t.status == "failed"]
    error = None
    if stopped:
        status = "stopped"
    elif completed == 0 and result.trials:
        status = "failed"
        error = "every trial failed: " + "; ".join(
            f"trial {t.index}: {t.error or 'failed'}" for t in failed[:3]
        )
        if len(failed) > 3:
            error += f"; and {len(failed) - 3} more"
    else:
        status = "completed"
    counts = {
        "trials": len(config.trials),
        "completed": completed,
        "failed": len(failed),
        "best_run": result.best.run_id if result.best else None,
        "metric": result.metric,
        "errors": {str(t.index): t.error for t in failed if t.error},
    }
    store.finish_run(search_id, status, counts, error)
    return SearchResult(result.search_id, name, result.trials, result.metric, result.best, stopped)


def _search_run(
    store: Store, name: str, config: SearchConfig, start_over: bool, notify: Notify
) -> str:
    previous = store.latest_run("search", name)
    if previous is not None and previous.status != "completed" and not start_over:
        if previous.config.get("trials") != config.trials:
            raise TrainerError(
                f"search {previous.id} ({name!r}) was started with other trials; run it with "
                "the same config to resume it, or pass --start-over"
            )
        store.set_status(previous.id, "running")
        notify(f"resuming search {previous.id}")
        return previous.id
    settings = {
        "script": str(config.script),
        "searcher": config.searcher,
        "trials": config.trials,
        "max_length": config.max_length,
        "metric": config.metric,
    }
    return store.start_run("search", name, settings)


def _completed(store: Store, name: str, index: int) -> bool:
    run = store.latest_run("train", trial_name(name, index))
    return run is not None and run.status == "completed"


def _run_trials(
    config: SearchConfig,
    name: str,
    pending: list[int],
    parallel: int,
    start_over: bool,
    notify: Notify,
    python: str,
    stop: StopSignals,
    failures: dict[int, str],
) -> bool:
    """Run the pending trials; True if one was stopped by a signal. A SIGINT or SIGTERM caught
    by `stop` stops launching trials and is passed on to the running ones (Ctrl-C reaches them
    anyway: repeats are ignored), which checkpoint and exit 75; this waits for them."""
    running: dict[int, subprocess.Popen[bytes]] = {}
    tails: dict[int, _Tail] = {}
    queue, stopped = list(pending), False
    while queue or running:
        stopped = stop.pass_on(running.values()) or stopped
        while queue and len(running) < parallel and not stopped:
            index = queue.pop(0)
            running[index] = _launch(config, name, index, start_over, python)
            tails[index] = _Tail(running[index])
            notify(f"trial {index}: {json.dumps(config.trials[index], sort_keys=True)}")
        if not running:
            break
        for index, process in list(running.items()):
            code = process.poll()
            if code is None:
                continue
            del running[index]
            last = tails.pop(index).finish()
            if code not in (0, EXIT_PREEMPTED):
                failures[index] = f"exit status {code}" + (f": {last}" if last else "")
            stopped = stopped or code == EXIT_PREEMPTED
            notify(
                f"trial {index} "
                + {0: "completed", EXIT_PREEMPTED: "stopped"}.get(
                    code, f"failed (exit status {code})"
                )
            )
        time.sleep(0.05)
    return stopped


def _launch(
    config: SearchConfig, name: str, index: int, start_over: bool, python: str
) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        HPARAMS_ENV: json.dumps(config.trials[index]),
        RUN_NAME_ENV: trial_name(name, index),
        PROGRESS_ENV: "0",
    }
    if config.max_length:
        env[MAX_LENGTH_ENV] = config.max_length
    if start_over:
        env[START_OVER_ENV] = "1"
    return subprocess.Popen(
        [python, str(config.script)], env=env, cwd=config.script.parent, stderr=subprocess.PIPE
    )


class _Tail:
    """Passes a trial's stderr on to ours as it comes, keeping its last lines: a trial that
    fails before it has a run (in init() or its trial's __init__) is known by them."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.lines: deque[str] = deque(maxlen=50)
        self.thread = threading.Thread(target=self._pump, args=(process.stderr,), daemon=True)
        self.thread.start()

    def _pump(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        out = getattr(sys.stderr, "buffer", None)
        for line in iter(stream.readline, b""):
            if out is not None:
                out.write(line)
                out.flush()
            else:
                sys.stderr.write(line.decode(errors="replace"))
            self.lines.append(line.decode(errors="replace").rstrip())
        stream.close()

    def finish(self) -> str:
        """The last line that says something (a traceback's last is the error)."""
        self.thread.join(timeout=5)
        return next((line.strip() for line in reversed(self.lines) if line.strip()), "")


def summarize(
    store: Store,
    search_id: str,
    name: str,
    config: SearchConfig,
    failures: Mapping[int, str] | None = None,
) -> SearchResult:
    failures = failures or {}
    trials = [_outcome(store, name, i, hp, failures.get(i)) for i, hp in enumerate(config.trials)]
    metric = config.metric or _default_metric(trials)
    scored = [
        t
        for t in trials
        if t.status == "completed" and isinstance(t.validation.get(metric or ""), int | float)
    ]
    best = None
    if scored and metric is not None:
        pick = min if config.smaller_is_better else max
        best = pick(scored, key=lambda t: float(t.validation[metric]))
    return SearchResult(search_id, name, trials, metric, best)


def _outcome(
    store: Store, name: str, index: int, hparams: dict[str, Any], failure: str | None
) -> TrialOutcome:
    run: RunRecord | None = store.latest_run("train", trial_name(name, index))
    if run is None or (failure is not None and run.status == "completed"):
        # No run (or an older, completed one of --start-over): it failed before it had one.
        if failure is not None:
            return TrialOutcome(index, hparams, None, "failed", error=failure)
        return TrialOutcome(index, hparams, None, "not started")
    rows = store.metrics([run.id], "validation")
    status = "failed" if failure is not None and run.status != "failed" else run.status
    error = run.error or failure if status == "failed" else None
    return TrialOutcome(
        index, hparams, run.id, status, rows[-1].metrics if rows else {}, error=error
    )


def _default_metric(trials: list[TrialOutcome]) -> str | None:
    for name in ("validation_loss", "loss"):
        if any(name in t.validation for t in trials):
            return name
    return None
