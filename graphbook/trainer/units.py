"""Training lengths and periods: `Epoch(n)` / `Batch(n)` (also spelt `Epochs` / `Batches`),
each either every n units or a schedule of unit counts (`Batch([5, 30])`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from graphbook.trainer.errors import TrainerError


@dataclass(frozen=True)
class TrainUnit:
    """`value` units: an int means "every value units" (or "value units long" for a length);
    a collection of ints is a schedule ("after each of these counts")."""

    value: int | Collection[int]

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not isinstance(self.value, int | Collection):
            raise TrainerError(
                f"{type(self).__name__}() takes a positive whole number or a list of them, "
                f"got {self.value!r}"
            )
        counts = [self.value] if isinstance(self.value, int) else list(self.value)
        if not counts or any(
            isinstance(c, bool) or not isinstance(c, int) or c <= 0 for c in counts
        ):
            raise TrainerError(
                f"{type(self).__name__}({self.value!r}): counts must be positive whole numbers"
            )

    @property
    def unit(self) -> str:
        return "epochs" if isinstance(self, Epoch) else "batches"

    def is_schedule(self) -> bool:
        return not isinstance(self.value, int)

    def due(self, count: int) -> bool:
        """Whether the period comes due when `count` units are complete."""
        if isinstance(self.value, int):
            return count > 0 and count % self.value == 0
        return count in self.value

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"


class Epoch(TrainUnit):
    """A number of passes over the training data."""


class Batch(TrainUnit):
    """A number of training steps (one batch on every process)."""


Epochs = Epoch
Batches = Batch


@dataclass(frozen=True)
class Length:
    """`max_length` in batches, given the epoch length."""

    batches: int

    @classmethod
    def of(cls, unit: TrainUnit, epoch_length: int) -> Length:
        if not isinstance(unit, TrainUnit) or unit.is_schedule():
            raise TrainerError(f"max_length must be det.Epochs(n) or det.Batches(n), got {unit!r}")
        assert isinstance(unit.value, int)
        per = epoch_length if isinstance(unit, Epoch) else 1
        return cls(unit.value * per)


def check_period(name: str, period: object) -> TrainUnit | None:
    """`period` as a TrainUnit (None: never), or a clear error naming `name`."""
    if period is None or isinstance(period, TrainUnit):
        return period
    raise TrainerError(
        f"{name} must be det.Epochs(n), det.Batches(n) or a schedule such as "
        f"det.Batches([5, 30]), got {period!r}"
    )


def period_due(period: TrainUnit | None, batches: int, epoch_length: int) -> bool:
    """Whether `period` comes due once `batches` training steps are done."""
    if period is None:
        return False
    if isinstance(period, Epoch):
        return batches % epoch_length == 0 and period.due(batches // epoch_length)
    return period.due(batches)
