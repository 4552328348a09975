"""`init()` and the trainer context it returns: the run's seed and hyperparameters, building a
trial, training it, loading a trained one and predicting with it."""

from __future__ import annotations

import atexit
import logging
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from graphbook.durable.distributed import open_collective
from graphbook.loggers.base import checked
from graphbook.store import Store, data_home
from graphbook.trainer import rng
from graphbook.trainer.context import HParams, PyTorchTrialContext, Session, hparams_of
from graphbook.trainer.errors import TrainerError, TrainingResumeError, accept_determined_only
from graphbook.trainer.loop import Trainer, TrainResult
from graphbook.trainer.runs import (
    CONFIG_DATA_ENV,
    HPARAMS_ENV,
    START_OVER_ENV,
    json_env,
    resumable,
    run_name_of,
    start_over_of,
)
from graphbook.trainer.trial import PyTorchTrial

logger = logging.getLogger(__name__)
TrialT = TypeVar("TrialT", bound=PyTorchTrial)


@dataclass(frozen=True)
class TrainingInfo:
    """`context.training`: what this training run is."""

    hparams: HParams
    seed: int
    run_name: str


class TrainerContext(PyTorchTrialContext):
    """What `init()` returns. It is also a trial context, so Determined's shipped spelling
    (`MyTrial(context)` and `Trainer(trial, context).fit(...)`) works too."""

    def __init__(self, session: Session, stack: ExitStack) -> None:
        super().__init__(session)
        self._stack = stack
        self.training = TrainingInfo(session.hparams, session.seed, session.run_name)
        self.config_data: dict[str, Any] = session.config_data

    # -- building and training -------------------------------------------------------------------
    def build_trial(self, trial_cls: type[TrialT], **kwargs: Any) -> TrialT:
        """An instance of `trial_cls`, built with this context (and `kwargs`)."""
        if not (isinstance(trial_cls, type) and issubclass(trial_cls, PyTorchTrial)):
            raise TrainerError(f"build_trial expects a PyTorchTrial subclass, got {trial_cls!r}")
        return trial_cls(self, **kwargs)

    def train(
        self,
        trial: PyTorchTrial,
        train_data: Any = None,
        val_data: Any = None,
        **options: Any,
    ) -> TrainResult:
        """Train `trial`: see `Trainer.fit` for the options (max_length,
        min_validation_period, min_checkpoint_period, ...)."""
        return Trainer(trial, self).fit(train_data, val_data, **options)

    fit = train

    def load_checkpoint_trial(self, trial_cls: type[TrialT], **where: Any) -> TrialT:
        """A trial built from a checkpoint (see `graphbook.trainer.load.load_checkpoint_trial`)."""
        from graphbook.trainer.load import load_checkpoint_trial

        return load_checkpoint_trial(trial_cls, session=self._session, **where)

    def predict(self, trial: PyTorchTrial, data: Any, **options: Any) -> Any:
        """Predictions of `trial` over `data`, in input order (see `graphbook.trainer.predict`)."""
        from graphbook.trainer.predict import predict

        return predict(trial, data, **options)

    # -- the context's life ----------------------------------------------------------------------
    def close(self) -> None:
        """Leave the process group this context joined (also done at exit)."""
        self._stack.close()

    def __enter__(self) -> TrainerContext:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def init(
    hparams: dict[str, Any] | None = None,
    seed: int | None = None,
    *,
    run_name: str | None = None,
    start_over: bool = False,
    config_data: dict[str, Any] | None = None,
    aggregation_frequency: int = 1,
    deterministic: bool = False,
    loggers: Any = None,
    **_determined_only: Any,
) -> TrainerContext:
    """Start this process's part of a training run: join the process group when `torchrun`
    started it (gloo on CPU, nccl on GPUs), set hyperparameters, and seed python, numpy and
    torch from one run seed — `seed`, or the seed of the unfinished run this script resumes,
    or a fresh one (recorded with the run). $GRAPHBOOK_TRAIN_HPARAMS (JSON, as a search sets
    it) overrides `hparams`. `deterministic=True` makes torch use deterministic algorithms
    only (an operation that has none raises), cuDNN among them. `loggers` (graphbook.loggers)
    are the metric loggers of every train() that is given none."""
    accept_determined_only(
        "init", _determined_only, ("exp_conf", "distributed", "enable_tensorboard_logging")
    )
    if aggregation_frequency < 1:
        raise TrainerError(f"aggregation_frequency must be >= 1, got {aggregation_frequency}")
    chosen_loggers = tuple(checked(loggers))
    stack = ExitStack()
    collective = stack.enter_context(open_collective())
    atexit.register(stack.close)
    name = run_name_of(run_name)
    start_over = start_over_of(start_over)
    chosen = collective.broadcast(
        _choose_seed(name, seed, start_over) if collective.rank == 0 else None
    )
    if isinstance(chosen, str):
        stack.close()
        raise TrainingResumeError(chosen)
    assert isinstance(chosen, int)
    rng.seed_all(chosen + collective.rank)
    if deterministic:
        rng.deterministic()
    session = Session(
        collective=collective,
        hparams=hparams_of({**(hparams or {}), **json_env(HPARAMS_ENV)}),
        seed=chosen,
        run_name=name,
        home=data_home(),
        start_over=start_over,
        aggregation_frequency=aggregation_frequency,
        config_data={**(config_data or {}), **json_env(CONFIG_DATA_ENV)},
        exp_conf=dict(_determined_only.get("exp_conf") or {}),
        loggers=chosen_loggers,
    )
    return TrainerContext(session, stack)


def _choose_seed(name: str, seed: int | None, start_over: bool) -> int | str:
    """The run's seed (rank 0), or why it cannot be chosen."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        return f"seed must be a whole number, got {seed!r}"
    previous = None
    if not start_over and Path(data_home(), "graphbook.sqlite").exists():
        previous = resumable(Store(), name)
    if previous is None:
        return seed if seed is not None else rng.draw_seed()
    recorded = int(previous.config.get("seed", 0))
    if seed is not None and seed != recorded:
        return (
            f"cannot resume training run {previous.id} ({name!r}) with seed {seed}: it was "
            f"started with seed {recorded}. Drop seed= to resume it, or start over with "
            f"init(start_over=True) (or {START_OVER_ENV}=1)."
        )
    return recorded
