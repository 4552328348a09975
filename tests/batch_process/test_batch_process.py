"""torch_batch_process in this process: datasets, stops, failures, resume and refusals."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
import torch

from graphbook.batch_process import (
    EXIT_PREEMPTED,
    BatchError,
    BatchPreempted,
    ResumeError,
    TorchBatchProcessor,
    torch_batch_process,
)
from graphbook.batch_process.context import TorchBatchProcessorContext
from graphbook.durable.lock import run_lock
from graphbook.store import Store

from .jobs import FAULT_ENV, Numbers, NumberStream, Recorder
from .outcome import assert_complete, outcome

ITEMS, BATCH = 23, 2  # 12 batches, the last one short


def process(dataset: Any = None, **kwargs: Any) -> None:
    options: dict[str, Any] = {"batch_size": BATCH, "checkpoint_interval": 3, "run_name": "numbers"}
    torch_batch_process(
        Recorder, Numbers(ITEMS) if dataset is None else dataset, **{**options, **kwargs}
    )


@pytest.mark.parametrize(("iterable", "workers"), [(False, 0), (True, 0), (False, 2), (True, 2)])
def test_every_batch_is_committed_once(home: Path, iterable: bool, workers: int) -> None:
    dataset = NumberStream(ITEMS) if iterable else Numbers(ITEMS)
    process(dataset, dataloader_kwargs={"num_workers": workers} if workers else None)
    result = outcome(home)
    assert_complete(result, ITEMS, BATCH)
    assert all(row["batch_idx"] == row["batch"] for row in result.rows)  # one rank
    assert result.run.counts["batches_completed"] == 12
    assert len(result.group("inference")) == 2  # the reducers' row and on_finish's


def test_max_batches_caps_the_run(home: Path) -> None:
    process(max_batches=4)
    result = outcome(home)
    assert result.run.status == "completed"
    assert sorted(row["batch"] for row in result.rows) == [0, 1, 2, 3]
    assert result.reduced()["order"] == list(range(8))


@pytest.mark.parametrize(("stop", "batch"), [("term", 0), ("term", 2), ("int", 4), ("term", 10)])
def test_a_stop_signal_checkpoints_and_resumes(
    home: Path, monkeypatch: pytest.MonkeyPatch, stop: str, batch: int
) -> None:
    monkeypatch.setenv(FAULT_ENV, f"{stop}-batch:{batch}")
    with pytest.raises(BatchPreempted) as stopped:
        process()
    assert stopped.value.code == EXIT_PREEMPTED
    assert stopped.value.batches_completed == batch + 1  # the current batch is finished
    result = outcome(home)
    assert result.run.status == "stopped"
    assert sorted(row["batch"] for row in result.rows) == list(range(batch + 1))
    monkeypatch.delenv(FAULT_ENV)
    process()
    assert_complete(outcome(home), ITEMS, BATCH)


def test_sigterm_on_the_last_batch_completes(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, "term-batch:11")
    process()
    assert_complete(outcome(home), ITEMS, BATCH)


def test_signal_handlers_are_restored(home: Path) -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    process(max_batches=1)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_failed_run_resumes_from_its_last_checkpoint(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAULT_ENV, "raise-batch:7")
    with pytest.raises(RuntimeError, match="on purpose"):
        process()
    failed = outcome(home)
    assert failed.run.status == "failed"
    assert "on purpose" in (failed.run.error or "")
    assert sorted(row["batch"] for row in failed.rows) == list(range(6))  # checkpointed at 6
    monkeypatch.delenv(FAULT_ENV)
    process()
    resumed = outcome(home)
    assert resumed.run.id == failed.run.id
    assert_complete(resumed, ITEMS, BATCH)


def stop_early(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAULT_ENV, "term-batch:3")
    with pytest.raises(BatchPreempted):
        process()
    monkeypatch.delenv(FAULT_ENV)


def test_changed_batch_size_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stop_early(monkeypatch)
    with pytest.raises(ResumeError, match=r"batch_size was 2, now 3.*start_over=True"):
        process(batch_size=3)
    process(batch_size=3, start_over=True)
    store = Store()
    runs = store.list_runs("batch")
    assert [r.status for r in runs] == ["completed", "abandoned"]
    assert_complete(outcome(home), ITEMS, 3)


def test_changed_dataset_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stop_early(monkeypatch)
    with pytest.raises(ResumeError, match="the dataset had 23 items, now 24"):
        process(Numbers(ITEMS + 1))
    monkeypatch.setenv("GRAPHBOOK_BATCH_START_OVER", "1")
    process(Numbers(ITEMS + 1))
    assert_complete(outcome(home), ITEMS + 1, BATCH)


def test_a_completed_run_is_not_resumed(home: Path) -> None:
    process(max_batches=1)
    process(max_batches=1)
    assert [r.status for r in Store().list_runs("batch")] == ["completed", "completed"]


def test_a_run_being_processed_elsewhere_is_refused(home: Path) -> None:
    with (
        run_lock(home, "numbers", BatchError),
        pytest.raises(BatchError, match="being processed by"),
    ):
        process()


class NoBatches(TorchBatchProcessor):
    def __init__(self, context: TorchBatchProcessorContext) -> None:
        self.context = context


class Nothing(TorchBatchProcessor):
    def __init__(self, context: TorchBatchProcessorContext) -> None:
        pass

    def process_batch(self, batch: Any, batch_idx: int) -> None:
        pass


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dataloader_kwargs": {"shuffle": True}}, "shuffle=True is not supported"),
        ({"dataloader_kwargs": {"sampler": [0]}}, "sampler is not supported"),
        ({"dataloader_kwargs": {"in_order": False}}, "in_order=False is not supported"),
        ({"batch_size": 2, "dataloader_kwargs": {"batch_size": 2}}, "give it once"),
        ({"checkpoint_interval": 0}, "checkpoint_interval must be a positive"),
        ({"max_batches": -1}, "max_batches must be a positive"),
        ({"batch_size": 1.5}, "batch_size must be a positive"),
    ],
)
def test_bad_arguments_are_explained(home: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(BatchError, match=message):
        torch_batch_process(Nothing, Numbers(3), **kwargs)


def test_processor_class_is_checked(home: Path) -> None:
    with pytest.raises(TypeError, match="subclass of TorchBatchProcessor"):
        torch_batch_process(object, Numbers(3))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must define process_batch"):
        torch_batch_process(NoBatches, Numbers(3))  # type: ignore[type-abstract]


def test_one_shot_iterators_are_refused(home: Path) -> None:
    with pytest.raises(BatchError, match="can be read only once"):
        torch_batch_process(Nothing, (torch.tensor(i) for i in range(3)))


def test_batch_size_may_come_from_dataloader_kwargs(home: Path) -> None:
    process(batch_size=None, dataloader_kwargs={"batch_size": BATCH})
    assert_complete(outcome(home), ITEMS, BATCH)
