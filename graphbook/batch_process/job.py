"""The arguments of one `torch_batch_process` call, checked, and the run name that identifies the
job across attempts (its resume identity)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from graphbook.batch_process.errors import BatchError
from graphbook.batch_process.processor import TorchBatchProcessor
from graphbook.durable.names import main_script, qualified_name

RUN_NAME_ENV = "GRAPHBOOK_BATCH_RUN_NAME"
START_OVER_ENV = "GRAPHBOOK_BATCH_START_OVER"
DEFAULT_BATCH_SIZE = 1
_REFUSED_LOADER_KWARGS = {
    "sampler": "the run deals batches to ranks itself",
    "batch_sampler": "the run deals batches to ranks itself",
}


@dataclass(frozen=True)
class Job:
    processor_cls: type[TorchBatchProcessor]
    dataset: Any
    batch_size: int
    checkpoint_interval: int
    max_batches: int | None
    loader_kwargs: dict[str, Any]
    """DataLoader arguments left once batch_size, shuffle and drop_last are taken out."""
    drop_last: bool
    run_name: str
    start_over: bool
    hparams: dict[str, Any]

    def config(self) -> dict[str, Any]:
        """What the store records about the job when its run starts."""
        return {
            "processor": qualified_name(self.processor_cls),
            "batch_size": self.batch_size,
            "drop_last": self.drop_last,
            "checkpoint_interval": self.checkpoint_interval,
            "max_batches": self.max_batches,
            "hparams": self.hparams,
        }


def make_job(
    processor_cls: type[TorchBatchProcessor],
    dataset: Any,
    batch_size: int | None,
    max_batches: int | None,
    checkpoint_interval: int,
    dataloader_kwargs: dict[str, Any] | None,
    run_name: str | None,
    start_over: bool,
    hparams: dict[str, Any] | None,
) -> Job:
    """Check the arguments; every error says which argument and how to fix it."""
    if not (isinstance(processor_cls, type) and issubclass(processor_cls, TorchBatchProcessor)):
        raise TypeError(
            f"batch_processor_cls must be a subclass of TorchBatchProcessor, got {processor_cls!r}"
        )
    kwargs = dict(dataloader_kwargs or {})
    _check_loader_kwargs(kwargs)
    size = _batch_size(batch_size, kwargs.pop("batch_size", None))
    _positive("checkpoint_interval", checkpoint_interval)
    if max_batches is not None:
        _positive("max_batches", max_batches)
    kwargs.pop("shuffle", None)
    drop_last = bool(kwargs.pop("drop_last", False))
    return Job(
        processor_cls=processor_cls,
        dataset=dataset,
        batch_size=size,
        checkpoint_interval=checkpoint_interval,
        max_batches=max_batches,
        loader_kwargs=kwargs,
        drop_last=drop_last,
        run_name=run_name or os.environ.get(RUN_NAME_ENV) or default_run_name(processor_cls),
        start_over=start_over or os.environ.get(START_OVER_ENV, "") not in ("", "0"),
        hparams=dict(hparams or {}),
    )


def _check_loader_kwargs(kwargs: dict[str, Any]) -> None:
    if kwargs.get("shuffle"):
        raise BatchError(
            "dataloader_kwargs: shuffle=True is not supported: batches must keep the dataset's "
            "order to be sharded and resumed; shuffle the dataset itself if you need to"
        )
    if kwargs.get("in_order") is False:
        raise BatchError(
            "dataloader_kwargs: in_order=False is not supported: progress is committed in "
            "dataset order, so batches must arrive in order"
        )
    for key, why in _REFUSED_LOADER_KWARGS.items():
        if kwargs.get(key) is not None:
            raise BatchError(f"dataloader_kwargs: {key} is not supported: {why}")


def _batch_size(argument: int | None, in_kwargs: int | None) -> int:
    if argument is not None and in_kwargs is not None:
        raise BatchError(
            "batch_size is given both as an argument and in dataloader_kwargs; give it once"
        )
    size = argument if argument is not None else in_kwargs
    if size is None:
        return DEFAULT_BATCH_SIZE
    _positive("batch_size", size)
    return size


def _positive(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise BatchError(f"{name} must be a positive whole number, got {value!r}")


def default_run_name(processor_cls: type) -> str:
    """`<module or script path>:<class>`, e.g. `/work/infer.py:InferenceProcessor`. The same
    command run again has the same name, so it resumes the same run."""
    module = processor_cls.__module__
    if module == "__main__":
        module = main_script() or module
    return f"{module}:{processor_cls.__qualname__}"
