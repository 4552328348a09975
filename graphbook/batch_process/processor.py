"""TorchBatchProcessor: the user's class, and how a run builds one per rank."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from graphbook.batch_process.profiler import BatchProfiler

if TYPE_CHECKING:
    from graphbook.batch_process.context import TorchBatchProcessorContext


class TorchBatchProcessor(ABC):
    """Subclass it and define `__init__(self, context)` and `process_batch(self, batch,
    batch_idx)`; `on_checkpoint_start` and `on_finish` are optional.

    One instance runs on each rank. Before your `__init__` runs, the instance already has
    `self.context`, `self.rank` (this rank's number) and `self.profiler` (a `BatchProfiler`:
    `with self.profiler as p: ...; p.step()`); set them yourself to replace them.
    """

    context: TorchBatchProcessorContext
    rank: int
    profiler: BatchProfiler

    @abstractmethod
    def __init__(self, context: TorchBatchProcessorContext) -> None:
        """Build what every batch needs (models, reducers); called once per rank per attempt."""
        bind(self, context)

    @abstractmethod
    def process_batch(self, batch: Any, batch_idx: int) -> None:
        """Process one batch. `batch_idx` is this rank's index of it, `g // world_size` for
        global batch `g` (so rank r's k-th batch is global batch k * world_size + r, as in
        Determined); `context.global_batch_idx` is `g`, whose batch holds the dataset's items
        [g * batch_size, (g + 1) * batch_size). A batch after the last checkpoint is processed
        again if the run crashes, so write outputs through `context.upload_path()`, which
        commits them with the checkpoint."""

    def on_checkpoint_start(self) -> None:  # noqa: B027 (optional hook, empty by design)
        """Called on every rank before each checkpoint (and once before the end): persist what
        was buffered since the last one, e.g. through `context.upload_path()`."""

    def on_finish(self) -> None:  # noqa: B027 (optional hook, empty by design)
        """Called on every rank once all batches are done and the reducers reduced (see
        `context.reduced_metrics`); not called when the run stops early. If the run is killed
        during it, the next attempt calls it again; what it writes through `upload_path()` or
        `report_metrics` is committed once, with the run's completion."""


def bind(processor: TorchBatchProcessor, context: TorchBatchProcessorContext) -> None:
    processor.context = context
    processor.rank = context.get_distributed_rank()
    processor.profiler = context.profiler


def build_processor(
    cls: type[TorchBatchProcessor], context: TorchBatchProcessorContext
) -> TorchBatchProcessor:
    """An instance of `cls` with context, rank and profiler set before its `__init__` runs."""
    if not (isinstance(cls, type) and issubclass(cls, TorchBatchProcessor)):
        raise TypeError(
            f"batch_processor_cls must be a subclass of TorchBatchProcessor, got {cls!r}"
        )
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise TypeError(f"{cls.__qualname__} must define {missing} to be used as a processor")
    processor = cls.__new__(cls)
    bind(processor, context)
    cls.__init__(processor, context)
    return processor
