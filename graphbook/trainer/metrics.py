"""Metrics in training: per-batch values averaged over a reporting period, validation metrics
combined by the trial's evaluation reducer, wrapped reducers, all reduced across processes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from graphbook.durable.distributed import Collective
from graphbook.durable.reducers import load_state, named_metrics, state_of
from graphbook.plain import plain_metric
from graphbook.trainer.context import WrappedReducer
from graphbook.trainer.errors import TrainerError
from graphbook.trainer.trial import Reducer


class Window:
    """The training metrics of the batches since the last report. Held as tensors (no device
    sync per batch), turned into numbers when reported or checkpointed."""

    def __init__(self, batches: Sequence[dict[str, Any]] = ()) -> None:
        self.batches: list[dict[str, Any]] = list(batches)

    def add(self, metrics: dict[str, Any]) -> None:
        self.batches.append(
            {k: v.detach() if isinstance(v, torch.Tensor) else v for k, v in metrics.items()}
        )

    def numbers(self) -> list[dict[str, Any]]:
        return [{k: plain_metric(v) for k, v in b.items()} for b in self.batches]

    def take(self) -> list[dict[str, Any]]:
        numbers, self.batches = self.numbers(), []
        return numbers


def average(batches: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each numeric metric's mean over `batches` (others: the last value)."""
    out: dict[str, Any] = {}
    for key in dict.fromkeys(k for b in batches for k in b):
        values = [b[key] for b in batches if key in b]
        numbers = [v for v in values if _is_number(v)]
        out[key] = math.fsum(numbers) / len(numbers) if len(numbers) == len(values) else values[-1]
    return out


def combine(values: list[Any], how: Reducer) -> Any:
    numbers = [float(v) for v in values]
    if how is Reducer.SUM:
        return math.fsum(numbers)
    if how is Reducer.MAX:
        return max(numbers)
    if how is Reducer.MIN:
        return min(numbers)
    return math.fsum(numbers) / len(numbers)


def evaluation_reduce(
    batches: Sequence[dict[str, Any]], reducer: Reducer | dict[str, Reducer]
) -> dict[str, Any]:
    """One process's validation metrics from its per-batch metrics."""
    out: dict[str, Any] = {}
    for key in dict.fromkeys(k for b in batches for k in b):
        how = reducer.get(key, Reducer.AVG) if isinstance(reducer, dict) else reducer
        if not isinstance(how, Reducer):
            raise TrainerError(
                f"evaluation_reducer() must give det.pytorch.Reducer values, "
                f"got {how!r} for {key!r}"
            )
        values = [b[key] for b in batches if key in b]
        out[key] = combine(values, how) if all(_is_number(v) for v in values) else values[-1]
    return out


def across_ranks(
    collective: Collective,
    mine: dict[str, Any],
    weight: int,
    reducer: Reducer | dict[str, Reducer] = Reducer.AVG,
) -> dict[str, Any]:
    """Every process's metrics combined on rank 0 (averages weighted by batch counts), then
    given to every process."""
    if collective.size == 1:
        return mine
    gathered = collective.gather((mine, weight))
    result: dict[str, Any] = {}
    if collective.rank == 0:
        result = _combine_ranks(gathered, reducer)
    return collective.broadcast(result)


def _combine_ranks(
    gathered: list[tuple[dict[str, Any], int]], reducer: Reducer | dict[str, Reducer]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in dict.fromkeys(k for m, _ in gathered for k in m):
        pairs = [(m[key], w) for m, w in gathered if key in m and w > 0]
        how = reducer.get(key, Reducer.AVG) if isinstance(reducer, dict) else reducer
        if not pairs or not all(_is_number(v) for v, _ in pairs):
            out[key] = pairs[-1][0] if pairs else None
        elif how is Reducer.AVG:
            out[key] = math.fsum(v * w for v, w in pairs) / sum(w for _, w in pairs)
        else:
            out[key] = combine([v for v, _ in pairs], how)
    return out


def reduce_wrapped(
    collective: Collective, reducers: list[WrappedReducer], training: bool
) -> dict[str, Any]:
    """The wrapped reducers' results (those for training or for validation)."""
    chosen = [w for w in reducers if (w.for_training if training else w.for_validation)]
    if not chosen:
        return {}
    slots = collective.gather({w.key: w.reducer.per_slot_reduce() for w in chosen})
    result: dict[str, Any] = {}
    if collective.rank == 0:
        for w in chosen:
            value = w.reducer.cross_slot_reduce([s[w.key] for s in slots])
            result.update(named_metrics(w.name, w.reducer, value, TrainerError))
    for w in chosen:
        w.reducer.reset()
    reduced: dict[str, Any] = plain_metric(collective.broadcast(result))
    return reduced


def reducer_states(reducers: list[WrappedReducer]) -> dict[str, Any]:
    return {w.key: state_of(w.reducer, w.key) for w in reducers}


def load_reducer_states(reducers: list[WrappedReducer], states: dict[str, Any]) -> None:
    for w in reducers:
        if w.key in states:
            load_state(w.reducer, states[w.key])


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
