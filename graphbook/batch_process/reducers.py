"""Metric reducers: the MetricReducer interface, plain functions wrapped as reducers, and one
rank's set of wrapped reducers with the state its checkpoints keep.

A reducer works in three steps: each rank accumulates (`update`, called by the user), each rank
reduces what it holds to one picklable value (`per_slot_reduce`), and rank 0 reduces the list of
those values to the metric (`cross_slot_reduce`). A reducer's state is checkpointed with the
run's progress, so a resumed run reports the same value as one that never stopped. When a run
resumes with a different number of ranks, the old ranks' states cannot be handed to the new
ranks one to one; rank 0 turns each into its per-slot value ("archived") and adds those to the
list `cross_slot_reduce` receives at the end.
"""

from __future__ import annotations

import copy
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, TypeVar, runtime_checkable

from graphbook.batch_process.errors import BatchError

logger = logging.getLogger(__name__)
R = TypeVar("R")


@runtime_checkable
class Reducer(Protocol):
    """What `wrap_reducer` needs of a reducer (MetricReducer subclasses, or look-alikes)."""

    def reset(self) -> None: ...

    def per_slot_reduce(self) -> Any: ...

    def cross_slot_reduce(self, per_slot_metrics: list[Any]) -> Any: ...


class MetricReducer(ABC):
    """Base class of custom reducers. Define `update(...)` to accumulate and call it from
    `process_batch`. `state_dict`/`load_state_dict` default to the instance's attributes;
    override them if those are not picklable."""

    @abstractmethod
    def reset(self) -> None:
        """Clear the accumulated state (called when the reducer is wrapped on a fresh run)."""

    @abstractmethod
    def per_slot_reduce(self) -> Any:
        """This rank's accumulated state, reduced to one picklable value."""

    @abstractmethod
    def cross_slot_reduce(self, per_slot_metrics: list[Any]) -> Any:
        """The metric, from every rank's `per_slot_reduce` value. A reducer wrapped with a
        name returns the metric's value; one wrapped without a name returns a dict of them."""

    def state_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    def load_state_dict(self, state: dict[str, Any]) -> None:
        vars(self).update(state)


class FunctionReducer(MetricReducer):
    """A plain function as a reducer: `update(value)` keeps each value with the global batch it
    came from, and the function receives all values of all ranks in dataset order."""

    def __init__(self, fn: Callable[[list[Any]], Any], position: Callable[[], int]) -> None:
        self.fn = fn
        self.position = position
        self.values: list[tuple[int, int, Any]] = []

    def update(self, value: Any) -> None:
        self.values.append((self.position(), len(self.values), value))

    def reset(self) -> None:
        self.values = []

    def per_slot_reduce(self) -> list[tuple[int, int, Any]]:
        return self.values

    def cross_slot_reduce(self, per_slot_metrics: list[Any]) -> Any:
        ordered = sorted((v for slot in per_slot_metrics for v in slot), key=lambda v: v[:2])
        return self.fn([value for _, _, value in ordered])

    def state_dict(self) -> dict[str, Any]:
        return {"values": list(self.values)}


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
        if not isinstance(reducer, Reducer):
            if not callable(reducer):
                raise TypeError(
                    f"wrap_reducer expects a MetricReducer or a function, got {reducer!r}"
                )
            reducer = FunctionReducer(reducer, self.position)
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
            groups.setdefault(w.group, {}).update(_named(w, result))
        return groups


def _named(wrapped: Wrapped, result: Any) -> dict[str, Any]:
    if wrapped.name is not None:
        return {wrapped.name: result}
    if not isinstance(result, dict):
        raise BatchError(
            f"reducer {type(wrapped.reducer).__name__} was wrapped without a name, so its "
            f"cross_slot_reduce must return a dict of metrics, but it returned {result!r}; "
            "return a dict or pass name= to wrap_reducer"
        )
    return result


def _call(wrapped: Wrapped, fn: Callable[[], R]) -> R:
    try:
        return fn()
    except BatchError:
        raise
    except Exception as exc:
        raise BatchError(f"reducer {wrapped.key!r} failed: {exc!r}") from exc


def state_of(reducer: Reducer, key: str) -> Any:
    state_dict = getattr(reducer, "state_dict", None)
    try:
        return state_dict() if callable(state_dict) else dict(vars(reducer))
    except TypeError as exc:
        raise BatchError(
            f"cannot read the state of reducer {key!r}: {exc}; "
            "give it state_dict() and load_state_dict(state) methods"
        ) from exc


def load_state(reducer: Reducer, state: Any) -> None:
    load_state_dict = getattr(reducer, "load_state_dict", None)
    if callable(load_state_dict):
        load_state_dict(state)
    else:
        vars(reducer).update(state)


def fresh_copy(reducer: Reducer) -> Reducer:
    if isinstance(reducer, FunctionReducer):
        return FunctionReducer(reducer.fn, reducer.position)
    return copy.deepcopy(reducer)
