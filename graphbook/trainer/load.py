"""Loading a trained trial: from a training run (by id or name), a checkpoint id, a checkpoint
folder, or a registered model version — its hyperparameters and weights, ready to predict."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from graphbook.durable.distributed import SingleProcess
from graphbook.store import CheckpointRecord, Store, data_home
from graphbook.trainer import checkpoints
from graphbook.trainer.context import PyTorchTrialContext, Session, hparams_of, unwrap
from graphbook.trainer.errors import TrainerError, accept_determined_only
from graphbook.trainer.runs import KIND
from graphbook.trainer.trial import PyTorchTrial, trial_class

TrialT = TypeVar("TrialT", bound=PyTorchTrial)


def load_checkpoint_trial(
    trial_cls: type[TrialT] | None = None,
    *,
    run: str | None = None,
    trial_id: str | None = None,
    checkpoint: str | None = None,
    path: Path | str | None = None,
    model: str | None = None,
    version: int = -1,
    which: str = "best",
    hparams: dict[str, Any] | None = None,
    trial_kwargs: dict[str, Any] | None = None,
    session: Session | None = None,
) -> TrialT:
    """`trial_cls` built with the hyperparameters its checkpoint was trained with (updated by
    `hparams`) and its models' weights loaded, in eval mode. Say which checkpoint by one of:
    `run` / `trial_id` (a training run's id or name; its `which` = "best" or "latest"
    checkpoint), `checkpoint` (an id such as `3f2a9c81d0e4-step-40`), `path` (a checkpoint
    folder), or `model` and `version` (a registered model version; -1: the latest).
    Without `trial_cls`, the class the checkpoint was trained with is imported (its module, or
    the script's file)."""
    folder, uuid = locate(run or trial_id, checkpoint, path, model, version, which)
    info = checkpoints.read_info(folder)
    cls: type[Any] = trial_cls if trial_cls is not None else _trained_class(info, uuid)
    state = checkpoints.read_state(folder)
    base = session or Session(
        SingleProcess(),
        hparams_of({}),
        int(info.get("seed", 0)),
        str(info.get("run_name", "")),
        data_home(),
    )
    merged = hparams_of({**info.get("hparams", {}), **(hparams or {})})
    context = PyTorchTrialContext(replace(base, hparams=merged))
    context.checkpoint_uuid = uuid
    trial: TrialT = cls(context, **(trial_kwargs or {}))
    models = [unwrap(m) for m in context.models]
    if len(models) != len(state["models"]):
        raise TrainerError(
            f"checkpoint {uuid} holds {len(state['models'])} model(s) but "
            f"{cls.__name__} wraps {len(models)}"
        )
    for target, weights in zip(models, state["models"], strict=True):
        target.load_state_dict(weights)
        target.eval()
    return trial


def _trained_class(info: dict[str, Any], uuid: str) -> type[PyTorchTrial]:
    if "trial_class" not in info:
        raise TrainerError(f"checkpoint {uuid} does not name its trial class; pass the class")
    return trial_class(info["trial_class"])


def locate(
    run: str | None,
    checkpoint: str | None,
    path: Path | str | None,
    model: str | None,
    version: int,
    which: str,
) -> tuple[Path, str]:
    """The checkpoint folder and id one of the ways of naming a checkpoint points at."""
    given = [
        n
        for n, v in (("run", run), ("checkpoint", checkpoint), ("path", path), ("model", model))
        if v is not None
    ]
    if len(given) != 1:
        raise TrainerError(
            "say which checkpoint to load with exactly one of run= (or trial_id=), "
            f"checkpoint=, path= or model=; got {', '.join(given) or 'none'}"
        )
    if path is not None:
        folder = Path(path)
        return folder, str(checkpoints.read_info(folder).get("uuid", folder.name))
    store = _store()
    if checkpoint is not None:
        return _folder(_checkpoint(store, checkpoint)), checkpoint
    if model is not None:
        uuid = _version(store, model, version)
        return _folder(_checkpoint(store, uuid)), uuid
    assert run is not None
    return _of_run(store, str(run), which)


def _store() -> Store:
    path = data_home() / "graphbook.sqlite"
    if not path.exists():
        raise TrainerError(
            f"no run store at {path}: nothing has been trained here yet "
            "(set GRAPHBOOK_HOME to the data directory you trained in)"
        )
    return Store(path)


def _checkpoint(store: Store, uuid: str) -> CheckpointRecord:
    try:
        return store.get_checkpoint(uuid)
    except KeyError:
        raise TrainerError(f"no checkpoint {uuid!r} in the run store at {store.path}") from None


def _version(store: Store, model: str, version: int) -> str:
    versions = store.model_versions(model)
    if not versions:
        raise TrainerError(f"no model named {model!r}; register a version first")
    number = versions[-1].version if version == -1 else version
    try:
        return store.model_version_checkpoint(model, number)
    except KeyError:
        raise TrainerError(f"model {model!r} has no version {number}") from None


def _of_run(store: Store, run: str, which: str) -> tuple[Path, str]:
    if which not in ("best", "latest"):
        raise TrainerError(f"which must be 'best' or 'latest', got {which!r}")
    try:
        record = store.get_run(run)
    except KeyError:
        found = store.latest_run(KIND, run)
        if found is None:
            raise TrainerError(f"no training run with id or name {run!r}") from None
        record = found
    latest = checkpoints.latest(store, record.id)
    if latest is None:
        raise TrainerError(f"training run {record.id} ({record.name!r}) has no checkpoint")
    chosen = latest
    best = latest.metadata.get("best_checkpoint")
    if which == "best" and best:
        chosen = next((c for c in store.checkpoints(record.id) if c.uuid == best), latest)
    return _folder(chosen), chosen.uuid


def _folder(record: CheckpointRecord) -> Path:
    folder = Path(record.path)
    if not folder.is_dir():
        raise TrainerError(f"checkpoint {record.uuid}'s folder {folder} is gone")
    return folder


def load_trial_from_checkpoint_path(
    path: Path | str,
    trial_class: type[TrialT] | None = None,
    trial_kwargs: dict[str, Any] | None = None,
    **_determined_only: Any,
) -> TrialT:
    """Determined's spelling: `load_checkpoint_trial(trial_class, path=path)`."""
    accept_determined_only(
        "load_trial_from_checkpoint_path", _determined_only, ("torch_load_kwargs",)
    )
    return load_checkpoint_trial(trial_class, path=path, trial_kwargs=trial_kwargs)
