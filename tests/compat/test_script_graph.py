"""Graphbook 0.13's Python workflows (`graphbook.Graph`, `@g()`) run as they are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import graphbook as gb
from graphbook import run_workflow
from graphbook.cli import main
from graphbook.compat013.script import load_script
from graphbook.core import DefaultExecutor
from graphbook.core.steps import SourceStep, Step
from graphbook.errors import GraphbookError

ROOT = Path(__file__).resolve().parents[2]


def test_graphbook_run_runs_a_013_python_workflow(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "python/Squares.py"]) == 0
    out = capsys.readouterr().out
    assert "BigOrSmall  big=1  small=4" in out
    assert "total 14" in out, "0 + 1 + 4 + 9 through the resource's power 2"


def test_the_script_runs_itself_with_g_run(project: Path) -> None:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "python/Squares.py"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "run completed" in done.stdout and "total 14" in done.stdout


def test_the_graph_is_a_workflow_with_its_docs_and_wires(project: Path) -> None:
    workflow = load_script(project / "python" / "Squares.py")
    assert workflow.doc.startswith("Squares of")
    assert [n.type for n in workflow.nodes.values()] == [
        "Numbers",
        "Power",
        "Raise",
        "BigOrSmall",
        "Total",
    ]
    assert ("1", "resource", "2", "power") in {
        (e.source, e.output, e.target, e.input) for e in workflow.edges
    }
    result = run_workflow(workflow, until="2")
    assert result.ok and set(result.counts) == {"0", "2"}


class Source(SourceStep):
    Outputs = ["a"]

    def load(self):  # type: ignore[no-untyped-def]
        return {"a": [{"x": 1}]}


class Sink(Step):
    pass


def test_bind_to_an_output_the_node_lacks_names_the_outputs() -> None:
    g = gb.Graph()
    with pytest.raises(ValueError, match=r"Pin 'out' not found in available pins: \['a'\]"):

        @g()
        def _() -> None:
            g.step(Sink).bind(g.step(Source))


def test_run_with_013s_default_executor_and_a_step_id() -> None:
    g = gb.Graph()

    @g()
    def _() -> None:
        source = g.step(Source)
        g.step(Sink).bind(source, "a")
        g.step(Sink).bind(source, "a")

    result = g.run(DefaultExecutor(num_workers=0), step_id="1", start_web_server=False)
    assert result.ok and result.counts == {"0": {"a": 1}, "1": {"out": 1}}
    with pytest.raises(GraphbookError, match="DefaultExecutor"):
        g.run(executor=object())


def test_a_script_without_a_graph_says_how_to_write_one(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("x = 1\n")
    with pytest.raises(GraphbookError, match=r"gb\.Graph\(\)|graphbook\.Graph\(\)"):
        load_script(tmp_path / "empty.py")


def test_a_script_imports_the_custom_nodes_package_beside_it(project: Path, tmp_path: Path) -> None:
    """`graphbook run SCRIPT.py` puts the script's folder on sys.path
    as `python SCRIPT.py` does (run here from another folder), and the script's
    `gb.steps.Split`, `gb.resources.FunctionResource` and `SplitItemField` run."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "graphbook", "run", str(project / "python" / "Pokedex.py")],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    caught = [json.loads(line) for line in (elsewhere / "caught.jsonl").read_text().splitlines()]
    assert [p["name"] for p in caught] == ["Pikachu", "Bulbasaur"]
    assert all(p["caught"] for p in caught), "the AsyncStep's on_data ran"
    assert caught[0]["attacks"] == [{"move": "Thunderbolt", "power": 90}]
    assert caught[0]["others"] == [{"move": "Growl", "power": 0}] and "moves" not in caught[0]
