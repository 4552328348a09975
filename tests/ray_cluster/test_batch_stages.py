"""Stage actors on the two-node cluster (on by default there): a batch step's on_item_batch
runs on replicas on both nodes, fed its loads where they were made; the run is the local run,
and the driver reads back no decoded tensor. Runs before test_cluster.py, whose last test
takes node 2 down (and runs a staged workflow while it does)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cluster_procs import Cluster

pytestmark = pytest.mark.ray_cluster

ROOT = Path(__file__).resolve().parents[2]
STAGED_RUN = Path(__file__).with_name("staged_run.py")
RUN = 240.0
TENSOR = 3 * 224 * 224 * 4
"""Bytes of one decoded item."""


def staged_run(cluster: Cluster, folder: Path, address: str, stages: str, n: int) -> Any:
    """Run staged_run.py from `folder` (which node 2 cannot see): its report."""
    out = str(folder / ("out-local" if address == "local" else f"out-{stages}"))
    command = [sys.executable, str(STAGED_RUN), address, stages, str(n), out, "0.3"]
    result = subprocess.run(
        command, cwd=folder, env=cluster.env, capture_output=True, text=True, timeout=RUN
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["ok"], report["errors"]
    report["files"] = {p.name: p.read_text() for p in sorted(Path(out).iterdir())}
    return report


def without_where(dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in d.items() if k not in ("node", "pid")} for d in dicts]


def test_a_batch_step_runs_on_replicas_on_both_nodes_as_the_local_run_would(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The default on a cluster: each node's stage actor runs batches, the dicts come back with
    the fields set there, every dump is written on the driver's node, and the driver reads back
    a few hundred bytes per item where without stages it reads each decoded tensor."""
    local = staged_run(cluster, tmp_path, "local", "off", 48)
    staged = staged_run(cluster, tmp_path, cluster.address, "auto", 48)
    assert without_where(staged["dicts"]) == without_where(local["dicts"])
    assert staged["files"] == local["files"] and len(local["files"]) == 48
    assert len({d["node"] for d in staged["dicts"]}) == 2, "replicas on both nodes ran batches"
    assert staged["driver"] not in {d["pid"] for d in staged["dicts"]}
    assert staged["received_per_item"] < 2_000, staged["received_per_item"]
    off = staged_run(cluster, tmp_path, cluster.address, "off", 48)
    assert {d["pid"] for d in off["dicts"]} == {off["driver"]}, "--ray-stages off: the driver"
    assert without_where(off["dicts"]) == without_where(local["dicts"])
    assert off["received_per_item"] > TENSOR, off["received_per_item"]
    assert off["files"] == local["files"]


def test_the_image_example_on_stage_actors_predicts_as_locally(
    cluster: Cluster, tmp_path: Path
) -> None:
    """From a clean folder on storage both nodes share; its log says where the model runs.
    On a cluster the image paths in the dicts are absolute (docs/scale.md, "Paths and
    outputs"); everything else is byte for byte."""
    outputs = {}
    logs = {}
    for name, args in {"local": ["--workers", "2"], "ray": ["--ray", cluster.address]}.items():
        clean = cluster.shared / f"{tmp_path.name}-{name}"
        clean.mkdir()
        shutil.copy(ROOT / "workflows" / "image_classification.json", clean)
        command = [sys.executable, "-m", "graphbook", "run", "image_classification.json"]
        command += [*args, "--set", "images.count=96"]
        result = subprocess.run(
            command, cwd=clean, env=cluster.env, capture_output=True, text=True, timeout=RUN
        )
        assert result.returncode == 0, result.stderr[-3000:]
        logs[name] = result.stdout
        written = (clean / "out" / "shapes_predictions.jsonl").read_text()
        outputs[name] = written.replace(f"{clean}/", "")  # absolute on a cluster (paths above)
    assert outputs["ray"] == outputs["local"] and len(outputs["local"].splitlines()) == 24
    notice = next(line for line in logs["ray"].splitlines() if "stage actors" in line)
    assert "on_item_batch runs on Ray stage actors" in notice
    assert notice.count("Ray node ") == 2, "a replica on each node"
