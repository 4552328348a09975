"""What goes wrong in a batch run: bad arguments, a refused resume, and a clean stop."""

from __future__ import annotations

from graphbook.errors import GraphbookError

EXIT_PREEMPTED = 75
"""Exit status of a run stopped by SIGTERM or SIGINT after it checkpointed (EX_TEMPFAIL:
"try again"): rerunning the same command resumes it. A crash exits 1, a completed run 0."""


class BatchError(GraphbookError):
    """A batch run cannot start or go on; the message says why and how to fix it."""


class ResumeError(BatchError):
    """The run this command would resume was started with a different batch size or dataset."""


class BatchPreempted(SystemExit):
    """Raised by `torch_batch_process` once a run stopped by a signal has checkpointed.

    It is a `SystemExit`, so an unhandled one ends the program with status `EXIT_PREEMPTED`;
    code that embeds the API can catch it to do something else."""

    def __init__(self, run_id: str, batches_completed: int, signum: int) -> None:
        super().__init__(EXIT_PREEMPTED)
        self.run_id = run_id
        self.batches_completed = batches_completed
        self.signum = signum

    def __str__(self) -> str:
        return (
            f"batch run {self.run_id} stopped by signal {self.signum} after "
            f"{self.batches_completed} batch(es); run the same command again to resume"
        )
