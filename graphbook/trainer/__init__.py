"""The Trainer API: train a PyTorchTrial locally (one process or `torchrun`), resume it exactly,
load it back and predict with it, and search over hyperparameters (docs/trainer.md).

    import graphbook.trainer as gt
    context = gt.init(hparams={"lr": 0.1})
    trial = context.build_trial(MyTrial)
    context.train(trial, train_data, val_data, max_length=gt.Epochs(5))

`graphbook.det` offers the same under Determined's names (`det.pytorch.init()`, ...).
"""

from graphbook.durable.reducers import MetricReducer
from graphbook.trainer.api import TrainerContext, TrainingInfo, init
from graphbook.trainer.callbacks import EarlyStopping
from graphbook.trainer.context import LRScheduler, PyTorchTrialContext
from graphbook.trainer.data import DataLoader, TorchData
from graphbook.trainer.errors import (
    EXIT_PREEMPTED,
    TrainerError,
    TrainingPreempted,
    TrainingResumeError,
)
from graphbook.trainer.load import load_checkpoint_trial
from graphbook.trainer.loop import Trainer, TrainResult
from graphbook.trainer.predict import predict
from graphbook.trainer.trial import PyTorchCallback, PyTorchTrial, Reducer
from graphbook.trainer.units import Batch, Batches, Epoch, Epochs, TrainUnit

__all__ = [
    "EXIT_PREEMPTED",
    "Batch",
    "Batches",
    "DataLoader",
    "EarlyStopping",
    "Epoch",
    "Epochs",
    "LRScheduler",
    "MetricReducer",
    "PyTorchCallback",
    "PyTorchTrial",
    "PyTorchTrialContext",
    "Reducer",
    "TorchData",
    "TrainResult",
    "TrainUnit",
    "Trainer",
    "TrainerContext",
    "TrainerError",
    "TrainingInfo",
    "TrainingPreempted",
    "TrainingResumeError",
    "init",
    "load_checkpoint_trial",
    "predict",
]
