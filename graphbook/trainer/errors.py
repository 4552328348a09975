"""What goes wrong in training: bad arguments or trials, a refused resume, and a clean stop."""

from __future__ import annotations

from graphbook.durable.errors import EXIT_PREEMPTED, DurableError, Preempted

__all__ = [
    "EXIT_PREEMPTED",
    "TrainerError",
    "TrainingPreempted",
    "TrainingResumeError",
    "accept_determined_only",
]


class TrainerError(DurableError):
    """Training cannot start or go on; the message says why and how to fix it."""


class TrainingResumeError(TrainerError):
    """The unfinished run this script would resume was started with other settings."""


class TrainingPreempted(Preempted):
    """Raised by `train` once a run stopped by SIGTERM/SIGINT has checkpointed: a `SystemExit`
    with status 75 (`EXIT_PREEMPTED`), a kind of the batch API's `BatchPreempted`. Running the
    same script again resumes the run where it stopped."""

    what = "training run"


def accept_determined_only(where: str, given: dict[str, object], known: tuple[str, ...]) -> None:
    """Determined arguments that mean nothing here are accepted (and ignored); anything else
    is a typo worth a clear error rather than silence."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TrainerError(
            f"{where}() got unexpected argument(s) {', '.join(unknown)}; see docs/trainer.md"
        )
