"""Every workflow in workflows/ runs through the CLI, as a user would run it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / "workflows").glob("*.json"))


def graphbook(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "graphbook", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(params=["2workers", "ray"])
def pool_args(request: pytest.FixtureRequest) -> list[str]:
    """`graphbook run` with 2 worker processes, or on the test session's Ray."""
    if request.param == "ray":
        return ["--ray", request.getfixturevalue("ray_address")]
    return ["--workers", "2"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[w.stem for w in WORKFLOWS])
def test_every_example_runs(workflow: Path, tmp_path: Path, pool_args: list[str]) -> None:
    nodes = str(ROOT / "custom_nodes")
    result = graphbook("run", str(workflow), "--nodes", nodes, *pool_args, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "run completed" in result.stdout


def test_the_image_example_writes_the_same_predictions_on_ray(
    tmp_path: Path, ray_address: str
) -> None:
    workflow = str(ROOT / "workflows/image_classification.json")
    nodes = str(ROOT / "custom_nodes")
    outputs = []
    for name, args in {"local": ["--workers", "2"], "ray": ["--ray", ray_address]}.items():
        (tmp_path / name).mkdir()
        result = graphbook("run", workflow, "--nodes", nodes, *args, cwd=tmp_path / name)
        assert result.returncode == 0, result.stderr
        outputs.append((tmp_path / name / "out/shapes_predictions.jsonl").read_text())
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 60


def test_hello_routes_even_and_odd(tmp_path: Path) -> None:
    result = graphbook("run", str(ROOT / "workflows/hello.json"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "[shout_even] HELLO, WORLD! #0" in result.stdout
    assert "[say_odd] Hello, World! #1" in result.stdout
    assert re.search(r"split\s+Split\s+A=5\s+B=5", result.stdout)


def test_image_example_classifies_well_and_writes_predictions(tmp_path: Path) -> None:
    workflow = str(ROOT / "workflows/image_classification.json")
    nodes = str(ROOT / "custom_nodes")
    result = graphbook("run", workflow, "--nodes", nodes, "--workers", "2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    match = re.search(r"accuracy (\d+\.\d)% \((\d+) of (\d+) images\)", result.stdout)
    assert match, result.stdout
    assert float(match.group(1)) >= 90.0 and match.group(3) == "240"
    lines = (tmp_path / "out/shapes_predictions.jsonl").read_text().splitlines()
    assert len(lines) == 60
    first = json.loads(lines[0])["image_paths"][0]
    assert first["prediction"] in ("circle", "square", "triangle")
    assert 0.0 <= first["confidence"] <= 1.0
    assert len(list((tmp_path / "data/shapes").glob("*.jpg"))) == 240
