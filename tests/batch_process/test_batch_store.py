"""The run store's batch additions, the Python client and `graphbook runs` / `graphbook metrics`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphbook.batch_process import client
from graphbook.cli import main
from graphbook.store import CheckpointCommit, Store

from .test_batch_process import process


def test_commit_checkpoint_is_all_or_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    run = store.start_run("batch", "job")
    bad = CheckpointCommit(
        run, "c1", "/x", 3, {}, metrics=(("g", 1, {"a": 1}), ("g", 2, {"b": object()})), counts={}
    )
    store.commit_checkpoint(bad)  # objects are stored as their str: fine
    with pytest.raises(Exception, match="UNIQUE"):
        store.commit_checkpoint(CheckpointCommit(run, "c1", "/x", 4, {}, (("g", 3, {}),)))
    assert [m.steps_completed for m in store.metrics([run])] == [1, 2]  # nothing of the second
    store.commit_checkpoint(CheckpointCommit(run, "c2", "/y", 5, {}, status="completed"))
    record = store.get_run(run)
    assert (record.status, record.ended is not None) == ("completed", True)


def test_latest_run_by_name(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    assert store.latest_run("batch", "job") is None
    store.start_run("batch", "job", run_id="first")
    store.start_run("workflow", "job", run_id="other kind")
    store.start_run("batch", "job", run_id="second")
    latest = store.latest_run("batch", "job")
    assert latest is not None and latest.id == "second"


def test_client_models_checkpoints_and_links(home: Path, tmp_path: Path) -> None:
    weights = tmp_path / "w.pt"
    weights.write_bytes(b"weights")
    checkpoint = client.import_checkpoint(weights, name="trained")
    assert (checkpoint.download() / "w.pt").read_bytes() == b"weights"
    with pytest.raises(KeyError, match="no model named"):
        client.get_model("net")
    model = client.create_model("net")
    first = model.register_version(checkpoint)
    second = model.register_version(checkpoint.uuid)
    assert (first.version, second.version) == (1, 2)
    assert client.get_model("net").get_version().version == 2
    assert [v.version for v in model.get_versions()] == [1, 2]
    with pytest.raises(KeyError, match="no checkpoint"):
        model.register_version("nope")
    with pytest.raises(KeyError, match="no version 7"):
        model.get_version(7)


def test_runs_and_metrics_on_the_command_line(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    process(max_batches=2)
    assert main(["runs"]) == 0
    listed = capsys.readouterr().out
    assert "batch" in listed and "completed" in listed and "numbers  2/2 batches" in listed
    [run] = client.list_runs("batch")
    assert main(["metrics", run.id, "--group", "inference", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"sum": 6, "count": 4, "order": [0, 1, 2, 3]} in [r["metrics"] for r in rows]
    assert main(["metrics", run.id, "--group", "batches"]) == 0
    assert capsys.readouterr().out.count("items=2") == 2
    assert main(["runs", "--kind", "workflow"]) == 0
    assert "no runs yet" in capsys.readouterr().err


def test_metrics_by_checkpoint_and_model_on_the_command_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "w.pt").write_bytes(b"")
    checkpoint = client.import_checkpoint(tmp_path / "w.pt")
    client.create_model("net").register_version(checkpoint)
    store = Store()
    run = store.start_run("batch", "inference")
    store.link_run(run, checkpoint_uuid=checkpoint.uuid, model="net", version=1)
    store.report_metrics(run, "inference", 0, {"accuracy": 0.975})
    assert main(["metrics", "--checkpoint", checkpoint.uuid]) == 0
    assert "accuracy=0.975" in capsys.readouterr().out
    assert main(["metrics", "--model", "net", "--version", "1"]) == 0
    assert "accuracy=0.975" in capsys.readouterr().out
    assert main(["metrics", "--model", "nope"]) == 2
    assert "no model named 'nope'" in capsys.readouterr().err
    assert main(["metrics", "no-such-run"]) == 2
    assert "no run with id" in capsys.readouterr().err


def test_metrics_without_a_store_says_so(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "x"]) == 2
    assert "no run store yet" in capsys.readouterr().err
    assert not home.exists(), "reading does not create a store"
