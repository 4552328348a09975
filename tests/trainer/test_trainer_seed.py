"""Seed 003's scripts run with only their import lines changed.

The seed's train.py has two bugs that its text says how to fix, and `scripts/seed_train.py`
fixes them so: `self.model(batch)` -> `self.model(data)` in train_batch (the note unpacks
`data, labels = batch` just before), and the annotation `pytorch.TorchData` ->
`det.pytorch.TorchData` (the note imports only `det`). Its imports became
`import graphbook.det as det` / `import graphbook.det.pytorch`. In batch_inference.py,
`from train.py import ...` (not Python) became `from seed_train import ...`, and
`my_upload_fn`, which the seed leaves undefined, is imported from `uploads`.
"""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest
import torch

from graphbook.store import Store

from .runner import SCRIPTS

HPARAMS = {"learning_rate": 0.1, "global_batch_size": 16}


def train_seed(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GRAPHBOOK_TRAIN_HPARAMS", json.dumps(HPARAMS))
    runpy.run_path(str(SCRIPTS / "seed_train.py"), run_name="__main__")
    monkeypatch.delenv("GRAPHBOOK_TRAIN_HPARAMS")
    (run,) = Store().list_runs("train")
    return run.id


def test_seed_train_script_trains_validates_and_checkpoints(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = train_seed(monkeypatch)
    store = Store()
    run = store.get_run(run_id)
    assert run.status == "completed"
    assert run.name == str((SCRIPTS / "seed_train.py").resolve())
    assert run.config["hparams"] == HPARAMS
    validation = store.metrics([run_id], "validation")
    assert [m.steps_completed for m in validation] == [4 * e for e in range(1, 11)]
    assert validation[-1].metrics["loss"] < validation[0].metrics["loss"] < 1.0
    assert validation[-1].metrics["loss"] < 1e-6  # y = w x with w -> 1
    (checkpoint,) = store.checkpoints(run_id)  # policy "best": the best is also the latest
    assert checkpoint.uuid == f"{run_id}-step-40"
    assert (Path(checkpoint.path) / "state.pt").is_file()
    info = json.loads((Path(checkpoint.path) / "checkpoint.json").read_text())
    assert info["hparams"] == HPARAMS and info["batches"] == 40


def test_seed_batch_inference_predicts_with_the_trained_trial(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = train_seed(monkeypatch)
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from uploads import UPLOADED

    UPLOADED.clear()
    config = {"trial_id": run_id, "batch_size": 64}
    monkeypatch.setenv("GRAPHBOOK_TRAIN_CONFIG_DATA", json.dumps(config))
    runpy.run_path(str(SCRIPTS / "seed_batch_inference.py"), run_name="__main__")
    (predictions,) = UPLOADED
    assert isinstance(predictions, torch.Tensor) and predictions.shape == (64, 1)
    assert torch.allclose(predictions, torch.ones(64, 1), atol=1e-3)
    (batch_run,) = Store().list_runs("batch")
    assert batch_run.status == "completed"
    assert [link.checkpoint_uuid for link in Store().links(batch_run.id)] == [f"{run_id}-step-40"]


def test_training_runs_show_in_graphbook_runs_and_metrics(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphbook.cli import main

    run_id = train_seed(monkeypatch)
    capsys.readouterr()
    assert main(["runs", "--kind", "train"]) == 0
    assert re.search(
        rf"{run_id}\s+train\s+completed .*seed_train\.py\s+40/40 batches", capsys.readouterr().out
    )
    assert main(["metrics", run_id, "--group", "validation"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 10 and re.search(rf"{run_id}\s+validation\s+40\s+loss=", lines[-1])
