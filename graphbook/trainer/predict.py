"""`predict(trial, data)`: a trained trial's outputs over a dataset, computed on the batch
engine (`torch_batch_process`), so it is sharded over processes, checkpointed, resumable and
exactly-once; the outputs come back in input order."""

from __future__ import annotations

from typing import Any

import torch

from graphbook.batch_process import client
from graphbook.batch_process.context import TorchBatchProcessorContext
from graphbook.batch_process.processor import TorchBatchProcessor
from graphbook.batch_process.runner import torch_batch_process
from graphbook.durable.names import qualified_name
from graphbook.store import Store
from graphbook.trainer.context import PyTorchTrialContext
from graphbook.trainer.data import DataLoader
from graphbook.trainer.errors import TrainerError
from graphbook.trainer.trial import PyTorchTrial

PREFIX = "batch_"


def predict(
    trial: PyTorchTrial,
    data: Any,
    *,
    batch_size: int | None = None,
    run_name: str | None = None,
    checkpoint_interval: int = 10,
    start_over: bool = False,
    num_workers: int = 0,
) -> Any:
    """`trial.predict_batch(batch)` if the trial defines it, else its first model applied to
    each batch's inputs (the batch, or its first element), for every batch of `data` (a
    DataLoader or a map-style dataset). Returns the outputs in input order: one tensor when
    they are tensors (concatenated), else a list. Every process gets them all."""
    dataset, size, workers = _source(data, batch_size, num_workers)
    forward = _forward(trial)
    name = run_name or _default_name(trial)
    checkpoint = trial.context.checkpoint_uuid

    class Predictor(TorchBatchProcessor):
        def __init__(self, context: TorchBatchProcessorContext) -> None:
            self.context = context
            self.pending: list[tuple[int, Any]] = []
            if checkpoint:
                context.report_task_using_checkpoint(checkpoint)

        def process_batch(self, batch: Any, batch_idx: int) -> None:
            with torch.no_grad():
                output = forward(self.context.to_device(batch))
            self.pending.append((self.context.global_batch_idx, _to_cpu(output)))

        def on_checkpoint_start(self) -> None:
            if not self.pending:
                return
            with self.context.upload_path() as folder:
                for index, output in self.pending:
                    torch.save(output, folder / f"{PREFIX}{index:09d}.pt")
            self.pending = []

    Predictor.__qualname__ = f"predict[{type(trial).__qualname__}]"
    torch_batch_process(
        Predictor,
        dataset,
        batch_size=size,
        checkpoint_interval=checkpoint_interval,
        dataloader_kwargs={"num_workers": workers},
        run_name=name,
        start_over=start_over,
    )
    return _collect(name)


def _source(data: Any, batch_size: int | None, num_workers: int) -> tuple[Any, int, int]:
    if isinstance(data, DataLoader | torch.utils.data.DataLoader):
        if data.batch_size is None:
            raise TrainerError("predict: the DataLoader needs a batch_size")
        workers = int(
            getattr(data, "num_workers", 0)
            or getattr(data, "loader_kwargs", {}).get("num_workers", 0)
        )
        return data.dataset, batch_size or data.batch_size, workers or num_workers
    if hasattr(data, "__len__") and hasattr(data, "__getitem__"):
        return data, batch_size or 1, num_workers
    raise TrainerError(
        f"predict expects a det.pytorch.DataLoader or a map-style dataset, got "
        f"{type(data).__name__}"
    )


def _forward(trial: PyTorchTrial) -> Any:
    custom = getattr(trial, "predict_batch", None)
    if callable(custom):
        return custom
    context: PyTorchTrialContext = trial.context
    if not context.models:
        raise TrainerError(
            f"{type(trial).__name__} wraps no model: define predict_batch(self, batch) or "
            "wrap a model in __init__"
        )
    model = context.models[0]
    model.eval()

    def forward(batch: Any) -> Any:
        inputs = batch[0] if isinstance(batch, list | tuple) else batch
        return model(inputs)

    return forward


def _to_cpu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_to_cpu(v) for v in value)
    return value


def _default_name(trial: PyTorchTrial) -> str:
    source = getattr(trial.context, "checkpoint_uuid", None) or trial.context._session.run_name
    return f"predict:{qualified_name(type(trial))}:{source}"


def _collect(run_name: str) -> Any:
    store = Store()
    run = store.latest_run("batch", run_name)
    if run is None or run.status != "completed":
        raise TrainerError(f"prediction run {run_name!r} did not complete")
    files = sorted(
        (p for p in client.Client(store).get_run(run.id).files() if p.name.startswith(PREFIX)),
        key=lambda p: p.name,
    )
    outputs = [torch.load(p, map_location="cpu", weights_only=False) for p in files]
    if outputs and all(isinstance(o, torch.Tensor) for o in outputs):
        return torch.cat(outputs)
    return [item for output in outputs for item in _items(output)]


def _items(output: Any) -> list[Any]:
    return list(output) if isinstance(output, list | tuple) else [output]
