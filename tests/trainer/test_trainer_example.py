"""The ShapesNet example trains through the Trainer API and reports its accuracy; the image
workflow then classifies with the trained model through the built-in TrainedModel node.

A short run (144 batches; the example's default is 282) is enough to be well above chance
(1 in 3): seeds 0, 1 and 2 reached 79, 80 and 75 % on the held-out images."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .runner import ROOT, run_python


@pytest.mark.timeout(900)  # two processes of torch; minutes only on a machine shared by many
def test_train_shapes_then_classify_with_the_trained_model(tmp_path: Path) -> None:
    # one torch thread: the same figures on any machine, and no thread spinning at a barrier
    # while the other waits for a core that the rest of the suite holds
    env = {"GRAPHBOOK_HOME": str(tmp_path / "home"), "OMP_NUM_THREADS": "1"}
    trained = run_python(
        (
            "-m",
            "graphbook.examples.train_shapes",
            "--epochs",
            "6",
            "--count",
            "1500",
            "--register",
            "shapes-trained",
        ),
        env,
        tmp_path,
        timeout=600,
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    match = re.search(r"held-out accuracy (\d\.\d+) after 6 epochs", trained.stdout)
    assert match and float(match.group(1)) >= 0.6, trained.stdout
    assert "as model 'shapes-trained' version 1" in trained.stdout
    # a line per validation, though no terminal shows a progress bar here (24 batches an epoch)
    progress = r"epoch 1, batch 24/144: loss [\d.]+; validation validation_loss=[\d.]+ accuracy="
    assert re.search(progress, trained.stderr), trained.stderr[-3000:]

    workflow = json.loads((ROOT / "workflows/image_classification.json").read_text())
    for node in workflow["nodes"]:
        if node["id"] == "model":
            node["type"], node["params"] = "TrainedModel", {"model": "shapes-trained"}
        if node["id"] == "images":
            node["params"]["count"] = 48
    (tmp_path / "trained.json").write_text(json.dumps(workflow))
    ran = run_python(
        ("-m", "graphbook", "run", "trained.json", "--nodes", str(ROOT / "custom_nodes")),
        env,
        tmp_path,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    classified = re.search(r"accuracy (\d+\.\d)% \(\d+ of 48 images\)", ran.stdout)
    assert classified and float(classified.group(1)) >= 50.0, ran.stdout
