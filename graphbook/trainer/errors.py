"""What goes wrong in training: bad arguments or trials, a refused resume, and a clean stop."""

from __future__ import annotations

from graphbook.batch_process.errors import EXIT_PREEMPTED, BatchPreempted
from graphbook.errors import GraphbookError

__all__ = [
    "EXIT_PREEMPTED",
    "TrainerError",
    "TrainingPreempted",
    "TrainingResumeError",
    "accept_determined_only",
]


class TrainerError(GraphbookError):
    """Training cannot start or go on; the message says why and how to fix it."""


class TrainingResumeError(TrainerError):
    """The unfinished run this script would resume was started with other settings."""


class TrainingPreempted(BatchPreempted):
    """Raised by `train` once a run stopped by SIGTERM/SIGINT has checkpointed: a `SystemExit`
    with status 75 (`EXIT_PREEMPTED`), like the batch API's. Running the same script again
    resumes the run where it stopped."""

    def __str__(self) -> str:
        return (
            f"training run {self.run_id} stopped by signal {self.signum} after "
            f"{self.batches_completed} batch(es); run the same command again to resume"
        )


def accept_determined_only(where: str, given: dict[str, object], known: tuple[str, ...]) -> None:
    """Determined arguments that mean nothing here are accepted (and ignored); anything else
    is a typo worth a clear error rather than silence."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TrainerError(
            f"{where}() got unexpected argument(s) {', '.join(unknown)}; see docs/trainer.md"
        )
