"""A workflow file saved by Graphbook 0.13, with its node file, runs as it is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from graphbook import run_workflow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_a_graphbook_013_workflow_runs_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: dict[str, Any]
) -> None:
    shutil.copy(FIXTURES / "graphbook013_nodes.py", tmp_path / "graphbook013_nodes.py")
    monkeypatch.chdir(tmp_path)
    workflow = FIXTURES / "graphbook013_simple_workflow.json"
    assert json.loads(workflow.read_text())["version"] == "0"
    result = run_workflow(workflow, nodes=[tmp_path], **backend)
    assert result.ok, result.errors
    assert sum(result.counts["0"].values()) == 10, "the step received every dict of the source"
    assert result.counts["0"] == {"A": 5, "B": 5}
    written = (tmp_path / "picked.jsonl").read_text().splitlines()
    assert len(written) == 5
