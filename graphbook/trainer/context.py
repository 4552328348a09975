"""PyTorchTrialContext: what a trial asks of its run (hyperparameters, devices, processes) and
hands to it (models, optimizers, LR schedulers, AMP, reducers), and where the loop is."""

from __future__ import annotations

import enum
import logging
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import torch
from torch.nn.parallel import DistributedDataParallel

from graphbook.durable.devices import to_device
from graphbook.durable.distributed import Collective
from graphbook.durable.reducers import Reducer, as_reducer
from graphbook.trainer.errors import TrainerError, accept_determined_only

logger = logging.getLogger(__name__)
T = TypeVar("T")
M = TypeVar("M", bound=torch.nn.Module)
OptT = TypeVar("OptT", bound=torch.optim.Optimizer)


class HParams(dict[str, Any]):
    """The run's hyperparameters; a missing one is a clear error."""

    def __missing__(self, key: str) -> Any:
        known = ", ".join(sorted(self)) or "none"
        raise KeyError(
            f"hyperparameter {key!r} is not set (set: {known}); pass hparams={{{key!r}: ...}} "
            f"to init(), or run with `graphbook train SCRIPT --hparam {key}=VALUE`"
        )


@dataclass
class Session:
    """What every context of one process shares: its ranks, settings and the run's identity."""

    collective: Collective
    hparams: HParams
    seed: int
    run_name: str
    home: Path
    start_over: bool = False
    aggregation_frequency: int = 1
    config_data: dict[str, Any] = field(default_factory=dict)
    exp_conf: dict[str, Any] = field(default_factory=dict)
    """Determined's experiment config, if init(exp_conf=...) was given one."""
    loggers: tuple[Any, ...] = ()
    """init(loggers=...): the metric loggers of every train() that names none."""


class DistributedContext:
    """This process among the run's processes (one, or those `torchrun` started)."""

    def __init__(self, collective: Collective) -> None:
        self._collective = collective
        self.rank = collective.rank
        self.size = collective.size
        self.local_rank = collective.local_rank

    def get_rank(self) -> int:
        return self.rank

    def get_size(self) -> int:
        return self.size

    def get_local_rank(self) -> int:
        return self.local_rank

    def shard_batch_size(self, global_batch_size: int) -> int:
        """This process's share of `global_batch_size` (which must divide evenly)."""
        if global_batch_size % self.size:
            raise TrainerError(
                f"global batch size {global_batch_size} does not divide among {self.size} "
                "processes; choose a multiple of the process count"
            )
        return global_batch_size // self.size

    def gather(self, value: T) -> list[T] | None:
        """Every process's `value` on rank 0 (None on the others)."""
        values = self._collective.gather(value)
        return values if self.rank == 0 else None

    def allgather(self, value: T) -> list[T]:
        return self._collective.broadcast(self._collective.gather(value))

    def broadcast(self, value: T) -> T:
        return self._collective.broadcast(value)

    def barrier(self) -> None:
        self._collective.barrier()


class LRScheduler:
    """Step modes for `wrap_lr_scheduler` (`LRScheduler.StepMode.STEP_EVERY_BATCH`, ...)."""

    class StepMode(enum.Enum):
        STEP_EVERY_EPOCH = 1
        STEP_EVERY_BATCH = 2
        MANUAL_STEP = 3
        STEP_EVERY_OPTIMIZER_STEP = 4


@dataclass
class WrappedScheduler:
    scheduler: Any
    step_mode: LRScheduler.StepMode
    frequency: int
    optimizer: torch.optim.Optimizer


@dataclass
class WrappedReducer:
    key: str
    name: str | None
    reducer: Reducer
    for_training: bool
    for_validation: bool


class DistributedModel(DistributedDataParallel):
    """DDP whose unknown attributes fall through to the wrapped model."""

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    return model.module if isinstance(model, DistributedDataParallel) else model


class Experimental:
    """`context.experimental`: AMP and data checks."""

    def __init__(self, context: PyTorchTrialContext) -> None:
        self._context = context
        self.auto_to_device = True

    def use_amp(self, dtype: torch.dtype | None = None) -> None:
        """Automatic mixed precision: autocast in wrapped models' forward (float16 with a
        GradScaler in backward and step_optimizer, on CUDA; or `dtype=torch.bfloat16`, which
        needs no scaler, on CUDA or on the CPU). float16 needs CUDA: on a CPU it warns and
        trains in float32."""
        self._context._use_amp(dtype)

    def disable_auto_to_device(self) -> None:
        self.auto_to_device = False

    def disable_dataset_reproducibility_checks(self) -> None:
        """Accepted for compatibility: every loader here is reproducible."""


class PyTorchTrialContext:
    """Handed to the trial's `__init__` (this is a trial context, not the trainer context)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.distributed = DistributedContext(session.collective)
        self.device: torch.device = session.collective.device
        self.experimental = Experimental(self)
        self.models: list[torch.nn.Module] = []
        self.optimizers: list[torch.optim.Optimizer] = []
        self.schedulers: list[WrappedScheduler] = []
        self.reducers: list[WrappedReducer] = []
        self.scaler: Any = None
        self._amp = False
        self._amp_dtype: torch.dtype | None = None
        self._stop_requested = False
        self._epoch = 0
        self._batch = 0
        self._epoch_length = 1
        self._tensorboard: Any = None
        self._tensorboard_logging = True
        self._initial_batch = 0
        self.checkpoint_uuid: str | None = None
        """The checkpoint this trial was loaded from (by load_checkpoint_trial), if any."""

    # -- settings ------------------------------------------------------------------------------
    @property
    def hparams(self) -> HParams:
        return self._session.hparams

    def get_hparams(self) -> dict[str, Any]:
        return dict(self._session.hparams)

    def get_hparam(self, name: str) -> Any:
        return self._session.hparams[name]

    def get_trial_seed(self) -> int:
        return self._session.seed

    def get_data_config(self) -> dict[str, Any]:
        return dict(self._session.config_data)

    def get_experiment_config(self) -> dict[str, Any]:
        """Determined's experiment config: `init(exp_conf=...)`, with the hyperparameters and
        the data config known here when it does not say them."""
        return {
            "hyperparameters": dict(self._session.hparams),
            "data": dict(self._session.config_data),
            **self._session.exp_conf,
        }

    def get_initial_batch(self) -> int:
        """The batches done when this attempt started: 0, or where it resumed."""
        return self._initial_batch

    def set_enable_tensorboard_logging(self, enable_tensorboard_logging: bool) -> None:
        """Accepted for Determined's code: metrics always go to the run store, and TensorBoard
        files only through get_tensorboard_writer()."""
        if not isinstance(enable_tensorboard_logging, bool):
            raise TrainerError("set_enable_tensorboard_logging takes True or False")
        self._tensorboard_logging = enable_tensorboard_logging

    def get_enable_tensorboard_logging(self) -> bool:
        return self._tensorboard_logging

    def get_global_batch_size(self) -> int:
        return int(self._session.hparams["global_batch_size"])

    def get_per_slot_batch_size(self) -> int:
        return self.distributed.shard_batch_size(self.get_global_batch_size())

    # -- wrapping ------------------------------------------------------------------------------
    def wrap_model(self, model: M) -> M:
        """Move `model` to `device`, wrap it in DDP when there are several processes (its
        attributes stay reachable), and register it for checkpoints."""
        if not isinstance(model, torch.nn.Module):
            raise TrainerError(f"wrap_model expects a torch.nn.Module, got {type(model).__name__}")
        model = model.to(self.device)
        if self._amp:
            autocast = torch.autocast(self.device.type, dtype=self._amp_dtype)
            model.forward = autocast(model.forward)
        wrapped: torch.nn.Module = model
        if self.distributed.size > 1:
            ids = [self.device.index] if self.device.type == "cuda" else None
            wrapped = DistributedModel(model, device_ids=ids)
        self.models.append(wrapped)
        return cast(M, wrapped)

    def wrap_optimizer(
        self,
        optimizer: OptT,
        backward_passes_per_step: int = 1,
        **_determined_only: Any,
    ) -> OptT:
        """Register `optimizer` for `step_optimizer` and checkpoints."""
        accept_determined_only(
            "wrap_optimizer",
            _determined_only,
            ("fp16_compression", "average_aggregated_gradients"),
        )
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TrainerError(
                f"wrap_optimizer expects a torch.optim.Optimizer, got {type(optimizer).__name__}"
            )
        if backward_passes_per_step != 1:
            self._session.aggregation_frequency = backward_passes_per_step
        self.optimizers.append(optimizer)
        return optimizer

    def wrap_lr_scheduler(
        self,
        lr_scheduler: T,
        step_mode: LRScheduler.StepMode,
        frequency: int = 1,
    ) -> T:
        """Step `lr_scheduler` every epoch, every batch, every optimizer step (each
        `frequency`-th), or never (MANUAL_STEP: you call `step()`); saved in checkpoints."""
        if not isinstance(step_mode, LRScheduler.StepMode):
            raise TrainerError(
                "wrap_lr_scheduler: step_mode must be a LRScheduler.StepMode, e.g. "
                f"det.pytorch.LRScheduler.StepMode.STEP_EVERY_EPOCH; got {step_mode!r}"
            )
        optimizer = getattr(lr_scheduler, "optimizer", None)
        if not any(optimizer is o for o in self.optimizers):
            raise TrainerError(
                "wrap_lr_scheduler: the scheduler's optimizer is not wrapped; call "
                "context.wrap_optimizer(optimizer) first"
            )
        if frequency < 1:
            raise TrainerError(f"wrap_lr_scheduler: frequency must be >= 1, got {frequency}")
        assert optimizer is not None
        self.schedulers.append(WrappedScheduler(lr_scheduler, step_mode, frequency, optimizer))
        return lr_scheduler

    def wrap_scaler(self, scaler: T) -> T:
        """Use your own `torch.amp.GradScaler` (call before wrap_model); saved in checkpoints."""
        self.scaler = scaler
        return scaler

    def _use_amp(self, dtype: torch.dtype | None = None) -> None:
        if self.models:
            raise TrainerError("call context.experimental.use_amp() before wrap_model()")
        if dtype not in (None, torch.float16, torch.bfloat16):
            raise TrainerError(
                f"use_amp(dtype=...) takes torch.float16 or torch.bfloat16, got {dtype!r}"
            )
        if dtype == torch.bfloat16:
            self._amp, self._amp_dtype = True, torch.bfloat16  # its range needs no scaler
            return
        if self.device.type != "cuda":
            warnings.warn(
                "use_amp(): automatic mixed precision needs a CUDA GPU and this process runs "
                "on the CPU, so it trains in float32",
                stacklevel=3,
            )
            return
        self._amp = True
        self.scaler = torch.amp.GradScaler("cuda")

    # -- the step ------------------------------------------------------------------------------
    def _is_sync_step(self) -> bool:
        return (self._batch + 1) % self._session.aggregation_frequency == 0

    def backward(
        self,
        loss: torch.Tensor,
        gradient: torch.Tensor | None = None,
        retain_graph: bool = False,
        create_graph: bool = False,
    ) -> None:
        """`loss.backward()`, scaled under AMP; gradients are not exchanged between processes
        on the batches that only accumulate (aggregation_frequency > 1)."""
        if self.scaler is not None and self._amp:
            loss = self.scaler.scale(loss)
        with ExitStack() as stack:
            if not self._is_sync_step():
                for model in self.models:
                    if isinstance(model, DistributedDataParallel):
                        stack.enter_context(model.no_sync())
            torch.autograd.backward(
                loss, gradient, retain_graph=retain_graph, create_graph=create_graph
            )

    def step_optimizer(
        self,
        optimizer: torch.optim.Optimizer,
        clip_grads: Callable[[Iterator[torch.nn.Parameter]], None] | None = None,
        auto_zero_grads: bool = True,
        scaler: Any = None,
    ) -> None:
        """Step `optimizer` (after `clip_grads(parameters)` if given) and zero its gradients;
        with aggregation_frequency n, only every n-th batch, on the averaged gradients."""
        if not any(optimizer is o for o in self.optimizers):
            raise TrainerError("step_optimizer: wrap the optimizer with wrap_optimizer() first")
        if not self._is_sync_step():
            return
        scaler = scaler if scaler is not None else (self.scaler if self._amp else None)
        self._average_aggregated(optimizer)
        if scaler is not None:
            scaler.unscale_(optimizer)
        if clip_grads is not None:
            clip_grads(iter(_parameters(optimizer)))
        if scaler is not None:
            scaler.step(optimizer)
        else:
            optimizer.step()
        if auto_zero_grads:
            optimizer.zero_grad()
        self._step_schedulers_of(optimizer)

    def _average_aggregated(self, optimizer: torch.optim.Optimizer) -> None:
        frequency = self._session.aggregation_frequency
        if frequency > 1:
            for param in _parameters(optimizer):
                if param.grad is not None:
                    param.grad.div_(frequency)

    def _step_schedulers_of(self, optimizer: torch.optim.Optimizer) -> None:
        for wrapped in self.schedulers:
            if wrapped.step_mode is LRScheduler.StepMode.STEP_EVERY_OPTIMIZER_STEP and (
                wrapped.optimizer is optimizer
            ):
                wrapped.scheduler.step()

    def to_device(self, data: T) -> T:
        """`data` with every tensor moved to `device` (inside lists, tuples and dicts)."""
        return to_device(data, self.device)

    # -- reducers ------------------------------------------------------------------------------
    def wrap_reducer(
        self,
        reducer: Any,
        name: str | None = None,
        for_training: bool = True,
        for_validation: bool = True,
    ) -> Any:
        """Register a MetricReducer (or a function of all `update`d values): it is reset before
        each reporting period and each validation, and its result joins those metrics."""
        reducer = as_reducer(reducer, lambda: self._batch, TrainerError)
        key = name if name is not None else f"unnamed-{len(self.reducers)}"
        if any(w.key == key for w in self.reducers):
            raise TrainerError(f"a reducer named {key!r} is wrapped already; give each its own")
        reducer.reset()
        self.reducers.append(WrappedReducer(key, name, reducer, for_training, for_validation))
        return reducer

    # -- where the loop is ------------------------------------------------------------------------
    def current_train_epoch(self) -> int:
        return self._epoch

    def current_train_batch(self) -> int:
        return self._batch

    def is_epoch_start(self) -> bool:
        return self._batch % self._epoch_length == 0

    def is_epoch_end(self) -> bool:
        return (self._batch + 1) % self._epoch_length == 0

    def set_stop_requested(self, stop_requested: bool) -> None:
        """Stop training after the current batch (it validates and checkpoints first)."""
        self._stop_requested = bool(stop_requested)

    def get_stop_requested(self) -> bool:
        return self._stop_requested

    def _set_position(self, batch: int, epoch_length: int) -> None:
        self._batch, self._epoch_length = batch, epoch_length
        self._epoch = batch // epoch_length

    # -- TensorBoard ---------------------------------------------------------------------------
    def get_tensorboard_path(self) -> Path:
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", self._session.run_name).strip("_")[-80:]
        path = self._session.home.resolve() / "train" / "tensorboard" / (slug or "run")
        path.mkdir(parents=True, exist_ok=True)
        return path

    def get_tensorboard_writer(self) -> Any:
        """A `SummaryWriter` into `get_tensorboard_path()` (needs the tensorboard package)."""
        if self._tensorboard is None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise TrainerError(
                    "get_tensorboard_writer() needs the tensorboard package "
                    "(pip install tensorboard); without it, metrics are still in the run "
                    "store: `graphbook metrics RUN_ID`"
                ) from None
            self._tensorboard = SummaryWriter(str(self.get_tensorboard_path()))
        return self._tensorboard


def _parameters(optimizer: torch.optim.Optimizer) -> list[torch.nn.Parameter]:
    return [p for group in optimizer.param_groups for p in group["params"]]


def hparams_of(value: Mapping[str, Any] | None) -> HParams:
    return HParams(dict(value or {}))
