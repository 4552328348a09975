"""Saving a training run: what every process adds to a checkpoint (RNG streams, reducers,
unreported metrics, gradients not yet stepped on) and what rank 0 writes (models, optimizers,
schedulers, scaler, callbacks, the loop's place); resuming.py loads it all back exactly."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import torch

from graphbook.durable.names import qualified_name
from graphbook.plain import plain_metric
from graphbook.trainer import checkpoints, rng
from graphbook.trainer.checkpoints import Snapshot
from graphbook.trainer.context import unwrap
from graphbook.trainer.metrics import Window, reducer_states
from graphbook.trainer.parts import LoopState, RankState, RunParts
from graphbook.trainer.record import RunRecord, counts
from graphbook.trainer.trial import trial_reference

Grads = list[list[torch.Tensor | None]]


class Saving:
    """Checkpoints the run: every process gives its part, rank 0 writes and prunes."""

    def __init__(self, parts: RunParts, record: RunRecord) -> None:
        self.parts = parts
        self.record = record

    def checkpoint(self, state: LoopState, window: Window, status: str | None = None) -> None:
        parts, run = self.parts, self.record.run
        state.last_checkpoint = state.batches
        state.latest_checkpoint = checkpoints.checkpoint_id(run.run_id, state.batches)
        mine = RankState(
            rng.capture(),
            reducer_states(parts.context.reducers),
            window.numbers(),
            self._pending_grads(),
        )
        ranks = parts.collective.gather(mine)
        uuid = None
        if self.record.store is not None:
            uuid = self._write(state, ranks, status)
        uuid = parts.collective.broadcast(uuid)
        parts.call("on_checkpoint_upload_end", uuid)

    def _pending_grads(self) -> Grads | None:
        grads = [
            [None if p.grad is None else p.grad.detach().cpu().clone() for p in m.parameters()]
            for m in map(unwrap, self.parts.context.models)
        ]
        return grads if any(g is not None for model in grads for g in model) else None

    def _write(self, state: LoopState, ranks: list[RankState], status: str | None) -> str:
        record, parts = self.record, self.parts
        assert record.store is not None
        record.flush()  # the checkpoint records how many metric rows precede it
        context = parts.context
        payload: dict[str, Any] = {
            "format": checkpoints.FORMAT,
            "models": [unwrap(m).state_dict() for m in context.models],
            "optimizers": [o.state_dict() for o in context.optimizers],
            "schedulers": [w.scheduler.state_dict() for w in context.schedulers],
            "scaler": context.scaler.state_dict() if context.scaler is not None else None,
            "callbacks": {n: c.state_dict() for n, c in parts.callbacks.items()},
            "ranks": [asdict(r) for r in ranks],
            "loop": asdict(state),
        }
        parts.call("on_checkpoint_save_start", payload)
        snapshot = Snapshot(record.run.run_id, state.batches, payload, self._info(state))
        uuid, folder = checkpoints.write(
            record.store, record.run.folders, snapshot, status, counts(parts, state)
        )
        parts.call("on_checkpoint_write_end", str(folder))
        parts.call("on_checkpoint_end", str(folder))  # Determined's older name for it
        checkpoints.prune(
            record.store,
            record.run.run_id,
            parts.settings.retention,
            state.best_checkpoint,
            done=False,
        )
        return uuid

    def _info(self, state: LoopState) -> dict[str, Any]:
        run, parts, session = self.record.run, self.parts, self.parts.session
        return {
            "run_id": run.run_id,
            "run_name": run.name,
            "batches": state.batches,
            "epoch": state.batches / parts.epoch_length,
            "trial": qualified_name(type(parts.trial)),
            "trial_class": trial_reference(type(parts.trial)),
            "hparams": plain_metric(dict(session.hparams)),
            "seed": session.seed,
            "world_size": parts.collective.size,
            "best_checkpoint": state.best_checkpoint,
            "training": state.training,
            "validation": state.validation if state.last_validation == state.batches else {},
        }
