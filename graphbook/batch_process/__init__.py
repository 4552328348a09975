"""The batch processing API (Determined's torch_batch_process, local-first): run a processor
over a dataset in one process or many, with checkpoints, resume, reducers and lineage."""

from graphbook.batch_process import client as client
from graphbook.batch_process.context import TorchBatchProcessorContext
from graphbook.batch_process.errors import EXIT_PREEMPTED, BatchError, BatchPreempted, ResumeError
from graphbook.batch_process.processor import TorchBatchProcessor
from graphbook.batch_process.profiler import BatchProfiler
from graphbook.batch_process.runner import torch_batch_process
from graphbook.durable.reducers import MetricReducer

__all__ = [
    "EXIT_PREEMPTED",
    "BatchError",
    "BatchPreempted",
    "BatchProfiler",
    "MetricReducer",
    "ResumeError",
    "TorchBatchProcessor",
    "TorchBatchProcessorContext",
    "client",
    "torch_batch_process",
]
