"""What goes wrong in a batch run: bad arguments, a refused resume, and a clean stop."""

from __future__ import annotations

from graphbook.durable.errors import EXIT_PREEMPTED, DurableError, Preempted

__all__ = ["EXIT_PREEMPTED", "BatchError", "BatchPreempted", "ResumeError"]


class BatchError(DurableError):
    """A batch run cannot start or go on; the message says why and how to fix it."""


class ResumeError(BatchError):
    """The run this command would resume was started with a different batch size or dataset."""


BatchPreempted = Preempted
"""Raised by `torch_batch_process` once a run stopped by a signal has checkpointed: a
`SystemExit` with status 75 (`EXIT_PREEMPTED`). The durable runtime's one clean stop, so it
also catches the Trainer's `TrainingPreempted`."""
