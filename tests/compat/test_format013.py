"""Nothing in a Graphbook 0.13 workflow is dropped silently: groups, docs and
data.module are kept, `array` parameters are lists, and what is left out (export nodes and
their wires, unknown parameter types, a plugin's __init__) is said, in the CLI and the API."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from graphbook import Registry
from graphbook.cli import main
from graphbook.nodes import library_registry
from graphbook.server.workflows import WorkflowFiles
from graphbook.workflow import Group, Workflow


def test_groups_docs_and_modules_are_kept(project: Path) -> None:
    workflow = Workflow.load(project / "Grouped.json")
    assert workflow.groups == {
        "g1": Group("g1", "Counting", ("1", "2"), (100.0, 100.0), (400.0, 200.0))
    }
    assert workflow.nodes["1"].position == (120.0, 140.0), "absolute, as ours are"
    assert workflow.doc.startswith("# Grouped\n\nPets from an installed package")
    assert workflow.nodes["0"].module == "pets_plugin.nodes"
    assert workflow.nodes["1"].module == "", "transient_module names no module"
    saved = json.loads(workflow.dumps())
    assert saved["groups"][0]["nodes"] == ["1", "2"] and saved["doc"] == workflow.doc
    assert Workflow.loads(workflow.dumps()).nodes["0"].module == "pets_plugin.nodes"


def test_what_is_left_out_is_said(project: Path) -> None:
    notes = [str(note) for note in Workflow.load(project / "Grouped.json").notes]
    assert len(notes) == 2
    assert "export node '4' (Output) and its 1 wire(s) were left out" in notes[1]
    assert "parameter 'device' has type 'tensor'" in notes[0]


def test_the_cli_runs_it_importing_the_module_and_says_what_was_left_out(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(project))  # pets_plugin is an installed package
    assert main(["run", "Grouped.json"]) == 0
    err = capsys.readouterr().err
    assert "note: export node '4' (Output) and its 1 wire(s) were left out" in err
    assert "pets013/__init__.py: not loaded: a Graphbook 0.13 plugin's __init__.py" in err
    pets = [json.loads(line) for line in (project / "pets.jsonl").read_text().splitlines()]
    assert [p["name"] for p in pets] == ["rex", "tom", "fido"]
    assert all(p["sound"] == "woof" for p in pets), "the plugin's node file loaded"


def test_an_uninstalled_module_is_named_in_the_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project / "Grouped.json"
    path.write_text(path.read_text().replace("pets_plugin.nodes", "not_installed.nodes"))
    assert main(["run", "Grouped.json"]) == 2
    err = capsys.readouterr().err
    assert "could not load node file module not_installed.nodes: ModuleNotFoundError" in err
    assert "unknown node type 'Pets'" in err
    assert "comes from Python module 'not_installed.nodes', install it" in err


def test_convert_keeps_groups_and_says_what_was_left_out(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["convert", "Grouped.json", "out.json"]) == 0
    assert "export node '4'" in capsys.readouterr().err
    assert Workflow.load(project / "out.json").groups["g1"].nodes == ("1", "2")


def test_the_api_shows_the_docs_and_what_was_left_out(project: Path) -> None:
    registry = library_registry()
    registry.load_folder(project / "custom_nodes")
    document = WorkflowFiles(project, registry).document("Grouped.json")
    assert document.workflow["doc"].startswith("# Grouped")
    assert document.workflow["groups"][0]["label"] == "Counting"
    messages = [problem.message for problem in document.problems]
    assert any("export node '4' (Output)" in m for m in messages)
    assert any("unknown node type 'Pets'" in m for m in messages)


def test_array_parameters_are_lists(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(project))
    registry = Registry()
    specs = registry.load_module("pets_plugin.nodes")
    assert [p.type for p in specs[0].params] == ["list"]


def test_a_plugin_init_is_reported_by_graphbook_nodes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["nodes"]) == 0
    out, err = capsys.readouterr()
    assert "pets013/__init__.py: not loaded" in err and "Bark" in out


def test_docs_are_not_read_through_a_symlink_leading_outside(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    shutil.move(project / "docs", outside)
    (project / "docs").symlink_to(outside)
    document = WorkflowFiles(project, library_registry()).document("Grouped.json")
    assert document.workflow.get("doc", "") == ""
