"""Validation: the trial's evaluate_batch over this process's shard of the validation data (or
evaluate_full_dataset on rank 0), reduced across ranks, recorded, and ranked against the best
so far by the retention policy's metric."""

from __future__ import annotations

from typing import Any

import torch

from graphbook.plain import plain_metric
from graphbook.trainer import checkpoints
from graphbook.trainer.data import DataLoader, Reader, Shard
from graphbook.trainer.metrics import across_ranks, evaluation_reduce, reduce_wrapped
from graphbook.trainer.parts import LoopState, RunParts
from graphbook.trainer.record import RunRecord
from graphbook.trainer.trial import accepts, as_metrics


class Validation:
    """Validates on demand; `best_pending` says a checkpoint is owed to the policy."""

    def __init__(self, parts: RunParts, val: DataLoader, shard: Shard, record: RunRecord) -> None:
        self.parts = parts
        self.val = val
        self.shard = shard
        self.record = record
        self.best_pending = False
        self._takes_index = accepts(
            getattr(parts.trial, "evaluate_batch", None) or (lambda b: None), 2
        )

    def validate(self, state: LoopState) -> None:
        parts, context = self.parts, self.parts.context
        parts.call("on_validation_start")
        parts.call("on_validation_epoch_start")
        for wrapped in context.reducers:
            if wrapped.for_validation:  # it counts this validation only
                wrapped.reducer.reset()
        for model in context.models:
            model.eval()
        try:
            with torch.no_grad():
                metrics, outputs = self._evaluate()
        finally:
            for model in context.models:
                model.train()
        metrics = plain_metric(
            {**metrics, **reduce_wrapped(parts.collective, context.reducers, False)}
        )
        parts.call("on_validation_epoch_end", outputs)
        parts.call("on_validation_end", metrics)
        state.validation, state.last_validation = metrics, state.batches
        self.record.store_metrics("validation", state.batches, metrics)
        parts.display.validated(state.batches, state.training.get("loss"), metrics)
        self._rank_best(state, metrics)

    def stop_asked(self) -> bool:
        """Whether a callback (on_validation_end, say) asked to stop, on any process; every
        process validates at the same batches, so all of them ask."""
        asked = self.parts.context.get_stop_requested()
        return self.parts.collective.step_flags(False, asked).batches > 0

    def _evaluate(self) -> tuple[dict[str, Any], list[Any]]:
        trial, context, collective = self.parts.trial, self.parts.context, self.parts.collective
        if callable(getattr(trial, "evaluate_full_dataset", None)):
            result: dict[str, Any] = {}
            if self.parts.rank == 0:
                full = getattr(trial, "evaluate_full_dataset")  # noqa: B009 (checked)
                result = plain_metric(as_metrics(full(self.val), "evaluate_full_dataset"))
            return collective.broadcast(result), []
        reader = Reader(self.val, self.shard, context.device)
        outputs = []
        evaluate = trial.evaluate_batch  # type: ignore[attr-defined]
        for index, batch in enumerate(reader.read(0, 0, shuffle=False)):
            moved = context.to_device(batch) if context.experimental.auto_to_device else batch
            value = evaluate(moved, index) if self._takes_index else evaluate(moved)
            outputs.append(plain_metric(as_metrics(value, "evaluate_batch")))
        reducer = trial.evaluation_reducer()
        mine = evaluation_reduce(outputs, reducer)
        return across_ranks(collective, mine, len(outputs), reducer), outputs

    def _rank_best(self, state: LoopState, metrics: dict[str, Any]) -> None:
        """Policy "all" checkpoints after every validation, "best" after each new best."""
        retention = self.parts.settings.retention
        name = retention.metric_of(metrics)
        value = metrics.get(name) if name is not None else None
        better = isinstance(value, int | float) and retention.better(float(value), state.best_value)
        if better:
            state.best_value = float(value)  # type: ignore[arg-type]
        if retention.policy == "none":
            return
        self.best_pending = self.best_pending or better or retention.policy == "all"
        if better:
            state.best_checkpoint = checkpoints.checkpoint_id(self.record.run.run_id, state.batches)
