"""Which training run a script continues, and starting or resuming it.

A training run is identified by its name: `init(run_name=...)`, else $GRAPHBOOK_TRAIN_RUN_NAME,
else the script's path. If the latest training run of that name did not complete (status
running, stopped or failed), running the script again resumes it from its latest checkpoint,
with its own seed, provided its hyperparameters, batch size and training data are the same;
`start_over=True` ($GRAPHBOOK_TRAIN_START_OVER=1, `graphbook train --start-over`) abandons it and
starts a new run. While a run trains, rank 0 holds a lock on its name.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from graphbook.durable.folders import RunFolders, recover
from graphbook.durable.identity import data_changes
from graphbook.durable.names import main_script
from graphbook.store import RESUMABLE, CheckpointRecord, RunRecord, Store
from graphbook.trainer.checkpoints import folders_of, latest
from graphbook.trainer.errors import TrainerError, TrainingResumeError
from graphbook.trainer.identity import model_changes

logger = logging.getLogger(__name__)
RUN_NAME_ENV = "GRAPHBOOK_TRAIN_RUN_NAME"
START_OVER_ENV = "GRAPHBOOK_TRAIN_START_OVER"
HPARAMS_ENV = "GRAPHBOOK_TRAIN_HPARAMS"
CONFIG_DATA_ENV = "GRAPHBOOK_TRAIN_CONFIG_DATA"
MAX_LENGTH_ENV = "GRAPHBOOK_TRAIN_MAX_LENGTH"
PROGRESS_ENV = "GRAPHBOOK_TRAIN_PROGRESS"
KIND: Literal["train"] = "train"


def default_run_name() -> str:
    """The running script's path (the same command run again has the same name)."""
    return main_script() or "python"


def run_name_of(given: str | None) -> str:
    return given or os.environ.get(RUN_NAME_ENV) or default_run_name()


def start_over_of(given: bool) -> bool:
    return given or os.environ.get(START_OVER_ENV, "") not in ("", "0")


def json_env(name: str) -> dict[str, Any]:
    text = os.environ.get(name, "")
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrainerError(f"${name} must hold a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise TrainerError(f"${name} must hold a JSON object, got {text!r}")
    return value


def resumable(store: Store, name: str) -> RunRecord | None:
    """The unfinished training run called `name`, if there is one."""
    run = store.latest_run(KIND, name)
    return run if run is not None and run.status in RESUMABLE else None


@dataclass(frozen=True)
class RunStart:
    """What rank 0 decided; every rank receives it."""

    run_id: str
    name: str
    root: Path
    checkpoint: CheckpointRecord | None
    """The checkpoint to resume from (None: from the start)."""
    resumed: bool
    previous_status: str | None = None
    """The status the resumed run had (a refused resume puts it back)."""

    @property
    def folders(self) -> RunFolders:
        return RunFolders(self.root)


def start_or_resume(store: Store, name: str, start_over: bool, config: dict[str, Any]) -> RunStart:
    """Find or start the run (rank 0, holding the name's lock)."""
    home = store.path.parent
    previous = resumable(store, name)
    if previous is not None and not start_over:
        check_compatible(previous, config)
        folders = folders_of(home, previous.id)
        recover(store, folders, previous.id)
        record = latest(store, previous.id)
        store.set_status(previous.id, "running")
        return RunStart(previous.id, name, folders.root, record, True, previous.status)
    if previous is not None:
        logger.info("starting %r over: abandoning run %s", name, previous.id)
        store.set_status(previous.id, "abandoned")
    run_id = store.start_run(KIND, name, config)
    return RunStart(run_id, name, folders_of(home, run_id).root, None, False)


def check_compatible(run: RunRecord, config: dict[str, Any]) -> None:
    """Refuse to resume `run` with other hyperparameters, seed, batch size, training data or
    model shapes, saying what changed."""
    changes = [
        f"{key} was {_show(run.config.get(key))}, now {_show(config.get(key))}"
        for key in ("hparams", "seed", "global_batch_size")
        if key in run.config and run.config.get(key) != config.get(key)
    ]
    if "train_data" in run.config and "train_data" in config:
        changes += data_changes("train_data", run.config["train_data"], config["train_data"])
    if "models" in run.config and "models" in config:
        changes += model_changes(run.config["models"], config["models"])
    if changes:
        raise TrainingResumeError(resume_refusal(run.id, run.name, changes))


def resume_refusal(run_id: str, name: str, changes: list[str]) -> str:
    return (
        f"cannot resume training run {run_id} ({name!r}): "
        + "; ".join(changes)
        + ". Run it as before to resume it, or start over with init(start_over=True) "
        f"(or {START_OVER_ENV}=1, or `graphbook train --start-over`), or give it another "
        "run_name. The run keeps its checkpoints and status."
    )


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
