"""Every template runs as made: `graphbook new FILE --template NAME` writes it with the sample
data it reads, and the file runs to completion with the counts its sample data implies."""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path

import pytest

from graphbook import run_workflow
from graphbook.cli import main
from graphbook.nodes import library_registry
from graphbook.templates import TEMPLATES, Template, create
from graphbook.workflow import Workflow

EXPECTED: dict[str, dict[str, dict[str, int]]] = {
    "classify-folder": {"classify": {"out": 60}, "csv": {"out": 60}},
    "sort-by-prediction": {"confident": {"keep": 52, "drop": 8}},
    "embed-parquet": {"parquet": {"out": 60}},
    "hf-classify": {"jsonl": {"out": 60}},
    "near-duplicates": {"dedupe": {"unique": 40, "duplicate": 6}},
    "quality-filter": {"good": {"keep": 36, "drop": 10}},
    "split-train-val": {"split": {"train": 48, "val": 12, "test": 0}},
    "convert-table": {"write": {"out": 200}},
    "clean-table": {
        "has_value": {"keep": 195, "drop": 5},
        "dedupe": {"unique": 185, "duplicate": 10},
    },
    "split-records": {"split": {"keep": 9, "drop": 11}},
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("project")


def test_new_lists_the_templates_one_a_line_name_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [t.name for t in TEMPLATES]
    assert len(TEMPLATES) >= 8


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_a_template_runs_as_made(
    template: Template, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    file = project / f"{template.name}.json"
    assert main(["new", str(file), "--template", template.name]) == 0
    workflow = Workflow.load(file)
    assert {node.type for node in workflow.nodes.values()} <= library_nodes()
    result = run_workflow(workflow, workers=2)
    assert result.ok, result.errors
    for node_id, counts in EXPECTED.get(template.name, {}).items():
        assert result.counts[node_id] == counts
    for node in workflow.nodes.values():
        for name in ("path", "folder"):
            if node.type.startswith("Write") and name in node.params:
                assert (project / node.params[name]).exists(), f"{node.id} wrote nothing"
    if template.name == "classify-folder":
        check_predictions(project)


def check_predictions(project: Path) -> None:
    """classify-folder's CSV: the shapes told apart."""
    with (project / "out" / "predictions.csv").open() as rows:
        table = list(csv.DictReader(rows))
    assert len(table) == 60
    assert sum(row["prediction"] == row["label"] for row in table) >= 57
    assert all(0 < float(row["confidence"]) <= 1 for row in table)


def library_nodes() -> set[str]:

    return {spec.name for spec in library_registry() if spec.pack_kind == "builtin"}


def test_graphbook_run_runs_a_new_template(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    assert main(["new", "cli.json", "--template", "split-records"]) == 0
    assert main(["run", "cli.json", "--quiet"]) == 0
    assert len((project / "out" / "high_scores.jsonl").read_text().splitlines()) == 9


def test_a_template_is_not_written_over_a_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    (project / "mine.json").write_text("{}")
    assert main(["new", "mine.json", "--template", TEMPLATES[0].name]) == 2
    assert (project / "mine.json").read_text() == "{}"
    assert main(["new", "nope.json", "--template", "no-such-template"]) == 2
    assert not (project / "nope.json").exists()


def test_a_template_filling_a_file_is_never_seen_half_written(project: Path) -> None:
    """Filling an open, empty file: a reader meanwhile (the editor, the watcher) reads the
    old file or the whole template, never an empty or cut one."""
    target = project / "filled.json"
    target.write_text(json.dumps({"version": 1, "nodes": [], "edges": []}))
    torn: list[str] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            text = target.read_text()
            try:
                json.loads(text)
            except ValueError:
                torn.append(text)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(200):
            create("convert-table", target, project, overwrite=True)
    finally:
        done.set()
        reader.join()
    assert torn == []
    assert json.loads(target.read_text())["nodes"]
