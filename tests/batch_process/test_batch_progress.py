"""Torch_batch_process shows its progress and where it resumes, on the
chief only."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from graphbook.batch_process import BatchPreempted
from graphbook.batch_process.progress import BatchProgress, eta

from .jobs import FAULT_ENV
from .outcome import outcome
from .test_batch_process import process


def test_progress_and_resuming_are_shown(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(FAULT_ENV, "term-batch:4")
    with pytest.raises(BatchPreempted):
        process()
    first = capsys.readouterr().err
    run_id = outcome(home).run.id
    assert f"batch run {run_id}: 12 batch(es) to do" in first
    assert re.search(rf"run {run_id}: batch 3/12, [\d.,]+ items/s, ETA \d:\d\d:\d\d", first)
    assert f"run {run_id} stopped (run the same command again to resume it): batch 5/12" in first
    monkeypatch.delenv(FAULT_ENV)
    process()
    again = capsys.readouterr().err
    assert f"resuming run {run_id} at batch 5 of 12" in again
    assert re.search(rf"run {run_id} completed: batch 12/12 \([\d.,]+ items/s", again)


def test_other_ranks_are_quiet() -> None:
    stream = io.StringIO()
    progress = BatchProgress("r1", 4, 10, 2, rank=1, stream=stream)
    progress.begin()
    progress.update(6, checkpoint=True)
    progress.end("completed")
    assert stream.getvalue() == ""


def test_a_terminal_gets_a_live_bar_and_the_same_last_line() -> None:
    stream = io.StringIO()
    progress = BatchProgress("r1", 0, 10, 2, rank=0, stream=stream, terminal=True)
    progress.begin()
    progress.update(5)
    progress.end("completed")
    shown = stream.getvalue()
    assert "batches" in shown and "5/10" in shown and "items/s" in shown, "the live bar"
    assert "run r1 completed: batch 5/10" in shown


def test_eta() -> None:
    assert eta(2, 10.0, 10, 4) == "0:00:30"
    assert eta(0, 1.0, 10, 0) is None and eta(3, 1.0, None, 3) is None
    assert eta(1, 3600.0, 3, 1) == "2:00:00"
