"""Metric loggers: a run's metric rows, as the store keeps them, written to CSV files,
TensorBoard event files or MLflow as the run reports them, or afterwards from the store
(`graphbook runs export`). The Trainer and torch_batch_process take `loggers=[...]`."""

from graphbook.loggers.base import LoggedRun, MetricLogger, MetricLoggers, export_run
from graphbook.loggers.csvfiles import CSVLogger
from graphbook.loggers.mlflow import MLflowLogger
from graphbook.loggers.tensorboard import TensorBoardLogger

__all__ = [
    "CSVLogger",
    "LoggedRun",
    "MLflowLogger",
    "MetricLogger",
    "MetricLoggers",
    "TensorBoardLogger",
    "export_run",
]
