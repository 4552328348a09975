"""torch_batch_process: run a processor over a dataset on every rank, with checkpoints, clean
stops on SIGTERM/SIGINT, and resume."""

from __future__ import annotations

import logging
import shutil
import signal
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from graphbook.batch_process.checkpoint import Committer, Draft, Progress
from graphbook.batch_process.context import RunInfo, TorchBatchProcessorContext
from graphbook.batch_process.dataset import describe
from graphbook.batch_process.errors import BatchError, BatchPreempted
from graphbook.batch_process.job import Job, make_job
from graphbook.batch_process.metrics import MetricRow
from graphbook.batch_process.processor import TorchBatchProcessor, build_processor
from graphbook.batch_process.progress import BatchProgress
from graphbook.batch_process.resume import Plan, plan_attempt
from graphbook.batch_process.sharding import Batch, Shard, iterable_batches, map_batches
from graphbook.durable.devices import loader_kwargs_for
from graphbook.durable.distributed import Collective, open_collective
from graphbook.durable.lock import run_lock
from graphbook.durable.signals import StopSignals
from graphbook.loggers.base import LoggedRun, MetricLoggers
from graphbook.plain import plain_metric
from graphbook.store import Store

logger = logging.getLogger(__name__)


def torch_batch_process(
    batch_processor_cls: type[TorchBatchProcessor],
    dataset: Any,
    batch_size: int | None = None,
    max_batches: int | None = None,
    checkpoint_interval: int = 5,
    dataloader_kwargs: dict[str, Any] | None = None,
    *,
    run_name: str | None = None,
    start_over: bool = False,
    hparams: dict[str, Any] | None = None,
    loggers: Any = None,
) -> None:
    """Run `batch_processor_cls` over `dataset` on every rank (one plain process, or each
    process `torchrun` starts), each batch processed by exactly one rank.

    - `dataset`: map-style (`__len__`, `__getitem__`) or iterable (re-iterable, same order
      each time). Global batch g holds items `[g * batch_size, (g + 1) * batch_size)`.
    - `batch_size`: items per batch (or `dataloader_kwargs["batch_size"]`; default 1).
    - `max_batches`: process at most this many batches per rank (the first
      `max_batches * world_size` global batches of the dataset).
    - `checkpoint_interval`: checkpoint after every this many batches per rank.
    - `dataloader_kwargs`: passed to the DataLoader (`num_workers`, `collate_fn`,
      `pin_memory`, `drop_last`, ...); `shuffle`, `sampler` and `batch_sampler` are refused.
      On a CUDA device batches are read into pinned memory unless `pin_memory` is given, so
      `context.to_device(batch)` copies them without blocking.
    - `run_name`: the run this command continues (default: script or module, and class name);
      `start_over`: begin a new run even if one with that name did not complete;
      `hparams`: what `context.get_hparams()` returns;
      `loggers`: MetricLoggers (graphbook.loggers: CSVLogger, TensorBoardLogger, MLflowLogger)
      that rank 0 gives each metric row as it commits it, and the hyperparameters.

    Returns when all batches are done. On SIGTERM or SIGINT, every rank finishes its batch,
    the run checkpoints and `BatchPreempted` (a SystemExit with status 75) is raised; running
    the same command again resumes it, with any number of ranks.
    """
    job = make_job(
        batch_processor_cls,
        dataset,
        batch_size,
        max_batches,
        checkpoint_interval,
        dataloader_kwargs,
        run_name,
        start_over,
        hparams,
    )
    fan = MetricLoggers(loggers)
    with open_collective() as collective, StopSignals() as stop, ExitStack() as stack:
        plan, store = _agree_on_plan(job, collective, stack)
        Attempt(job, collective, stop, plan, store, fan).run()


@dataclass(frozen=True)
class _PlanFailed:
    message: str


def _agree_on_plan(job: Job, collective: Collective, stack: ExitStack) -> tuple[Plan, Store | None]:
    """Rank 0 opens the store, takes the run's lock and plans the attempt; every rank gets the
    plan, or fails with rank 0's error instead of waiting for a plan that never comes. Only
    rank 0 gets the store."""
    if collective.rank != 0:
        planned = collective.broadcast(None)
        if isinstance(planned, _PlanFailed):
            raise BatchError(f"rank 0 could not start the run: {planned.message}")
        assert isinstance(planned, Plan)
        return planned, None
    try:
        store = Store()
        stack.enter_context(run_lock(store.path.parent, job.run_name, BatchError))
        plan = plan_attempt(store, job, describe(job.dataset), collective.size)
    except Exception as exc:
        collective.broadcast(_PlanFailed(f"{type(exc).__name__}: {exc}"))
        raise
    return collective.broadcast(plan), store


@dataclass(frozen=True)
class RankReport:
    """What a rank sends rank 0 at a checkpoint."""

    reducer_states: dict[str, Any]
    metrics: list[MetricRow]


class Attempt:
    """One attempt at a run, on one rank."""

    def __init__(
        self,
        job: Job,
        collective: Collective,
        stop: StopSignals,
        plan: Plan,
        store: Store | None,
        loggers: MetricLoggers | None = None,
    ) -> None:
        self.job = job
        self.loggers = loggers if loggers is not None and store is not None else MetricLoggers(None)
        self.collective = collective
        self.stop = stop
        self.plan = plan
        self.rank = collective.rank
        self.store = store
        self.committer = Committer(store, plan.folders, plan.start) if store is not None else None
        self.sequence = plan.sequence
        self.done = plan.start
        start = plan.reducers.for_rank(self.rank, collective.size) if plan.reducers else None
        run = RunInfo(plan.run_id, plan.attempt, plan.folders, job.hparams, self.store)
        self.context = TorchBatchProcessorContext(collective, run, start)
        self.progress = BatchProgress(
            plan.run_id, plan.start, plan.total, job.batch_size, self.rank
        )

    def run(self) -> None:
        outcome = "failed"
        try:
            self._check_dataset()
            self._open_loggers()
            processor = build_processor(self.job.processor_cls, self.context)
            self.progress.begin()
            self._process(processor)
            self._finish(processor)
            outcome = "completed"
        except BatchPreempted:
            outcome = "stopped (run the same command again to resume it)"
            raise
        except BaseException as exc:
            self._record_failure(exc)
            raise
        finally:
            self.progress.end(outcome)
            self.context.profiler.close()
            if self.committer is not None:
                self.committer.close()
            self.loggers.close()

    def _open_loggers(self) -> None:
        """Rank 0's loggers start from the rows the store holds (what earlier attempts
        committed): rows logged by an attempt that died before committing them are dropped."""
        if self.store is None or not self.loggers:
            return
        run = LoggedRun(self.plan.run_id, self.job.run_name, "batch")
        self.loggers.open(run, self.store.metrics([self.plan.run_id]), self.job.hparams)

    # -- the steps ---------------------------------------------------------------------------
    def _process(self, processor: TorchBatchProcessor) -> None:
        """Every rank takes one batch (or none, past the end) per step; after each step the
        ranks agree on how many batches were done and whether to stop."""
        if self._all_done():
            return
        batches, since = self._batches(), 0
        while True:
            item = next(batches, None)
            if item is not None:
                self._process_batch(processor, item)
            flags = self.collective.step_flags(self.stop.requested, item is not None)
            self.done += flags.batches
            since += 1
            checkpoint = since >= self.job.checkpoint_interval
            self.progress.update(self.done, checkpoint)
            if flags.batches < self.collective.size or self._all_done():
                return
            if flags.stop:
                self._checkpoint(processor, status="stopped")
                signum = self.stop.signum or signal.SIGTERM  # the signal reached another rank
                raise BatchPreempted(self.plan.run_id, self.done, signum)
            if checkpoint:
                self._checkpoint(processor)
                since = 0

    def _process_batch(self, processor: TorchBatchProcessor, item: Batch) -> None:
        index, batch = item
        self.context.set_position(index)
        processor.process_batch(batch, index // self.collective.size)

    def _batches(self) -> Iterator[Batch]:
        plan, job = self.plan, self.job
        shard = Shard(
            plan.start, plan.total, self.rank, self.collective.size, job.batch_size, job.drop_last
        )
        kwargs = loader_kwargs_for(self.collective.device, job.loader_kwargs)  # pinned on CUDA
        if plan.dataset.length is not None:
            return map_batches(job.dataset, shard, plan.dataset.length, kwargs)
        return iterable_batches(job.dataset, shard, kwargs)

    def _all_done(self) -> bool:
        return self.plan.total is not None and self.done >= self.plan.total

    def _check_dataset(self) -> None:
        expected = self.plan.dataset.length
        if expected is not None and len(self.job.dataset) != expected:
            raise BatchError(
                f"rank {self.rank} sees {len(self.job.dataset)} items but rank 0 sees "
                f"{expected}: every rank must build the same dataset"
            )

    # -- checkpoints and the end ---------------------------------------------------------------
    def _checkpoint(
        self, processor: TorchBatchProcessor, status: str | None = None, final: bool = False
    ) -> None:
        """`on_checkpoint_start` on every rank, then rank 0 commits what all ranks report."""
        if not final:
            processor.on_checkpoint_start()
        report = RankReport(self.context.reducers.states(), self.context.metrics.take())
        reports = self.collective.gather(report)
        uuid_ = self._commit(reports, status, final) if self.committer is not None else None
        self.collective.broadcast(uuid_)

    def _commit(self, reports: list[RankReport], status: str | None, final: bool) -> str:
        """Rank 0: commit what the ranks reported; a periodic checkpoint in the background."""
        assert self.committer is not None
        plan, job = self.plan, self.job
        progress = Progress(
            batches_completed=self.done,
            total_batches=plan.total,
            world_size=self.collective.size,
            batch_size=job.batch_size,
            drop_last=job.drop_last,
            dataset=plan.dataset,
            sequence=self.sequence,
            final=final,
        )
        states = [r.reducer_states for r in reports]
        reducers = self.context.reducers.snapshot(states)
        draft = Draft(
            run_id=plan.run_id,
            uuid=str(uuid.uuid4()),
            attempt=plan.attempt,
            progress=progress,
            reducers=reducers if any(states) or reducers.archived or reducers.pending else None,
            metrics=tuple(row for r in reports for row in r.metrics),
            counts=self._counts(self.done),
            status=status,
        )
        self.committer.commit(draft, background=status is None)
        for group, step, metrics in draft.metrics:
            self.loggers.log_metrics(group, step, metrics)
        self.sequence += 1
        return draft.uuid

    def _finish(self, processor: TorchBatchProcessor) -> None:
        if self.committer is not None:
            self.committer.wait()  # all batches' work is committed before on_finish
        processor.on_checkpoint_start()
        slots = self.collective.gather(self.context.reducers.per_slot())
        reduced: dict[str, dict[str, Any]] = {}
        if self.rank == 0:
            reduced = plain_metric(self.context.reducers.reduce(slots))
        self.context.reduced_metrics = self.collective.broadcast(reduced)
        if self.rank == 0:
            for group, metrics in self.context.reduced_metrics.items():
                self.context.metrics.add(group, self.done, metrics)
        processor.on_finish()
        self.context.profiler.close()
        summary = self.context.profiler.summary()
        if summary is not None:
            self.context.metrics.add("profiler", self.done, {"rank": self.rank, **summary})
        self._checkpoint(processor, status="completed", final=True)
        if self.rank == 0:
            shutil.rmtree(self.plan.folders.root / "staging", ignore_errors=True)
            logger.info(
                "batch run %s completed: %d batch(es); files in %s",
                self.plan.run_id,
                self.done,
                self.plan.folders.checkpoints,
            )

    def _counts(self, done: int) -> dict[str, Any]:
        counts: dict[str, Any] = {
            "batches_completed": done,
            "total_batches": self.plan.total,
            "batch_size": self.job.batch_size,
            "world_size": self.collective.size,
        }
        length = self.plan.dataset.length
        if length is not None:
            counts["items_completed"] = min(done * self.job.batch_size, length)
        return counts

    def _record_failure(self, exc: BaseException) -> None:
        """Rank 0: let the commit in the background finish, then mark the run failed."""
        if self.store is None or self.committer is None:
            return
        try:
            self.committer.close()
        except Exception:
            logger.exception("the last checkpoint of run %s was not committed", self.plan.run_id)
        try:
            counts = self._counts(self.committer.committed)
            error = f"{type(exc).__name__}: {exc}"
            self.store.finish_run(self.plan.run_id, "failed", counts, error)
        except Exception:  # the original error matters more than this one
            logger.exception("could not record the failure of run %s", self.plan.run_id)
