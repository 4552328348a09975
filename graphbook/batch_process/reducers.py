"""One rank's set of wrapped reducers in a batch run, with the state its checkpoints keep (the
reducers themselves: graphbook/durable/reducers.py).

When a run resumes with a different number of ranks, the old ranks' states cannot be handed to
the new ranks one to one; rank 0 turns each into its per-slot value ("archived") and adds those
to the list `cross_slot_reduce` receives at the end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from graphbook.batch_process.errors import BatchError
from graphbook.durable.reducers import (
    Reducer,
    as_reducer,
    fresh_copy,
    load_state,
    named_metrics,
    state_of,
)

logger = logging.getLogger(__name__)
R = TypeVar("R")


@dataclass
class ReducerState:
    """The reducers' part of a checkpoint: each rank's states by key, plus rank 0's archive of
    ranks from before a change of world size (`archived`: per-slot values; `pending`: states
    whose reducer has not been wrapped again yet)."""

    world_size: int
    ranks: list[dict[str, Any]]
    archived: dict[str, list[Any]] = field(default_factory=dict)
    pending: dict[str, list[Any]] = field(default_factory=dict)

    def for_rank(self, rank: int, world_size: int) -> RankReducerState:
        """What rank `rank` of a run with `world_size` ranks starts from."""
        same = world_size == self.world_size
        own = self.ranks[rank] if same and rank < len(self.ranks) else {}
        if rank != 0:
            return RankReducerState(own)
        pending = {key: list(states) for key, states in self.pending.items()}
        if not same:
            for states in self.ranks:
                for key, state in states.items():
                    pending.setdefault(key, []).append(state)
        archived = {key: list(values) for key, values in self.archived.items()}
        return RankReducerState(own, archived, pending)


@dataclass
class RankReducerState:
    own: dict[str, Any] = field(default_factory=dict)
    archived: dict[str, list[Any]] = field(default_factory=dict)
    pending: dict[str, list[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Wrapped:
    key: str
    name: str | None
    group: str
    reducer: Reducer


class ReducerSet:
    """One rank's wrapped reducers, restored from `start`."""

    def __init__(self, start: RankReducerState, position: Callable[[], int]) -> None:
        self.start = start
        self.position = position
        self.wrapped: dict[str, Wrapped] = {}

    def wrap(self, reducer: Any, name: str | None, group: str) -> Any:
        reducer = as_reducer(reducer, self.position)
        key = name if name is not None else f"unnamed-{len(self.wrapped)}"
        if key in self.wrapped:
            raise BatchError(f"a reducer named {key!r} is wrapped already; give each its own name")
        if key in self.start.own:
            load_state(reducer, self.start.own[key])
        else:
            reducer.reset()
        self._archive(key, reducer)
        self.wrapped[key] = Wrapped(key, name, group, reducer)
        return reducer

    def _archive(self, key: str, reducer: Reducer) -> None:
        for state in self.start.pending.pop(key, []):
            old = fresh_copy(reducer)
            load_state(old, state)
            self.start.archived.setdefault(key, []).append(old.per_slot_reduce())

    def states(self) -> dict[str, Any]:
        return {key: state_of(w.reducer, key) for key, w in self.wrapped.items()}

    def per_slot(self) -> dict[str, Any]:
        return {key: _call(w, w.reducer.per_slot_reduce) for key, w in self.wrapped.items()}

    def snapshot(self, ranks: list[dict[str, Any]]) -> ReducerState:
        """The checkpoint's reducer state, from every rank's `states()` (on rank 0)."""
        archived = {key: list(values) for key, values in self.start.archived.items()}
        pending = {key: list(states) for key, states in self.start.pending.items()}
        return ReducerState(len(ranks), ranks, archived, pending)

    def reduce(self, slots: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The metrics by group, from every rank's `per_slot()` (on rank 0)."""
        for key in self.start.pending:
            logger.warning("reducer %r of the resumed run was not wrapped again; dropped", key)
        groups: dict[str, dict[str, Any]] = {}
        for key, w in self.wrapped.items():
            values = self.start.archived.get(key, []) + [s[key] for s in slots if key in s]
            result = _call(w, partial(w.reducer.cross_slot_reduce, values))
            groups.setdefault(w.group, {}).update(
                named_metrics(w.name, w.reducer, result, BatchError)
            )
        return groups


def _call(wrapped: Wrapped, fn: Callable[[], R]) -> R:
    try:
        return fn()
    except BatchError:
        raise
    except Exception as exc:
        raise BatchError(f"reducer {wrapped.key!r} failed: {exc!r}") from exc
