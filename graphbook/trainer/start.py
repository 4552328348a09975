"""How the processes agree on the run: rank 0 takes the name's lock, finds the run to resume or
starts one (refusing a resume whose configuration changed) and tells the other ranks."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from graphbook.durable.identity import data_identity
from graphbook.durable.lock import run_lock
from graphbook.durable.names import qualified_name
from graphbook.plain import plain_metric
from graphbook.store import Store
from graphbook.trainer.context import unwrap
from graphbook.trainer.data import Reader
from graphbook.trainer.errors import TrainerError
from graphbook.trainer.identity import model_shapes
from graphbook.trainer.parts import RunParts
from graphbook.trainer.runs import RunStart, start_or_resume


def agree_on_run(
    parts: RunParts, reader: Reader, stack: ExitStack
) -> tuple[Store | None, RunStart]:
    """The run every rank trains, and the store (rank 0's; None elsewhere). The lock is held
    until `stack` closes."""
    collective, session = parts.collective, parts.session
    if parts.rank != 0:
        start = collective.broadcast(None)
        if isinstance(start, str):
            raise TrainerError(f"rank 0 could not start the run: {start}")
        assert isinstance(start, RunStart)
        return None, start
    try:
        store = Store()
        stack.enter_context(run_lock(store.path.parent, "train:" + session.run_name, TrainerError))
        start = start_or_resume(
            store, session.run_name, session.start_over, run_config(parts, reader)
        )
    except Exception as exc:
        collective.broadcast(f"{type(exc).__name__}: {exc}")
        raise
    return store, collective.broadcast(start)


def run_config(parts: RunParts, reader: Reader) -> dict[str, Any]:
    """What a resume must find unchanged."""
    session, size = parts.session, parts.collective.size
    return {
        "hparams": plain_metric(dict(session.hparams)),
        "seed": session.seed,
        "trial": qualified_name(type(parts.trial)),
        "global_batch_size": reader.loader.batch_size * size,
        "train_data": data_identity(reader.loader.dataset),
        "models": model_shapes([unwrap(m) for m in parts.context.models]),
        "world_size": size,
        "max_length": str(parts.settings.max_length),
        "epoch_length": parts.epoch_length,
    }
