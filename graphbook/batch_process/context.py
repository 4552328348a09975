"""TorchBatchProcessorContext: what a processor can ask of its run (device, files kept with
checkpoints, reducers, metrics, ranks, hyperparameters, lineage, profiling)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import torch
import torch.profiler

from graphbook.batch_process.client import Checkpoint, ModelVersion
from graphbook.batch_process.errors import BatchError
from graphbook.batch_process.metrics import MetricBuffer
from graphbook.batch_process.profiler import BatchProfiler
from graphbook.batch_process.reducers import RankReducerState, ReducerSet
from graphbook.durable.devices import to_device
from graphbook.durable.distributed import Collective
from graphbook.durable.folders import RunFolders
from graphbook.store import Store

T = TypeVar("T")
M = TypeVar("M", bound=torch.nn.Module)


@dataclass(frozen=True)
class RunInfo:
    """What a context knows of its run (built by `torch_batch_process`)."""

    run_id: str
    attempt: str
    folders: RunFolders
    hparams: dict[str, Any] = field(default_factory=dict)
    store: Store | None = None
    """The run store, on rank 0 only: the other ranks send what they report to rank 0."""


class TorchBatchProcessorContext:
    """Handed to the processor's `__init__`. One per rank."""

    def __init__(
        self, collective: Collective, run: RunInfo, reducers: RankReducerState | None = None
    ) -> None:
        self._collective = collective
        self._run = run
        self._global_batch_idx = -1
        self.device: torch.device = collective.device
        """`cuda:<local rank>` when a GPU is visible, else the CPU."""
        self.profiler = BatchProfiler()
        # What the run collects from this rank at each checkpoint:
        self.reducers = ReducerSet(reducers or RankReducerState(), lambda: self._global_batch_idx)
        self.metrics = MetricBuffer()
        self.reduced_metrics: dict[str, dict[str, Any]] = {}
        """The reducers' results by metrics group, on every rank, once all batches are done
        (before `on_finish`); empty until then."""

    # -- where the batch is ----------------------------------------------------------------
    @property
    def global_batch_idx(self) -> int:
        """The global index of the batch being processed (-1 before the first): its items are
        the dataset's `[g * batch_size, (g + 1) * batch_size)`, whichever rank has it."""
        return self._global_batch_idx

    def set_position(self, global_batch_idx: int) -> None:
        self._global_batch_idx = global_batch_idx

    def get_run_id(self) -> str:
        return self._run.run_id

    # -- devices -----------------------------------------------------------------------------
    def to_device(self, data: T) -> T:
        """`data` with every tensor (and numpy array, as a tensor) moved to `device`, inside
        lists, tuples, named tuples and dicts; anything else is returned as it is."""
        return to_device(data, self.device)

    def prepare_model_for_inference(self, model: M) -> M:
        """Put `model` in eval mode on `device`; returns it."""
        model.eval()
        return model.to(self.device)

    # -- outputs -------------------------------------------------------------------------------
    @contextmanager
    def upload_path(self) -> Iterator[Path]:
        """A folder for this rank's output files. They are committed with the next checkpoint,
        atomically with its progress: if the run crashes first, they are dropped and the
        batches that made them are processed again. Committed files end up in
        `<data dir>/batch/<run id>/checkpoints/<uuid>/files/rank_<r>/`."""
        path = self._run.folders.pending(self._run.attempt, self._collective.rank)
        path.mkdir(parents=True, exist_ok=True)
        yield path

    def get_tensorboard_path(self) -> Path:
        """A folder for TensorBoard event files (and profiler traces), shared by the ranks."""
        path = self._run.folders.tensorboard
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- metrics -----------------------------------------------------------------------------
    def wrap_reducer(self, reducer: Any, name: str | None = None, group: str = "inference") -> Any:
        """Register a MetricReducer (or a plain function of all values, in dataset order) and
        return it; call its `update` from `process_batch`. Its result is reported in metrics
        `group` when the run completes, and its state is checkpointed with the run."""
        return self.reducers.wrap(reducer, name, group)

    def report_metrics(self, group: str, steps_completed: int, metrics: Mapping[str, Any]) -> None:
        """Record metrics for this run; they are committed with the next checkpoint (so each is
        stored once even if a crash makes a batch run twice). Every rank reports its own."""
        self.metrics.add(group, steps_completed, metrics)

    # -- ranks and settings --------------------------------------------------------------------
    def get_distributed_rank(self) -> int:
        return self._collective.rank

    def get_distributed_size(self) -> int:
        return self._collective.size

    def get_hparams(self) -> dict[str, Any]:
        """The `hparams` given to torch_batch_process (an empty dict if none were)."""
        return dict(self._run.hparams)

    # -- lineage -------------------------------------------------------------------------------
    def report_task_using_checkpoint(self, checkpoint: Checkpoint | str) -> None:
        """Record that this run uses `checkpoint`, so its metrics show in that checkpoint's
        `get_metrics()` (rank 0 records it; on the other ranks this does nothing)."""
        uuid = checkpoint if isinstance(checkpoint, str) else checkpoint.uuid
        store = self._run.store
        if store is None:
            return
        try:
            store.get_checkpoint(uuid)
        except KeyError:
            raise BatchError(f"no checkpoint {uuid!r} in the run store at {store.path}") from None
        self._link(store, uuid, None, None)

    def report_task_using_model_version(self, model_version: ModelVersion) -> None:
        """Record that this run uses `model_version` (and so its checkpoint)."""
        store = self._run.store
        if store is not None:
            model, version = model_version.model_name, model_version.version
            self._link(store, model_version.checkpoint.uuid, model, version)

    def _link(self, store: Store, uuid: str, model: str | None, version: int | None) -> None:
        run_id = self._run.run_id
        if all(
            (k.checkpoint_uuid, k.model, k.version) != (uuid, model, version)
            for k in store.links(run_id)
        ):
            store.link_run(run_id, checkpoint_uuid=uuid, model=model, version=version)

    # -- profiling -----------------------------------------------------------------------------
    def set_profiler(self, *args: Any, **kwargs: Any) -> None:
        """Make `self.profiler` also drive `torch.profiler.profile(*args, **kwargs)`: started at
        its first block, stepped by `p.step()`, stopped when the run ends. Traces go to
        `get_tensorboard_path()` unless `on_trace_ready` says otherwise."""
        if "on_trace_ready" not in kwargs:
            folder = str(self.get_tensorboard_path())
            kwargs["on_trace_ready"] = torch.profiler.tensorboard_trace_handler(folder)
        self.profiler.use_torch_profiler(torch.profiler.profile(*args, **kwargs))
