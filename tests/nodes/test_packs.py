"""Node packs installed as Python packages (entry point group `graphbook.nodes`) load as the
library does, listed by pack; one that fails to import is reported and the others still load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACK = '''
from graphbook import param, source, step


@step("Weather/Readings")
@source()
@param("days", "int", default=3, description="how many days")
def readings(ctx):
    """One reading a day."""
    for day in range(ctx.days):
        yield {"day": day, "celsius": 20 + day}
'''


def install(site: Path, dist: str, module: str, code: str) -> None:
    """A distribution as pip leaves it: its module and a dist-info naming the entry point."""
    (site / f"{module}.py").write_text(code)
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[graphbook.nodes]\n{module} = {module}\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    install(site, "graphbook-weather", "weather_nodes", PACK)
    install(site, "graphbook-broken", "broken_nodes", "raise RuntimeError('no sensor')\n")
    return site


def graphbook(site: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "graphbook", *argv],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_installed_pack_is_listed_under_its_name(site: Path, tmp_path: Path) -> None:
    done = graphbook(site, "nodes", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listing = done.stdout
    assert "graphbook-weather (installed node pack)" in listing
    pack = listing.split("graphbook-weather (installed node pack)")[1]
    assert "Readings (source) -> out" in pack.split("(built-in)")[0]
    assert listing.index("core (built-in)") < listing.index("graphbook-weather")
    assert "broken_nodes" in done.stderr and "RuntimeError: no sensor" in done.stderr


def test_a_workflow_runs_a_packs_node(site: Path, tmp_path: Path) -> None:
    workflow = {
        "format": "graphbook.workflow",
        "version": 1,
        "nodes": [
            {"id": "r", "type": "Readings", "params": {"days": 2}},
            {"id": "d", "type": "DumpJSONL", "params": {"jsonl_path": "out.jsonl"}},
        ],
        "edges": [{"source": "r", "output": "out", "target": "d", "input": "in"}],
    }
    (tmp_path / "wf.json").write_text(json.dumps(workflow))
    done = graphbook(site, "run", "wf.json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert rows == [{"day": 0, "celsius": 20}, {"day": 1, "celsius": 21}]
