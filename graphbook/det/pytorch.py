"""`det.pytorch`: Determined's PyTorch names, re-exported from `graphbook.trainer` (and the
batch API's `torch_batch_process`)."""

from graphbook.batch_process import (
    TorchBatchProcessor,
    TorchBatchProcessorContext,
    torch_batch_process,
)
from graphbook.durable.devices import to_device
from graphbook.durable.reducers import MetricReducer
from graphbook.trainer import (
    Batch,
    DataLoader,
    Epoch,
    LRScheduler,
    PyTorchCallback,
    PyTorchTrial,
    PyTorchTrialContext,
    Reducer,
    TorchData,
    Trainer,
    TrainUnit,
    init,
    load_checkpoint_trial,
)
from graphbook.trainer.load import load_trial_from_checkpoint_path

__all__ = [
    "Batch",
    "DataLoader",
    "Epoch",
    "LRScheduler",
    "MetricReducer",
    "PyTorchCallback",
    "PyTorchTrial",
    "PyTorchTrialContext",
    "Reducer",
    "TorchBatchProcessor",
    "TorchBatchProcessorContext",
    "TorchData",
    "TrainUnit",
    "Trainer",
    "init",
    "load_checkpoint_trial",
    "load_trial_from_checkpoint_path",
    "to_device",
    "torch_batch_process",
]
