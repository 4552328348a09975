"""Resuming a training run exactly from its latest checkpoint: models, optimizers, schedulers,
scaler and callbacks loaded in place, the loop's place, and each process's RNG streams, reducers,
unreported metrics and pending gradients (afresh when the number of processes changed)."""

from __future__ import annotations

import logging
from typing import Any

from graphbook.trainer import checkpoints, rng
from graphbook.trainer.context import unwrap
from graphbook.trainer.errors import TrainerError, TrainingResumeError
from graphbook.trainer.identity import model_changes, model_shapes
from graphbook.trainer.metrics import Window, load_reducer_states
from graphbook.trainer.parts import LoopState, RankState, RunParts
from graphbook.trainer.record import RunRecord
from graphbook.trainer.runs import resume_refusal
from graphbook.trainer.saving import Grads

logger = logging.getLogger(__name__)


class Resume:
    """Loads the run's latest checkpoint, if any; `loaded` says whether the loop's state is
    this run's (from the start, or the checkpoint loaded)."""

    def __init__(self, parts: RunParts, record: RunRecord) -> None:
        self.parts = parts
        self.record = record
        self.loaded = False

    def resume(self, state: LoopState, window: Window) -> tuple[LoopState, Window]:
        """The loop's state and window: those given for a run without a checkpoint yet,
        else the latest checkpoint's (models, optimizers and the rest loaded in place)."""
        run, display, length = self.record.run, self.parts.display, self.parts.length
        epoch_length = self.parts.epoch_length
        if run.checkpoint is None:
            self.loaded = True
            if run.resumed:
                self.record.truncate(0)
            again = " again from the start (no checkpoint yet)" if run.resumed else ""
            display.say(
                f"training run {run.run_id} ({run.name}){again}: {length} batches, "
                f"{epoch_length} per epoch"
            )
            return state, window
        folder = run.folders.checkpoint(run.checkpoint.uuid)
        payload = checkpoints.read_state(folder)
        self.parts.call("on_checkpoint_load_start", payload)
        state, window = self._load(payload, window)
        self.loaded = True
        self.record.truncate(int(run.checkpoint.metadata["metric_rows"]))
        epoch, batch = divmod(state.batches, epoch_length)
        display.say(
            f"resuming run {run.run_id} ({run.name}) from checkpoint {run.checkpoint.uuid}: "
            f"epoch {epoch + 1}, batch {batch} of {epoch_length} "
            f"({state.batches} of {length} batches done)"
        )
        return state, window

    def _load(self, payload: dict[str, Any], window: Window) -> tuple[LoopState, Window]:
        context, run = self.parts.context, self.record.run
        saved = [
            {k: list(getattr(v, "shape", ())) for k, v in m.items()} for m in payload["models"]
        ]
        changes = model_changes(saved, model_shapes([unwrap(m) for m in context.models]))
        if changes:
            raise TrainingResumeError(resume_refusal(run.run_id, run.name, changes))
        _load_list("model", [unwrap(m) for m in context.models], payload["models"])
        _load_list("optimizer", context.optimizers, payload["optimizers"])
        _load_list("LR scheduler", [w.scheduler for w in context.schedulers], payload["schedulers"])
        if context.scaler is not None and payload.get("scaler") is not None:
            context.scaler.load_state_dict(payload["scaler"])
        for name, callback in self.parts.callbacks.items():
            if name in payload["callbacks"]:
                callback.load_state_dict(payload["callbacks"][name])
        state = LoopState(**payload["loop"])
        context._initial_batch = state.batches
        ranks = [RankState(**r) for r in payload["ranks"]]
        if len(ranks) == self.parts.collective.size:
            return state, self._restore_rank(ranks[self.parts.rank])
        return state, self._restart_ranks(state, ranks, window)

    def _restore_rank(self, mine: RankState) -> Window:
        """The same world size: this process continues its own streams exactly."""
        rng.restore(mine.rng)
        load_reducer_states(self.parts.context.reducers, mine.reducers)
        window = Window(mine.window)
        self._restore_grads(mine.grads)
        return window

    def _restart_ranks(self, state: LoopState, ranks: list[RankState], window: Window) -> Window:
        """Another world size: RNG streams start afresh, rank 0 takes every unreported batch."""
        parts, size = self.parts, self.parts.collective.size
        rng.seed_all(parts.session.seed + parts.rank + state.batches)
        if any(r.grads is not None for r in ranks):
            logger.warning(
                "resumed with %d processes instead of %d in the middle of an accumulation "
                "of gradients: the batches accumulated before the checkpoint are dropped",
                size,
                len(ranks),
            )
        if parts.rank == 0:
            window = Window([b for r in ranks for b in r.window])
        logger.info(
            "resumed with %d processes instead of %d: RNG streams start afresh", size, len(ranks)
        )
        return window

    def _restore_grads(self, grads: Grads | None) -> None:
        models = [unwrap(m) for m in self.parts.context.models]
        if grads is None:
            return
        for model, saved in zip(models, grads, strict=True):
            for param, grad in zip(model.parameters(), saved, strict=True):
                param.grad = None if grad is None else grad.to(param.device, param.dtype)


def _load_list(what: str, targets: list[Any], states: list[Any]) -> None:
    if len(targets) != len(states):
        raise TrainerError(
            f"the checkpoint has {len(states)} {what} state(s) but the trial wrapped "
            f"{len(targets)}; build the trial the same way as the run that saved it"
        )
    for target, state in zip(targets, states, strict=True):
        target.load_state_dict(state)
