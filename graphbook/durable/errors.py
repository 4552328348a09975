"""What goes wrong in durable work, whichever API runs it: a run refused (its name locked, a
reducer's state unreadable), and the clean stop a signal asks for."""

from __future__ import annotations

from graphbook.errors import GraphbookError

EXIT_PREEMPTED = 75
"""Exit status of a run stopped by SIGTERM or SIGINT after it checkpointed (EX_TEMPFAIL:
"try again"): rerunning the same command resumes it. A crash exits 1, a completed run 0."""


class DurableError(GraphbookError):
    """A run cannot start or go on; the message says why and how to fix it. The batch API's
    BatchError and the Trainer's TrainerError are kinds of it."""


class Preempted(SystemExit):
    """Raised once a run stopped by a signal has checkpointed (the batch API's name for it is
    `BatchPreempted`; the Trainer's `TrainingPreempted` is a kind of it).

    It is a `SystemExit`, so an unhandled one ends the program with status `EXIT_PREEMPTED`;
    code that embeds the API can catch it to do something else."""

    what = "batch run"
    """What the message calls the run."""

    def __init__(self, run_id: str, batches_completed: int, signum: int) -> None:
        super().__init__(EXIT_PREEMPTED)
        self.run_id = run_id
        self.batches_completed = batches_completed
        self.signum = signum

    def __str__(self) -> str:
        return (
            f"{self.what} {self.run_id} stopped by signal {self.signum} after "
            f"{self.batches_completed} batch(es); run the same command again to resume"
        )
