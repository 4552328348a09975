"""PyTorchTrial, the user's class (Determined's shape), its callbacks, and the checks a trial
must pass before training starts."""

from __future__ import annotations

import enum
import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import torch

from graphbook.trainer.errors import TrainerError

if TYPE_CHECKING:
    from graphbook.trainer.context import PyTorchTrialContext


class Reducer(enum.Enum):
    """How `evaluate_batch` metrics are combined over batches (and processes)."""

    AVG = "avg"
    SUM = "sum"
    MAX = "max"
    MIN = "min"


class PyTorchTrial:
    """Subclass it: `__init__(self, context)` wraps models and optimizers, `train_batch`
    trains on one batch, and exactly one of `evaluate_batch` / `evaluate_full_dataset`
    computes validation metrics."""

    def __init__(self, context: PyTorchTrialContext) -> None:
        self.context = context

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        """Train on one batch; return the loss tensor or a dict of metrics. `batch_idx` counts
        batches since the run began (it goes on across epochs and resumes)."""
        raise NotImplementedError

    def build_training_data_loader(self) -> Any:
        """The training data, when `train()` is given none."""
        raise TrainerError(
            f"{type(self).__name__} has no build_training_data_loader(): pass train_data to "
            "train() or define it"
        )

    def build_validation_data_loader(self) -> Any:
        """The validation data, when `train()` is given none."""
        raise TrainerError(
            f"{type(self).__name__} has no build_validation_data_loader(): pass val_data to "
            "train() or define it"
        )

    def evaluation_reducer(self) -> Reducer | dict[str, Reducer]:
        """How `evaluate_batch` metrics are combined: one Reducer, or one per metric."""
        return Reducer.AVG

    def build_callbacks(self) -> dict[str, PyTorchCallback]:
        return {}

    def get_batch_length(self, batch: Any) -> int:
        from graphbook.trainer.data import first_tensor

        tensor = first_tensor(batch)
        return 0 if tensor is None else len(tensor)


class PyTorchCallback:
    """Hooks into the training loop; override what you need. `state_dict` /
    `load_state_dict` are saved in and restored from checkpoints."""

    def on_trial_startup(self, first_batch_idx: int, checkpoint_uuid: str | None) -> None:
        """Before training (or resuming at `first_batch_idx`)."""

    def on_trial_shutdown(self) -> None:
        """After training ends, however it ends."""

    def on_training_start(self) -> None: ...

    def on_training_epoch_start(self, epoch_idx: int) -> None: ...

    def on_training_epoch_end(self, epoch_idx: int) -> None: ...

    def on_training_workload_end(
        self, avg_metrics: dict[str, Any], batch_metrics: list[dict[str, Any]]
    ) -> None:
        """After each reporting period, with its averaged and per-batch training metrics."""

    def on_validation_start(self) -> None: ...

    def on_validation_epoch_start(self) -> None: ...

    def on_validation_epoch_end(self, outputs: list[Any]) -> None: ...

    def on_validation_end(self, metrics: dict[str, Any]) -> None: ...

    def on_checkpoint_load_start(self, checkpoint: dict[str, Any]) -> None: ...

    def on_checkpoint_save_start(self, checkpoint: dict[str, Any]) -> None: ...

    def on_checkpoint_write_end(self, checkpoint_dir: str) -> None:
        """After a checkpoint's files are written (on rank 0 only)."""

    def on_checkpoint_end(self, checkpoint_dir: str) -> None:
        """Determined's deprecated name of `on_checkpoint_write_end`: called right after it."""

    def on_checkpoint_upload_end(self, uuid: str) -> None: ...

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None: ...


def overrides(trial: PyTorchTrial, name: str) -> bool:
    return getattr(type(trial), name, None) is not getattr(PyTorchTrial, name, None)


def check_trial(trial: Any) -> None:
    """Refuse a trial that cannot be trained, saying what to change."""
    if not isinstance(trial, PyTorchTrial):
        raise TrainerError(
            f"expected a PyTorchTrial instance (from context.build_trial(MyTrial)), got {trial!r}"
        )
    name = type(trial).__name__
    if not overrides(trial, "train_batch"):
        raise TrainerError(f"{name} must define train_batch(self, batch, epoch_idx, batch_idx)")
    batch = callable(getattr(trial, "evaluate_batch", None))
    full = callable(getattr(trial, "evaluate_full_dataset", None))
    if batch == full:
        which = "both" if batch else "neither"
        raise TrainerError(
            f"{name} defines {which} of evaluate_batch and evaluate_full_dataset; define "
            "exactly one (evaluate_batch(self, batch) for per-batch metrics)"
        )


def accepts(method: Any, count: int) -> bool:
    """Whether `method` can be called with `count` positional arguments."""
    try:
        inspect.signature(method).bind(*range(count))
    except TypeError:
        return False
    return True


def as_metrics(value: Any, where: str) -> dict[str, Any]:
    """A train_batch / evaluate_batch result as a dict of metrics."""
    if isinstance(value, torch.Tensor):
        return {"loss": value}
    if isinstance(value, dict):
        return value
    raise TrainerError(
        f"{where} must return a loss tensor or a dict of metrics, got {type(value).__name__}"
    )


def trial_reference(cls: type) -> dict[str, str]:
    """How to find `cls` again: its module and name, and the file it was defined in (a script
    run as __main__ is imported from its file)."""
    return {
        "module": cls.__module__,
        "qualname": cls.__qualname__,
        "file": str(Path(inspect.getfile(cls)).resolve()),
    }


def trial_class(reference: dict[str, str]) -> type[PyTorchTrial]:
    """The trial class a checkpoint was trained with (see `trial_reference`)."""
    module_name, file = reference.get("module", ""), reference.get("file", "")
    try:
        if module_name != "__main__" and module_name:
            module = importlib.import_module(module_name)
        else:
            module = _import_file(Path(file))
        found: Any = module
        for part in reference["qualname"].split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, KeyError, OSError) as exc:
        raise TrainerError(
            f"cannot import the trial class {reference.get('qualname')!r} from "
            f"{module_name or file}: {exc}; pass the class (load_checkpoint_trial(MyTrial, ...))"
        ) from None
    if not (isinstance(found, type) and issubclass(found, PyTorchTrial)):
        raise TrainerError(f"{reference.get('qualname')!r} is not a PyTorchTrial subclass")
    return found


def _import_file(path: Path) -> ModuleType:
    name = "graphbook_trial_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no Python module at {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
