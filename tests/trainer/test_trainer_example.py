"""The ShapesNet example trains through the Trainer API and reports its accuracy; the image
workflow then classifies with the trained model through the built-in TrainedModel node."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .runner import ROOT, run_python


def test_train_shapes_then_classify_with_the_trained_model(tmp_path: Path) -> None:
    env = {"GRAPHBOOK_HOME": str(tmp_path / "home")}
    trained = run_python(
        (
            "-m",
            "graphbook.examples.train_shapes",
            "--epochs",
            "2",
            "--count",
            "240",
            "--register",
            "shapes-trained",
        ),
        env,
        tmp_path,
        timeout=240,
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    match = re.search(r"held-out accuracy (\d\.\d+) after 2 epochs", trained.stdout)
    assert match and 0.0 <= float(match.group(1)) <= 1.0, trained.stdout
    assert "as model 'shapes-trained' version 1" in trained.stdout

    workflow = json.loads((ROOT / "workflows/image_classification.json").read_text())
    for node in workflow["nodes"]:
        if node["id"] == "model":
            node["type"], node["params"] = "TrainedModel", {"model": "shapes-trained"}
        if node["id"] == "images":
            node["params"]["count"] = 24
    (tmp_path / "trained.json").write_text(json.dumps(workflow))
    ran = run_python(
        ("-m", "graphbook", "run", "trained.json", "--nodes", str(ROOT / "custom_nodes")),
        env,
        tmp_path,
        timeout=240,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"accuracy \d+\.\d% \(\d+ of 24 images\)", ran.stdout), ran.stdout
