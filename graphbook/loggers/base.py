"""The metric logger protocol, the fan-out the Trainer and the batch API hold, and exporting a
past run from the store through the same calls.

A logger is opened with the run and the rows the store already holds for it (none for a new
run; a resumed run's rows up to its checkpoint): whatever it wrote for that run before is
replaced by them, so a resume never leaves a step twice. Then it gets the hyperparameters and
each new row as the run reports it, and is closed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from graphbook.errors import GraphbookError
from graphbook.store import MetricRecord, Store

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoggedRun:
    """The store's run a logger writes: its id, name and kind (train, batch, workflow...)."""

    id: str
    name: str
    kind: str


@runtime_checkable
class MetricLogger(Protocol):
    def open(self, run: LoggedRun, history: Sequence[MetricRecord]) -> None:
        """Start writing `run`, its output made to hold `history` (and nothing it held after)."""

    def log_hparams(self, hparams: Mapping[str, Any]) -> None: ...

    def log_metrics(self, group: str, step: int, values: Mapping[str, Any]) -> None: ...

    def close(self) -> None: ...


class LoggerError(GraphbookError):
    """A logger was given wrongly (not a MetricLogger) or could not open its output."""


def numbers(values: Mapping[str, Any]) -> dict[str, float]:
    """The values that are numbers (not booleans), for loggers that take only numbers."""
    return {
        name: float(value)
        for name, value in values.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


class MetricLoggers:
    """The loggers of one run, on the chief process. A logger that fails after it opened is
    reported once and left out; the run goes on (its metrics are in the store)."""

    def __init__(self, loggers: Iterable[Any] | None) -> None:
        self.loggers: list[MetricLogger] = list(checked(loggers))
        self._open: list[MetricLogger] = []

    def __bool__(self) -> bool:
        return bool(self.loggers)

    def open(
        self, run: LoggedRun, history: Sequence[MetricRecord], hparams: Mapping[str, Any]
    ) -> None:
        for each in self.loggers:
            try:
                each.open(run, history)
                each.log_hparams(hparams)
            except Exception as exc:
                self.close()
                raise LoggerError(f"{type(each).__name__} could not open: {exc}") from exc
            self._open.append(each)

    def log_metrics(self, group: str, step: int, values: Mapping[str, Any]) -> None:
        for each in list(self._open):
            try:
                each.log_metrics(group, step, values)
            except Exception:
                logger.exception("%s failed and is left out of this run", type(each).__name__)
                self._open.remove(each)
                _close(each)

    def close(self) -> None:
        opened, self._open = self._open, []
        for each in opened:
            _close(each)


def _close(each: MetricLogger) -> None:
    try:
        each.close()
    except Exception:
        logger.exception("%s failed to close", type(each).__name__)


def checked(loggers: Iterable[Any] | None) -> list[MetricLogger]:
    """`loggers` as a list, each a MetricLogger (else LoggerError naming it)."""
    if loggers is None:
        return []
    if isinstance(loggers, MetricLogger):
        loggers = [loggers]
    found = list(loggers)
    for each in found:
        if not isinstance(each, MetricLogger):
            raise LoggerError(
                f"loggers must be MetricLoggers (CSVLogger, TensorBoardLogger, MLflowLogger, or "
                f"an object with open, log_hparams, log_metrics and close), got {each!r}"
            )
    return found


def export_run(store: Store, run_id: str, loggers: Iterable[Any]) -> int:
    """Write a past run's metric rows and hyperparameters through `loggers`, as they would
    have been written while it ran; returns the number of rows."""
    record = store.get_run(run_id)
    rows = store.metrics([run_id])
    fan = MetricLoggers(loggers)
    fan.open(LoggedRun(record.id, record.name, record.kind), rows, hparams_of(record.config))
    fan.close()
    return len(rows)


def hparams_of(config: Mapping[str, Any]) -> dict[str, Any]:
    hparams = config.get("hparams")
    return dict(hparams) if isinstance(hparams, Mapping) else {}
