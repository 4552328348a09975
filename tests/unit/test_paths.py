"""Parameters declared as paths, made absolute against the driver's folder for a Ray cluster."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from graphbook import Registry, param, step
from graphbook.nodes import library_registry
from graphbook.params import ParamSpec, make_param
from graphbook.paths import absolute, absolute_paths


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("data/shapes", "/drv/data/shapes"),
        ("./out/../out/a.jsonl", "/drv/out/a.jsonl"),
        ("/mnt/shared/x", "/mnt/shared/x"),
        ("s3://bucket/images", "s3://bucket/images"),
        ("file:///tmp/x", "file:///tmp/x"),
        ("", ""),
    ],
)
def test_a_relative_path_means_the_driver_s_folder_and_the_rest_stay(
    value: str, expected: str
) -> None:
    assert absolute(value, "/drv") == expected


def test_home_is_the_driver_s_home() -> None:
    assert absolute("~/models/a.pt", "/drv") == os.path.expanduser("~/models/a.pt")


def test_only_the_parameters_declared_as_paths_change() -> None:
    specs = {
        "folder": ParamSpec("folder", path=True),
        "files": ParamSpec("files", "list[string]", path=True),
        "label": ParamSpec("label"),
    }
    values = {"folder": "data", "files": ["a.jpg", "/b.jpg", 3], "label": "cat", "other": "x"}
    assert absolute_paths(specs, values, "/drv") == {
        "folder": "/drv/data",
        "files": ["/drv/a.jpg", "/b.jpg", 3],
        "label": "cat",
        "other": "x",
    }
    assert values["folder"] == "data", "the values given are not changed"


def test_a_node_declares_a_path_with_the_decorator_or_its_parameters() -> None:
    @step("Paths/Reader")
    @param("where", "string", default="data", path=True)
    @param("name", "string", default="data")
    def reader(ctx: Any, data: dict[str, Any]) -> None:
        del ctx, data

    spec = Registry().add(reader)
    assert [(p.name, p.path) for p in spec.params] == [("where", True), ("name", False)]
    assert make_param("folder", {"type": "string", "path": True}).path
    assert not make_param("folder", {"type": "string"}).path


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("DumpJSONL", "jsonl_path"),
        ("LoadJSONL", "jsonl_path"),
        ("ImageFolder", "folder"),
        ("WriteJSONL", "path"),
        ("ShapeImages", "folder"),
    ],
)
def test_the_shipped_nodes_declare_their_files_and_folders_as_paths(kind: str, name: str) -> None:
    spec = library_registry().get(kind)
    found = spec.param(name)
    assert found is not None and found.path, f"{kind}.{name} is not declared as a path"


def test_ray_dumps_needs_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphbook.cli import main
    from graphbook.workflow import Workflow

    workflow = tmp_path / "wf.json"
    Workflow().save(workflow)
    assert main(["run", str(workflow), "--ray-dumps", "anywhere"]) == 2
    assert "--ray-dumps applies to Ray actors: add --ray" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_serve_and_mcp_carry_where_dumps_run_to_their_runs(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphbook.cli.parser import build_parser
    from graphbook.cli.serve import server_settings
    from graphbook.engine.ray.pool import RayBackend

    monkeypatch.chdir(tmp_path)
    parser = build_parser()
    given = server_settings(
        parser.parse_args([command, "--ray", "auto", "--ray-dumps", "anywhere"])
    )
    default = server_settings(parser.parse_args([command, "--ray", "auto"]))
    assert isinstance(given.backend, RayBackend) and given.backend.dumps == "anywhere"
    assert isinstance(default.backend, RayBackend) and default.backend.dumps == "driver"
    with pytest.raises(SystemExit):
        parser.parse_args([command, "--ray", "auto", "--ray-dumps", "elsewhere"])
