"""Metric reducers, whichever API runs them: the MetricReducer interface, plain functions wrapped
as reducers, and reading and restoring a reducer's state for a checkpoint.

A reducer works in three steps: each rank accumulates (`update`, called by the user), each rank
reduces what it holds to one picklable value (`per_slot_reduce`), and rank 0 reduces the list of
those values to the metric (`cross_slot_reduce`). A reducer's state is checkpointed with the
run's progress, so a resumed run reports the same value as one that never stopped.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from graphbook.durable.errors import DurableError


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


def as_reducer(
    value: Any, position: Callable[[], int], refused: type[Exception] = TypeError
) -> Reducer:
    """What `wrap_reducer` was given, as a reducer: a MetricReducer (or look-alike) as it is, a
    function as a FunctionReducer (`position`: the global batch now); anything else is
    `refused` (the API's own error)."""
    if isinstance(value, Reducer):
        return value
    if not callable(value):
        raise refused(f"wrap_reducer expects a MetricReducer or a function, got {value!r}")
    return FunctionReducer(value, position)


def named_metrics(
    name: str | None, reducer: Reducer, value: Any, refused: type[DurableError] = DurableError
) -> dict[str, Any]:
    """A reducer's result as metrics: `{name: value}` for one wrapped with a name; one wrapped
    without a name must return a dict of them, else it is `refused` (the API's own error)."""
    if name is not None:
        return {name: value}
    if not isinstance(value, dict):
        raise refused(
            f"reducer {type(reducer).__name__} was wrapped without a name, so its "
            f"cross_slot_reduce must return a dict of metrics, but it returned {value!r}; "
            "return a dict or pass name= to wrap_reducer"
        )
    return value


def state_of(reducer: Reducer, key: str) -> Any:
    state_dict = getattr(reducer, "state_dict", None)
    try:
        return state_dict() if callable(state_dict) else dict(vars(reducer))
    except TypeError as exc:
        raise DurableError(
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
