"""Determined's names for the Trainer API, so scripts written for Determined run with only their
imports changed: `import graphbook.det as det` (and `import graphbook.det.pytorch`). Everything
here is re-exported from `graphbook.trainer`; nothing is implemented twice."""

from graphbook.det import pytorch as pytorch
from graphbook.trainer.units import Batch, Batches, Epoch, Epochs, TrainUnit

__all__ = ["Batch", "Batches", "Epoch", "Epochs", "TrainUnit", "pytorch"]
