"""The batch inference example: ShapesNet over generated images, accuracy from a reducer,
predictions through upload_path, linked to the model version it used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphbook.batch_process import client
from graphbook.examples import batch_inference


def test_example_classifies_every_image_once(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "images"
    args = ["--images", "90", "--images-dir", str(folder), "--batch-size", "16"]
    batch_inference.main([*args, "--checkpoint-interval", "2"])
    assert "accuracy" in capsys.readouterr().out
    [run] = client.list_runs("batch")
    rows = [json.loads(line) for f in run.files() for line in f.read_text().splitlines()]
    assert sorted(row["index"] for row in rows) == list(range(90))
    correct = sum(row["label"] == row["predicted"] for row in rows)
    [metric] = client.get_model("shapes-net").get_version(1).get_metrics("inference")
    assert metric.metrics["accuracy"] == correct / 90 > 0.9
    batch_inference.main(args)  # a second run reuses the images and the model version
    assert len(client.get_model("shapes-net").get_versions()) == 1
    assert len(client.get_model("shapes-net").get_version().get_metrics("inference")) == 2
