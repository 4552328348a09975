"""The training loop: `Trainer(trial, context).fit(...)` trains a PyTorchTrial on every process,
validates, reports and checkpoints when their periods come due (and once more at the end if
stale), stops cleanly on SIGTERM/SIGINT (exit 75) or when the trial asks, and resumes a run
exactly where its latest checkpoint left it — weights, optimizer, RNGs and data position."""

from __future__ import annotations

import logging
import os
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from graphbook.durable.distributed import Collective
from graphbook.durable.identity import data_identity
from graphbook.durable.lock import run_lock
from graphbook.durable.names import qualified_name
from graphbook.durable.signals import StopSignals
from graphbook.loggers.base import LoggedRun, MetricLogger, MetricLoggers, checked
from graphbook.plain import plain_metric
from graphbook.store import Store
from graphbook.trainer import checkpoints, rng
from graphbook.trainer.checkpoints import Retention, Snapshot
from graphbook.trainer.context import LRScheduler, PyTorchTrialContext, unwrap
from graphbook.trainer.data import DataLoader, Reader, Shard, as_loader
from graphbook.trainer.errors import (
    TrainerError,
    TrainingPreempted,
    TrainingResumeError,
    accept_determined_only,
)
from graphbook.trainer.identity import model_changes, model_shapes
from graphbook.trainer.metrics import (
    Window,
    across_ranks,
    average,
    evaluation_reduce,
    load_reducer_states,
    reduce_wrapped,
    reducer_states,
)
from graphbook.trainer.progress import Display
from graphbook.trainer.runs import (
    MAX_LENGTH_ENV,
    PROGRESS_ENV,
    RunStart,
    resume_refusal,
    start_or_resume,
)
from graphbook.trainer.trial import (
    PyTorchCallback,
    PyTorchTrial,
    accepts,
    as_metrics,
    check_trial,
    trial_reference,
)
from graphbook.trainer.units import Batch, Epoch, Length, TrainUnit, check_period, period_due

logger = logging.getLogger(__name__)
DEFAULT_REPORTING = Batch(10)
FLUSH_SECONDS = 1.0


@dataclass(frozen=True)
class FitSettings:
    max_length: TrainUnit
    validation_period: TrainUnit | None
    checkpoint_period: TrainUnit | None
    reporting_period: TrainUnit
    retention: Retention
    step_zero_validation: bool = False
    test_mode: bool = False
    progress: bool = True
    profile: bool = False
    loggers: tuple[MetricLogger, ...] = ()


PROFILE_SCHEDULE = {"wait": 1, "warmup": 1, "active": 3, "repeat": 1}
"""With profiling_enabled: batches skipped, warmed up on, then traced (once per attempt)."""


@dataclass
class LoopState:
    """Where the run is; saved in every checkpoint."""

    batches: int = 0
    last_report: int = 0
    last_validation: int = -1
    last_checkpoint: int = -1
    best_value: float | None = None
    best_checkpoint: str | None = None
    latest_checkpoint: str | None = None
    training: dict[str, Any] = field(default_factory=dict)
    validation: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainResult:
    """What `train` returns: the run, where it ended, and its last metrics."""

    run_id: str
    run_name: str
    batches: int
    epochs: float
    training: dict[str, Any]
    validation: dict[str, Any]
    checkpoint: str | None
    best_checkpoint: str | None
    stopped: bool = False

    def __getitem__(self, key: str) -> Any:
        """Validation metrics by name (`result["loss"]`), then training metrics."""
        if key in self.validation:
            return self.validation[key]
        return self.training[key]


@dataclass(frozen=True)
class RankState:
    """What each process adds to a checkpoint."""

    rng: dict[str, Any]
    reducers: dict[str, Any]
    window: list[dict[str, Any]]
    grads: list[list[torch.Tensor | None]] | None = None
    """Gradients accumulated and not yet stepped on (aggregation_frequency > 1, or a trial
    that steps every few batches itself): each model's, by parameter; None when there are
    none. Each process's own: under DDP they are exchanged only at the step."""


class Trainer:
    """Trains `trial` (built with `context`); Determined's `det.pytorch.Trainer`."""

    def __init__(self, trial: PyTorchTrial, context: PyTorchTrialContext) -> None:
        check_trial(trial)
        self.trial = trial
        self.context = context
        self.collective: Collective = context._session.collective
        self.rank = self.collective.rank

    def fit(
        self,
        train_data: Any = None,
        val_data: Any = None,
        *,
        max_length: Any = None,
        min_validation_period: Any = None,
        min_checkpoint_period: Any = None,
        validation_period: Any = None,
        checkpoint_period: Any = None,
        reporting_period: Any = None,
        checkpoint_policy: str = "best",
        searcher_metric: str | None = None,
        smaller_is_better: bool = True,
        keep_last: int | None = None,
        step_zero_validation: bool = False,
        test_mode: bool = False,
        progress: bool = True,
        latest_checkpoint: Any = None,
        profiling_enabled: bool = False,
        loggers: Any = None,
        **_determined_only: Any,
    ) -> TrainResult:
        """Train for `max_length` (det.Epochs(n) / det.Batches(n)), validating every
        `min_validation_period` and checkpointing every `min_checkpoint_period` (each an int
        period or a schedule such as det.Batches([5, 30]); Determined's `validation_period` /
        `checkpoint_period` are the same), and once more at the end if stale.

        An unfinished run of the same name resumes from its latest checkpoint. Data is
        `train_data` / `val_data`, else the trial's build_*_data_loader(). Checkpoints kept:
        `checkpoint_policy` "best" (by `searcher_metric`, default validation_loss or loss;
        `smaller_is_better`), "all" or "none", plus the last `keep_last`. Training metrics are
        averaged over each `reporting_period` (default det.Batches(10)). SIGTERM/SIGINT stop
        after the current batch with a checkpoint and exit status 75. `profiling_enabled`
        traces a few batches with torch.profiler into the run's folder (`profile/*.pt.trace.json`,
        for Perfetto or TensorBoard). `loggers` (CSVLogger, TensorBoardLogger, MLflowLogger from
        graphbook.loggers) get every metric row the store gets, on rank 0. Returns the last
        metrics.
        """
        accept_determined_only("train", _determined_only, ())
        if latest_checkpoint is not None:
            raise TrainerError(
                "latest_checkpoint is not needed here: an unfinished run of the same name "
                "resumes from its latest checkpoint by itself"
            )
        settings = fit_settings(
            max_length,
            _one_of("validation", min_validation_period, validation_period),
            _one_of("checkpoint", min_checkpoint_period, checkpoint_period),
            reporting_period,
            Retention(checkpoint_policy, searcher_metric, smaller_is_better, keep_last),  # type: ignore[arg-type]
            step_zero_validation=step_zero_validation,
            test_mode=test_mode,
            progress=progress and os.environ.get(PROGRESS_ENV, "1") != "0",
            profile=bool(profiling_enabled),
            loggers=tuple(checked(loggers))
            if loggers is not None
            else self.context._session.loggers,
        )
        return self.fit_with(train_data, val_data, settings)

    def fit_with(self, train_data: Any, val_data: Any, settings: FitSettings) -> TrainResult:
        if not self.context.models or not self.context.optimizers:
            what = "model" if not self.context.models else "optimizer"
            raise TrainerError(
                f"{type(self.trial).__name__}.__init__ wrapped no {what}: call "
                f"context.wrap_{what}(...) for every {what} it trains"
            )
        train = as_loader(
            train_data if train_data is not None else self.trial.build_training_data_loader(),
            "train_data",
        )
        val = as_loader(
            val_data if val_data is not None else self.trial.build_validation_data_loader(),
            "val_data",
        )
        return _Run(self, train, val, settings).go()


def _one_of(what: str, determined: Any, shipped: Any) -> Any:
    if determined is not None and shipped is not None:
        raise TrainerError(
            f"give min_{what}_period or {what}_period, not both (they mean the same)"
        )
    return determined if determined is not None else shipped


def fit_settings(
    max_length: Any,
    validation_period: Any,
    checkpoint_period: Any,
    reporting_period: Any,
    retention: Retention,
    **flags: Any,
) -> FitSettings:
    """Check `train`'s arguments; the length from $GRAPHBOOK_TRAIN_MAX_LENGTH (a search's
    `max_length`) wins over the script's."""
    from_env = os.environ.get(MAX_LENGTH_ENV)
    if from_env:
        max_length = parse_length(from_env)
    if max_length is None:
        raise TrainerError("train() needs max_length, e.g. max_length=det.Epochs(10)")
    if not isinstance(max_length, TrainUnit) or max_length.is_schedule():
        raise TrainerError(
            f"max_length must be det.Epochs(n) or det.Batches(n), got {max_length!r}"
        )
    reporting = check_period("reporting_period", reporting_period) or DEFAULT_REPORTING
    return FitSettings(
        max_length,
        check_period("min_validation_period", validation_period),
        check_period("min_checkpoint_period", checkpoint_period),
        reporting,
        retention,
        **flags,
    )


def parse_length(text: str) -> TrainUnit:
    """`epochs:20` or `batches:500` (a search's max_length)."""
    unit, _, count = text.partition(":")
    kinds: dict[str, type[TrainUnit]] = {"epochs": Epoch, "batches": Batch}
    if unit not in kinds or not count.isdigit():
        raise TrainerError(f"${MAX_LENGTH_ENV} must be epochs:N or batches:N, got {text!r}")
    return kinds[unit](int(count))


class _Run:
    """One attempt at training, on one process."""

    def __init__(
        self, trainer: Trainer, train: DataLoader, val: DataLoader, settings: FitSettings
    ) -> None:
        self.trial = trainer.trial
        self.context = trainer.context
        self.session = trainer.context._session
        self.collective = trainer.collective
        self.rank = trainer.rank
        self.settings = settings
        shard = Shard(self.rank, self.collective.size, self.session.seed)
        self.reader = Reader(train, shard, self.context.device)
        self.val = val
        self.val_shard = shard
        self.epoch_length = self.reader.steps
        self.length = Length.of(settings.max_length, self.epoch_length).batches
        if settings.test_mode:
            self.length = 1
        self.state = LoopState()
        self.window = Window()
        self.callbacks: dict[str, PyTorchCallback] = self.trial.build_callbacks()
        self.store: Store | None = None
        self.run: RunStart | None = None
        self.display = Display(
            self.rank == 0,
            settings.progress,
            self.length,
            self.epoch_length,
            self.session.run_name,
        )
        self._best_pending = False
        self._loaded = False
        """Whether the loop's state is this run's: from the start, or the checkpoint loaded."""
        self._rows: list[tuple[str, int, dict[str, Any]]] = []
        self.loggers = MetricLoggers(settings.loggers)
        self._flushed = time.monotonic()
        self._eval_takes_index = accepts(
            getattr(self.trial, "evaluate_batch", None) or (lambda b: None), 2
        )

    # -- the attempt ---------------------------------------------------------------------------
    def go(self) -> TrainResult:
        with StopSignals() as stop, ExitStack() as stack:
            self.run = self._agree_on_run(stack)
            try:
                self._resume()
                self._open_loggers()
                self._call("on_trial_startup", self.state.batches, self.state.latest_checkpoint)
                return self._train(stop)
            except TrainingPreempted:
                raise
            except TrainingResumeError:
                self._keep_record()
                raise
            except BaseException as exc:
                self._record_failure(exc)
                raise
            finally:
                self.display.close()
                self.loggers.close()
                self._call("on_trial_shutdown")

    def _agree_on_run(self, stack: ExitStack) -> RunStart:
        if self.rank != 0:
            start = self.collective.broadcast(None)
            if isinstance(start, str):
                raise TrainerError(f"rank 0 could not start the run: {start}")
            assert isinstance(start, RunStart)
            return start
        try:
            store = Store()
            stack.enter_context(
                run_lock(store.path.parent, "train:" + self.session.run_name, TrainerError)
            )
            start = start_or_resume(
                store, self.session.run_name, self.session.start_over, self._config()
            )
        except Exception as exc:
            self.collective.broadcast(f"{type(exc).__name__}: {exc}")
            raise
        self.store = store
        return self.collective.broadcast(start)

    def _config(self) -> dict[str, Any]:
        return {
            "hparams": plain_metric(dict(self.session.hparams)),
            "seed": self.session.seed,
            "trial": qualified_name(type(self.trial)),
            "global_batch_size": self.reader.loader.batch_size * self.collective.size,
            "train_data": data_identity(self.reader.loader.dataset),
            "models": model_shapes([unwrap(m) for m in self.context.models]),
            "world_size": self.collective.size,
            "max_length": str(self.settings.max_length),
            "epoch_length": self.epoch_length,
        }

    def _train(self, stop: StopSignals) -> TrainResult:
        self._call("on_training_start")
        self.display.start(self.state.batches)
        if self.settings.step_zero_validation and self.state.last_validation < 0:
            self._validate()
        stopped = False
        with ExitStack() as stack:
            profiler = stack.enter_context(self._profiler()) if self.settings.profile else None
            while self.state.batches < self.length and not stopped:
                epoch, start = divmod(self.state.batches, self.epoch_length)
                if start == 0:
                    self._call("on_training_epoch_start", epoch)
                for batch in self.reader.read(epoch, start):
                    self._step(batch, epoch)
                    if profiler is not None:
                        profiler.step()
                    stopped = self._after_step(stop, epoch)
                    if stopped or self.state.batches >= self.length:
                        break
        return self._finish(stopped)

    def _profiler(self) -> torch.profiler.profile:
        """torch.profiler over a few batches; each process writes its trace into the run's
        `profile` folder, a Chrome trace that Perfetto (ui.perfetto.dev) and TensorBoard's
        profiler plugin open."""
        assert self.run is not None
        folder = self.run.root / "profile"
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.context.device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        handler = torch.profiler.tensorboard_trace_handler(
            str(folder), worker_name=f"rank{self.rank}"
        )
        self.display.say(f"profiling {PROFILE_SCHEDULE['active']} batches into {folder}")
        return torch.profiler.profile(
            activities=activities,
            schedule=torch.profiler.schedule(**PROFILE_SCHEDULE),
            on_trace_ready=handler,
        )

    # -- one step ------------------------------------------------------------------------------
    def _step(self, batch: Any, epoch: int) -> None:
        context, index = self.context, self.state.batches
        context._set_position(index, self.epoch_length)
        if context.experimental.auto_to_device:
            batch = context.to_device(batch)
        metrics = as_metrics(self.trial.train_batch(batch, epoch, index), "train_batch")
        self.window.add(metrics)
        for wrapped in context.schedulers:
            if wrapped.step_mode is LRScheduler.StepMode.STEP_EVERY_BATCH and (
                (index + 1) % wrapped.frequency == 0
            ):
                wrapped.scheduler.step()
        if context._amp and context.scaler is not None:
            context.scaler.update()

    def _after_step(self, stop: StopSignals, epoch: int) -> bool:
        """Count the batch, then report, validate and checkpoint as due; True to stop."""
        state = self.state
        state.batches += 1
        # One all-reduce: did any process get a signal (stop), did any trial ask to stop
        # (counted in `batches`).
        flags = self.collective.step_flags(stop.requested, self.context.get_stop_requested())
        asked = flags.batches > 0
        if state.batches % self.epoch_length == 0:
            self._end_epoch(epoch)
        validate = period_due(self.settings.validation_period, state.batches, self.epoch_length)
        save = period_due(self.settings.checkpoint_period, state.batches, self.epoch_length)
        last = state.batches >= self.length or asked
        due = period_due(self.settings.reporting_period, state.batches, self.epoch_length)
        if due or validate or save or last:
            self._report()
        self.display.advance(state.batches, state.training.get("loss"))
        if validate or (last and state.last_validation != state.batches):
            self._validate()
            if not last and self._stop_asked_in_validation():
                asked = last = True  # stop at once: this validation is the last one
        if (save or self._best_pending) and not last:
            self._checkpoint()  # the last one is the end's, with the run's final status
        if flags.stop:
            self._preempt(stop)
        return asked

    def _stop_asked_in_validation(self) -> bool:
        """Whether a callback (on_validation_end, say) asked to stop, on any process; every
        process validates at the same batches, so all of them ask."""
        asked = self.context.get_stop_requested()
        return self.collective.step_flags(False, asked).batches > 0

    def _end_epoch(self, epoch: int) -> None:
        for wrapped in self.context.schedulers:
            if wrapped.step_mode is LRScheduler.StepMode.STEP_EVERY_EPOCH and (
                (epoch + 1) % wrapped.frequency == 0
            ):
                wrapped.scheduler.step()
        self._call("on_training_epoch_end", epoch)

    def _preempt(self, stop: StopSignals) -> None:
        if self.state.last_checkpoint != self.state.batches:
            self._checkpoint(status="stopped")
        elif self.store is not None and self.run is not None:
            self._flush()
            self.store.set_status(self.run.run_id, "stopped")
        assert self.run is not None
        self.display.close()
        self.display.say(
            f"stopped after batch {self.state.batches}; checkpointed: run the same command "
            "again to resume"
        )
        raise TrainingPreempted(self.run.run_id, self.state.batches, stop.signum or 15)

    # -- reporting and validation ------------------------------------------------------------------
    def _report(self) -> None:
        batches = self.window.take()
        if not batches:
            return
        averaged = across_ranks(self.collective, average(batches), len(batches))
        metrics = {**averaged, **reduce_wrapped(self.collective, self.context.reducers, True)}
        self.state.training = plain_metric(metrics)
        self.state.last_report = self.state.batches
        self._store_metrics("training", self.state.training)
        # Determined's callbacks read the period's batch count from avg_metrics.
        self._call("on_training_workload_end", {**averaged, "batches": len(batches)}, batches)

    def _validate(self) -> None:
        self._call("on_validation_start")
        self._call("on_validation_epoch_start")
        for wrapped in self.context.reducers:
            if wrapped.for_validation:  # it counts this validation only
                wrapped.reducer.reset()
        for model in self.context.models:
            model.eval()
        try:
            with torch.no_grad():
                metrics, outputs = self._evaluate()
        finally:
            for model in self.context.models:
                model.train()
        metrics = plain_metric(
            {**metrics, **reduce_wrapped(self.collective, self.context.reducers, False)}
        )
        self._call("on_validation_epoch_end", outputs)
        self._call("on_validation_end", metrics)
        state = self.state
        state.validation, state.last_validation = metrics, state.batches
        self._store_metrics("validation", metrics)
        self.display.validated(state.batches, state.training.get("loss"), metrics)
        self._rank_best(metrics)

    def _evaluate(self) -> tuple[dict[str, Any], list[Any]]:
        if callable(getattr(self.trial, "evaluate_full_dataset", None)):
            result: dict[str, Any] = {}
            if self.rank == 0:
                full = getattr(self.trial, "evaluate_full_dataset")  # noqa: B009 (checked)
                result = plain_metric(as_metrics(full(self.val), "evaluate_full_dataset"))
            return self.collective.broadcast(result), []
        reader = Reader(self.val, self.val_shard, self.context.device)
        outputs = []
        evaluate = self.trial.evaluate_batch  # type: ignore[attr-defined]
        for index, batch in enumerate(reader.read(0, 0, shuffle=False)):
            moved = (
                self.context.to_device(batch) if self.context.experimental.auto_to_device else batch
            )
            value = evaluate(moved, index) if self._eval_takes_index else evaluate(moved)
            outputs.append(plain_metric(as_metrics(value, "evaluate_batch")))
        reducer = self.trial.evaluation_reducer()
        mine = evaluation_reduce(outputs, reducer)
        return across_ranks(self.collective, mine, len(outputs), reducer), outputs

    def _rank_best(self, metrics: dict[str, Any]) -> None:
        """Policy "all" checkpoints after every validation, "best" after each new best."""
        retention, state = self.settings.retention, self.state
        name = retention.metric_of(metrics)
        value = metrics.get(name) if name is not None else None
        better = isinstance(value, int | float) and retention.better(float(value), state.best_value)
        if better:
            state.best_value = float(value)  # type: ignore[arg-type]
        if retention.policy == "none":
            return
        self._best_pending = self._best_pending or better or retention.policy == "all"
        if better:
            assert self.run is not None
            state.best_checkpoint = checkpoints.checkpoint_id(self.run.run_id, state.batches)

    def _store_metrics(self, group: str, metrics: dict[str, Any]) -> None:
        """Metrics go to the store in one transaction per FLUSH_SECONDS (a commit per report
        would cost more than small batches do), and before every checkpoint and the end."""
        if self.store is None:
            return
        self._rows.append((group, self.state.batches, metrics))
        self.loggers.log_metrics(group, self.state.batches, metrics)
        if time.monotonic() - self._flushed >= FLUSH_SECONDS:
            self._flush()

    def _flush(self) -> None:
        if self.store is not None and self.run is not None and self._rows:
            self.store.report_metric_rows(self.run.run_id, self._rows)
        self._rows, self._flushed = [], time.monotonic()

    # -- checkpoints -----------------------------------------------------------------------------
    def _checkpoint(self, status: str | None = None) -> None:
        assert self.run is not None
        state = self.state
        self._best_pending = False
        state.last_checkpoint = state.batches
        state.latest_checkpoint = checkpoints.checkpoint_id(self.run.run_id, state.batches)
        mine = RankState(
            rng.capture(),
            reducer_states(self.context.reducers),
            self.window.numbers(),
            self._pending_grads(),
        )
        ranks = self.collective.gather(mine)
        uuid = None
        if self.store is not None:
            uuid = self._write(ranks, status)
        uuid = self.collective.broadcast(uuid)
        self._call("on_checkpoint_upload_end", uuid)

    def _pending_grads(self) -> list[list[torch.Tensor | None]] | None:
        grads = [
            [None if p.grad is None else p.grad.detach().cpu().clone() for p in m.parameters()]
            for m in map(unwrap, self.context.models)
        ]
        return grads if any(g is not None for model in grads for g in model) else None

    def _restore_grads(self, grads: list[list[torch.Tensor | None]] | None) -> None:
        models = [unwrap(m) for m in self.context.models]
        if grads is None:
            return
        for model, saved in zip(models, grads, strict=True):
            for param, grad in zip(model.parameters(), saved, strict=True):
                param.grad = None if grad is None else grad.to(param.device, param.dtype)

    def _write(self, ranks: list[RankState], status: str | None) -> str:
        assert self.store is not None and self.run is not None
        self._flush()  # the checkpoint records how many metric rows precede it
        context = self.context
        payload: dict[str, Any] = {
            "format": checkpoints.FORMAT,
            "models": [unwrap(m).state_dict() for m in context.models],
            "optimizers": [o.state_dict() for o in context.optimizers],
            "schedulers": [w.scheduler.state_dict() for w in context.schedulers],
            "scaler": context.scaler.state_dict() if context.scaler is not None else None,
            "callbacks": {n: c.state_dict() for n, c in self.callbacks.items()},
            "ranks": [asdict(r) for r in ranks],
            "loop": asdict(self.state),
        }
        self._call("on_checkpoint_save_start", payload)
        snapshot = Snapshot(self.run.run_id, self.state.batches, payload, self._info())
        uuid, folder = checkpoints.write(
            self.store, self.run.folders, snapshot, status, self._counts()
        )
        self._call("on_checkpoint_write_end", str(folder))
        self._call("on_checkpoint_end", str(folder))  # Determined's older name for it
        checkpoints.prune(
            self.store,
            self.run.run_id,
            self.settings.retention,
            self.state.best_checkpoint,
            done=False,
        )
        return uuid

    def _info(self) -> dict[str, Any]:
        assert self.run is not None
        state = self.state
        return {
            "run_id": self.run.run_id,
            "run_name": self.run.name,
            "batches": state.batches,
            "epoch": state.batches / self.epoch_length,
            "trial": qualified_name(type(self.trial)),
            "trial_class": trial_reference(type(self.trial)),
            "hparams": plain_metric(dict(self.session.hparams)),
            "seed": self.session.seed,
            "world_size": self.collective.size,
            "best_checkpoint": state.best_checkpoint,
            "training": state.training,
            "validation": state.validation if state.last_validation == state.batches else {},
        }

    def _counts(self) -> dict[str, Any]:
        return {
            "batches_completed": self.state.batches,
            "total_batches": self.length,
            "epochs": round(self.state.batches / self.epoch_length, 3),
        }

    def _resume(self) -> None:
        run = self.run
        assert run is not None
        if run.checkpoint is None:
            self._loaded = True
            if run.resumed and self.store is not None:
                self.store.truncate_metrics(run.run_id, 0)
            again = " again from the start (no checkpoint yet)" if run.resumed else ""
            self.display.say(
                f"training run {run.run_id} ({run.name}){again}: {self.length} batches, "
                f"{self.epoch_length} per epoch"
            )
            return
        folder = run.folders.checkpoint(run.checkpoint.uuid)
        payload = checkpoints.read_state(folder)
        self._call("on_checkpoint_load_start", payload)
        self._load(payload)
        self._loaded = True
        if self.store is not None:
            self.store.truncate_metrics(run.run_id, int(run.checkpoint.metadata["metric_rows"]))
        epoch, batch = divmod(self.state.batches, self.epoch_length)
        self.display.say(
            f"resuming run {run.run_id} ({run.name}) from checkpoint {run.checkpoint.uuid}: "
            f"epoch {epoch + 1}, batch {batch} of {self.epoch_length} "
            f"({self.state.batches} of {self.length} batches done)"
        )

    def _open_loggers(self) -> None:
        """Rank 0's loggers start from the rows the store kept (a resume's, up to its
        checkpoint), so a step logged after the checkpoint before a kill is not there twice."""
        run = self.run
        if self.store is None or run is None or not self.loggers:
            return
        history = self.store.metrics([run.run_id])
        self.loggers.open(LoggedRun(run.run_id, run.name, "train"), history, self.session.hparams)

    def _load(self, payload: dict[str, Any]) -> None:
        context = self.context
        saved = [
            {k: list(getattr(v, "shape", ())) for k, v in m.items()} for m in payload["models"]
        ]
        changes = model_changes(saved, model_shapes([unwrap(m) for m in context.models]))
        if changes:
            assert self.run is not None
            raise TrainingResumeError(resume_refusal(self.run.run_id, self.run.name, changes))
        _load_list("model", [unwrap(m) for m in context.models], payload["models"])
        _load_list("optimizer", context.optimizers, payload["optimizers"])
        _load_list("LR scheduler", [w.scheduler for w in context.schedulers], payload["schedulers"])
        if context.scaler is not None and payload.get("scaler") is not None:
            context.scaler.load_state_dict(payload["scaler"])
        for name, callback in self.callbacks.items():
            if name in payload["callbacks"]:
                callback.load_state_dict(payload["callbacks"][name])
        self.state = LoopState(**payload["loop"])
        context._initial_batch = self.state.batches
        ranks = [RankState(**r) for r in payload["ranks"]]
        if len(ranks) == self.collective.size:
            mine = ranks[self.rank]
            rng.restore(mine.rng)
            load_reducer_states(context.reducers, mine.reducers)
            self.window = Window(mine.window)
            self._restore_grads(mine.grads)
        else:
            rng.seed_all(self.session.seed + self.rank + self.state.batches)
            if any(r.grads is not None for r in ranks):
                logger.warning(
                    "resumed with %d processes instead of %d in the middle of an accumulation "
                    "of gradients: the batches accumulated before the checkpoint are dropped",
                    self.collective.size,
                    len(ranks),
                )
            if self.rank == 0:
                self.window = Window([b for r in ranks for b in r.window])
            logger.info(
                "resumed with %d processes instead of %d: RNG streams start afresh",
                self.collective.size,
                len(ranks),
            )

    # -- the end ---------------------------------------------------------------------------------
    def _finish(self, stopped: bool) -> TrainResult:
        state, run = self.state, self.run
        assert run is not None
        self._report()
        if state.last_validation != state.batches:
            self._validate()
        if state.last_checkpoint != state.batches or self._best_pending:
            self._checkpoint(status="completed")
        elif self.store is not None:
            self._flush()
            self.store.finish_run(run.run_id, "completed", self._counts())
        if self.store is not None:
            checkpoints.prune(
                self.store, run.run_id, self.settings.retention, state.best_checkpoint, done=True
            )
        self.display.close()
        self.display.say(self._summary())
        return TrainResult(
            run_id=run.run_id,
            run_name=run.name,
            batches=state.batches,
            epochs=state.batches / self.epoch_length,
            training=dict(state.training),
            validation=dict(state.validation),
            checkpoint=state.latest_checkpoint,
            best_checkpoint=state.best_checkpoint,
            stopped=stopped,
        )

    def _summary(self) -> str:
        shown = " ".join(
            f"{k}={v:.4g}" for k, v in self.state.validation.items() if isinstance(v, float)
        )
        assert self.run is not None
        return (
            f"trained run {self.run.run_id}: {self.state.batches} batches; "
            f"validation {shown or '-'}"
        )

    def _keep_record(self) -> None:
        """A refused resume leaves the run as it was (its status, counts and error)."""
        if self.store is None or self.run is None or self.run.previous_status is None:
            return
        try:
            self.store.set_status(self.run.run_id, self.run.previous_status)
        except Exception:
            logger.exception("could not restore the status of run %s", self.run.run_id)

    def _record_failure(self, exc: BaseException) -> None:
        if self.store is None or self.run is None:
            return
        try:
            self._flush()
            # Failing before the checkpoint was loaded, the run is still where it was.
            counts = self._counts() if self._loaded else self.store.get_run(self.run.run_id).counts
            self.store.finish_run(self.run.run_id, "failed", counts, f"{type(exc).__name__}: {exc}")
        except Exception:
            logger.exception("could not record the failure of run %s", self.run.run_id)

    def _call(self, hook: str, *args: Any) -> None:
        for callback in self.callbacks.values():
            getattr(callback, hook)(*args)


def _load_list(what: str, targets: list[Any], states: list[Any]) -> None:
    if len(targets) != len(states):
        raise TrainerError(
            f"the checkpoint has {len(states)} {what} state(s) but the trial wrapped "
            f"{len(targets)}; build the trial the same way as the run that saved it"
        )
    for target, state in zip(targets, states, strict=True):
        target.load_state_dict(state)
