"""A dict that contains itself is carried like any other (copied for each branch as
copy.deepcopy would, previewed, recorded): it fails neither the run nor the server, in
`graphbook run` (with and without workers) and in a served run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fault_procs import env, project, serve

NODES = '''"""A source whose second dict holds itself."""

from graphbook import source, step


@step("Faults/Loops")
@source()
def loops(ctx):
    for i in range(3):
        data = {"i": i, "inner": [1, {"deep": i}]}
        if i == 1:
            data["me"] = data
            data["inner"].append(data["inner"])
        yield data


@step("Faults/Check")
def check(ctx, data):
    if data["i"] == 1:
        assert data["me"] is data, "a copy keeps the loop"
'''


def branching(folder: Path) -> str:
    """Loops -> two Check branches (each gets its own copy)."""
    nodes = [{"id": "src", "type": "Loops", "params": {}}]
    nodes += [{"id": n, "type": "Check", "params": {}} for n in ("a", "b")]
    edges = [{"source": "src", "output": "out", "target": n, "input": "in"} for n in ("a", "b")]
    document = {"format": "graphbook.workflow", "version": 1, "nodes": nodes, "edges": edges}
    (folder / "workflows" / "loops.json").write_text(json.dumps(document))
    (folder / "nodes" / "loops.py").write_text(NODES)
    return "loops.json"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_graphbook_run_carries_a_dict_that_contains_itself(tmp_path: Path, workers: str) -> None:
    folder = project(tmp_path)
    name = branching(folder)
    command = [sys.executable, "-m", "graphbook", "run", str(folder / "workflows" / name)]
    command += ["--nodes", str(folder / "nodes"), "--workers", workers, "--json"]
    done = subprocess.run(
        command,
        cwd=folder,
        env={**env(), "GRAPHBOOK_HOME": str(folder / "data")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    end = json.loads(done.stdout.strip().splitlines()[-1])
    assert end["status"] == "completed" and end["counts"]["b"] == {"out": 3}, end


def test_a_served_run_carries_a_dict_that_contains_itself(tmp_path: Path) -> None:
    folder = project(tmp_path)
    name = branching(folder)
    server = serve(folder)
    try:
        run = server.start(name)
        assert server.ended(run) == "completed", server.last()
        status, details = server.call("GET", f"/api/runs/{run}/details")
        assert status == 200, details
        assert server.call("GET", "/api/info")[0] == 200
    finally:
        server.stop()
