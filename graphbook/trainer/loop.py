"""The training loop: `Trainer(trial, context).fit(...)` trains a PyTorchTrial on every process,
validates, reports and checkpoints when their periods come due (and once more at the end if
stale), stops cleanly on SIGTERM/SIGINT (exit 75) or when the trial asks, and resumes a run
exactly where its latest checkpoint left it — weights, optimizer, RNGs and data position."""

from __future__ import annotations

import os
from contextlib import ExitStack
from typing import Any

from graphbook.durable.distributed import Collective
from graphbook.durable.signals import StopSignals
from graphbook.loggers.base import MetricLoggers, checked
from graphbook.trainer import checkpoints
from graphbook.trainer.checkpoints import Retention
from graphbook.trainer.context import LRScheduler, PyTorchTrialContext
from graphbook.trainer.data import DataLoader, Reader, Shard, as_loader
from graphbook.trainer.errors import (
    TrainerError,
    TrainingPreempted,
    TrainingResumeError,
    accept_determined_only,
)
from graphbook.trainer.metrics import Window
from graphbook.trainer.parts import FitSettings, LoopState, RankState, RunParts
from graphbook.trainer.profiling import profiler
from graphbook.trainer.progress import Display
from graphbook.trainer.record import RunRecord, TrainResult, counts, report, result, summary
from graphbook.trainer.resuming import Resume
from graphbook.trainer.runs import MAX_LENGTH_ENV, PROGRESS_ENV
from graphbook.trainer.saving import Saving
from graphbook.trainer.start import agree_on_run
from graphbook.trainer.trial import PyTorchTrial, as_metrics, check_trial
from graphbook.trainer.units import Batch, Epoch, Length, TrainUnit, check_period, period_due
from graphbook.trainer.validation import Validation

__all__ = ["FitSettings", "LoopState", "RankState", "TrainResult", "Trainer", "fit_settings"]

DEFAULT_REPORTING = Batch(10)


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
        return _attempt(self, train, val, settings)


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


def _attempt(
    trainer: Trainer, train: DataLoader, val: DataLoader, settings: FitSettings
) -> TrainResult:
    """One attempt at training, on this process: agree on the run, wire the loop, train."""
    parts, reader, shard = _parts(trainer, train, settings)
    loggers = MetricLoggers(settings.loggers)
    with StopSignals() as stop, ExitStack() as stack:
        store, run = agree_on_run(parts, reader, stack)
        record = RunRecord(store, run, loggers)
        validation = Validation(parts, val, shard, record)
        attempt = _Run(parts, reader, record, validation, Saving(parts, record))
        return attempt.go(stop, Resume(parts, record))


def _parts(
    trainer: Trainer, train: DataLoader, settings: FitSettings
) -> tuple[RunParts, Reader, Shard]:
    context, collective = trainer.context, trainer.collective
    shard = Shard(collective.rank, collective.size, context._session.seed)
    reader = Reader(train, shard, context.device)
    epoch_length = reader.steps
    length = Length.of(settings.max_length, epoch_length).batches
    if settings.test_mode:
        length = 1
    callbacks = trainer.trial.build_callbacks()
    display = Display(
        collective.rank == 0, settings.progress, length, epoch_length, context._session.run_name
    )
    parts = RunParts(
        trainer.trial, context, collective, settings, callbacks, display, epoch_length, length
    )
    return parts, reader, shard


class _Run:
    """The loop itself, wired to its collaborators: validation, saving and the run's record."""

    def __init__(
        self,
        parts: RunParts,
        reader: Reader,
        record: RunRecord,
        validation: Validation,
        saving: Saving,
    ) -> None:
        self.parts = parts
        self.reader = reader
        self.record = record
        self.validation = validation
        self.saving = saving
        self.state = LoopState()
        self.window = Window()

    def go(self, stop: StopSignals, resume: Resume) -> TrainResult:
        parts = self.parts
        try:
            self.state, self.window = resume.resume(self.state, self.window)
            self.record.open_loggers(parts.session.hparams)
            parts.call("on_trial_startup", self.state.batches, self.state.latest_checkpoint)
            return self._train(stop)
        except TrainingPreempted:
            raise
        except TrainingResumeError:
            self.record.keep()
            raise
        except BaseException as exc:
            self.record.failed(exc, counts(parts, self.state) if resume.loaded else None)
            raise
        finally:
            parts.display.close()
            self.record.loggers.close()
            parts.call("on_trial_shutdown")

    def _train(self, stop: StopSignals) -> TrainResult:
        parts, state = self.parts, self.state
        parts.call("on_training_start")
        parts.display.start(state.batches)
        if parts.settings.step_zero_validation and state.last_validation < 0:
            self.validation.validate(state)
        stopped = False
        with ExitStack() as stack:
            profile = parts.settings.profile
            traced = stack.enter_context(profiler(parts, self.record.run)) if profile else None
            while state.batches < parts.length and not stopped:
                epoch, start = divmod(state.batches, parts.epoch_length)
                if start == 0:
                    parts.call("on_training_epoch_start", epoch)
                for batch in self.reader.read(epoch, start):
                    self._step(batch, epoch)
                    if traced is not None:
                        traced.step()
                    stopped = self._after_step(stop, epoch)
                    if stopped or state.batches >= parts.length:
                        break
        return self._finish(stopped)

    def _step(self, batch: Any, epoch: int) -> None:
        context, index = self.parts.context, self.state.batches
        context._set_position(index, self.parts.epoch_length)
        if context.experimental.auto_to_device:
            batch = context.to_device(batch)
        metrics = as_metrics(self.parts.trial.train_batch(batch, epoch, index), "train_batch")
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
        state, settings, epoch_length = self.state, self.parts.settings, self.parts.epoch_length
        state.batches += 1
        # One all-reduce: did any process get a signal (stop), did any trial ask to stop
        # (counted in `batches`).
        flags = self.parts.collective.step_flags(
            stop.requested, self.parts.context.get_stop_requested()
        )
        asked = flags.batches > 0
        if state.batches % epoch_length == 0:
            self._end_epoch(epoch)
        validate = period_due(settings.validation_period, state.batches, epoch_length)
        save = period_due(settings.checkpoint_period, state.batches, epoch_length)
        last = state.batches >= self.parts.length or asked
        due = period_due(settings.reporting_period, state.batches, epoch_length)
        if due or validate or save or last:
            report(self.parts, state, self.window, self.record)
        self.parts.display.advance(state.batches, state.training.get("loss"))
        if validate or (last and state.last_validation != state.batches):
            self.validation.validate(state)
            if not last and self.validation.stop_asked():
                asked = last = True  # stop at once: this validation is the last one
        if (save or self.validation.best_pending) and not last:
            self._checkpoint()  # the last one is the end's, with the run's final status
        if flags.stop:
            self._preempt(stop)
        return asked

    def _end_epoch(self, epoch: int) -> None:
        for wrapped in self.parts.context.schedulers:
            if wrapped.step_mode is LRScheduler.StepMode.STEP_EVERY_EPOCH and (
                (epoch + 1) % wrapped.frequency == 0
            ):
                wrapped.scheduler.step()
        self.parts.call("on_training_epoch_end", epoch)

    def _checkpoint(self, status: str | None = None) -> None:
        self.validation.best_pending = False
        self.saving.checkpoint(self.state, self.window, status)

    def _preempt(self, stop: StopSignals) -> None:
        if self.state.last_checkpoint != self.state.batches:
            self._checkpoint(status="stopped")
        else:
            self.record.stopped()
        self.parts.display.close()
        self.parts.display.say(
            f"stopped after batch {self.state.batches}; checkpointed: run the same command "
            "again to resume"
        )
        raise TrainingPreempted(self.record.run.run_id, self.state.batches, stop.signum or 15)

    def _finish(self, stopped: bool) -> TrainResult:
        parts, state, record = self.parts, self.state, self.record
        report(parts, state, self.window, record)
        if state.last_validation != state.batches:
            self.validation.validate(state)
        if state.last_checkpoint != state.batches or self.validation.best_pending:
            self._checkpoint(status="completed")
        else:
            record.completed(counts(parts, state))
        if record.store is not None:
            retention, best = parts.settings.retention, state.best_checkpoint
            checkpoints.prune(record.store, record.run.run_id, retention, best, done=True)
        parts.display.close()
        parts.display.say(summary(record.run, state))
        return result(record.run, state, parts.epoch_length, stopped)
