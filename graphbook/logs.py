"""Where `log(...)` and `log_metric(...)` from inside a node go: the run's event stream (a
worker's metrics come back with its task's outcome), or Python logging outside a run."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

LogLevel = Literal["info", "warning", "error", "json", "image"]
LogHandler = Callable[[str, Any, LogLevel], None]
"""Receives (node id, message, level)."""

Reported = tuple[dict[str, float], int | None]
"""One metric call: its values by name, and its step (None: the next step of each name)."""
MetricHandler = Callable[[str, Reported], None]
"""Receives (node id, reported metrics) in the run's process."""

_current: ContextVar[tuple[str, LogHandler] | None] = ContextVar("graphbook_node", default=None)
_metrics: ContextVar[MetricHandler | None] = ContextVar("graphbook_metrics", default=None)
_collecting = False
_waiting: list[Reported] = []
_logger = logging.getLogger("graphbook.nodes")


@contextmanager
def node_context(node_id: str, handler: LogHandler) -> Iterator[None]:
    """Route `log()` calls made while the block runs to `handler`, tagged with `node_id`."""
    token = _current.set((node_id, handler))
    try:
        yield
    finally:
        _current.reset(token)


def log(message: Any, level: LogLevel = "info", *, node_id: str | None = None) -> None:
    """Log from node code; outside a run it goes to Python's `logging`."""
    current = _current.get()
    if current is None:
        _logger.log(logging.ERROR if level == "error" else logging.INFO, "%s", message)
        return
    bound_id, handler = current
    handler(node_id or bound_id, message, level)


@contextmanager
def metric_context(handler: MetricHandler) -> Iterator[None]:
    """Route `log_metric()` calls made in a node's context while the block runs to `handler`."""
    token = _metrics.set(handler)
    try:
        yield
    finally:
        _metrics.reset(token)


def collect_in_this_process() -> None:
    """In a worker process: metrics reported outside a node's context (by load and dump
    functions) wait here until `take_reported()` sends them back with the task's outcome."""
    global _collecting
    _collecting = True


def take_reported() -> tuple[Reported, ...]:
    """The metrics reported since the last call (in a worker process), taken."""
    if not _waiting:
        return ()
    taken = tuple(_waiting)
    _waiting.clear()
    return taken


def log_metric(name: str, value: float, step: int | None = None) -> None:
    """Report one metric of the running node (a loss, an accuracy, a count): recorded in the
    run store with the node's id as its group, and written by the run's metric loggers.
    `step` defaults to the next step of this name on this node (0, 1, 2, ...)."""
    log_metrics({name: value}, step)


def log_metrics(values: Mapping[str, float], step: int | None = None) -> None:
    """Report several metrics at one step (default: the next step of the names reported)."""
    reported = (_numbers(values), _step(step))
    handler, current = _metrics.get(), _current.get()
    if handler is not None and current is not None:
        handler(current[0], reported)
    elif _collecting:
        _waiting.append(reported)
    else:
        _logger.info("metrics at step %s: %s", step, reported[0])


def _numbers(values: Mapping[str, float]) -> dict[str, float]:
    numbers: dict[str, float] = {}
    for name, value in values.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"a metric's name is a non-empty string, got {name!r}")
        try:
            numbers[name] = float(value)
        except (TypeError, ValueError):
            raise TypeError(
                f"metric {name!r} must be a number (or a one-element tensor), got {value!r}"
            ) from None
    return numbers


def _step(step: int | None) -> int | None:
    if step is None:
        return None
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise TypeError(f"a metric's step is a whole number from 0, got {step!r}")
    return step
