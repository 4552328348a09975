"""Sinks on the second run and after: a target ends a completed run holding exactly that run's
output; a sink replaces what a sink wrote before (run, change, run again) and refuses any other
file, naming `overwrite`; every file it writes gets the mode the umask gives."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from graphbook import Workflow, param, run_workflow, source, step
from graphbook.engine.executor import RunResult
from graphbook.nodes import library_registry

REGISTRY = library_registry()
TABLES = [("WriteCSV", "t.csv"), ("WriteJSONL", "t.jsonl"), ("WriteParquet", "t.parquet")]


@step("Test/SinkRows")
@source()
@param("rows", "list", default=[])
def rows(ctx: Any) -> Any:
    yield from ctx.rows


def run(kind: str, dicts: list[dict[str, Any]], workers: int = 0, **params: Any) -> RunResult:
    workflow = Workflow()
    workflow.connect(workflow.add(rows, rows=dicts), workflow.add(kind, id="sink", **params))
    return run_workflow(workflow, collect=True, workers=workers, registry=REGISTRY)


def errors(result: RunResult) -> list[str]:
    return [e.error.message for e in result.errors]


@pytest.fixture
def photos(tmp_path: Path) -> list[dict[str, Any]]:
    folder = tmp_path / "photos"
    folder.mkdir()
    found = []
    for i, label in enumerate(["cat", "dog", "cat", "dog"]):
        path = folder / f"p{i}.png"
        Image.new("RGB", (8, 8), (i * 40, 0, 0)).save(path)
        found.append({"image": {"type": "image", "value": str(path)}, "label": label})
    return found


def visible(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


@pytest.mark.parametrize("overwrite", [False, True], ids=["palette", "template"])
def test_an_image_folder_ends_each_run_holding_that_runs_images_only(
    tmp_path: Path, photos: list[dict[str, Any]], overwrite: bool
) -> None:
    out = tmp_path / "sorted"
    first = run("WriteImageFolder", photos, folder=str(out), by="label", overwrite=overwrite)
    assert first.ok, errors(first)
    assert visible(out) == ["cat/p0.png", "cat/p2.png", "dog/p1.png", "dog/p3.png"]
    tighter = run("WriteImageFolder", photos[1:2], folder=str(out), by="label", overwrite=overwrite)
    assert tighter.ok, errors(tighter)
    assert visible(out) == ["dog/p1.png"], "no stale image of the run before"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_failed_image_folder_run_leaves_the_folder_as_it_was(
    tmp_path: Path, photos: list[dict[str, Any]]
) -> None:
    out = tmp_path / "sorted"
    assert run("WriteImageFolder", photos, folder=str(out)).ok
    broken = [photos[0], {"image": str(tmp_path / "missing.png")}]
    assert run("WriteImageFolder", broken, folder=str(out)).status == "failed"
    assert visible(out) == ["p0.png", "p1.png", "p2.png", "p3.png"]


def test_an_image_folder_never_replaces_the_folder_its_images_come_from(
    tmp_path: Path, photos: list[dict[str, Any]]
) -> None:
    out = tmp_path / "sorted"
    assert run("WriteImageFolder", photos, folder=str(out)).ok
    again = [{"image": str(out / "p0.png")}]
    [message] = errors(run("WriteImageFolder", again, folder=str(out)))
    assert "inside" in message and "never changes its input" in message
    assert visible(out) == ["p0.png", "p1.png", "p2.png", "p3.png"]


@pytest.mark.parametrize(("kind", "name"), TABLES)
def test_a_table_sink_runs_again_over_its_own_file_and_refuses_any_other(
    tmp_path: Path, kind: str, name: str
) -> None:
    target = tmp_path / name
    assert run(kind, [{"x": 1}], path=str(target)).ok
    first = target.read_bytes()
    again = run(kind, [{"x": 2}, {"x": 3}], path=str(target))  # overwrite off, as dropped
    assert again.ok, errors(again)
    assert target.read_bytes() != first
    os.utime(target, ns=(1, 1))  # a person changed it since
    [changed] = errors(run(kind, [{"x": 4}], path=str(target)))
    assert "overwrite" in changed and str(target) in changed
    theirs = tmp_path / f"theirs{target.suffix}"
    theirs.write_text("someone else's")
    [refused] = errors(run(kind, [{"x": 5}], path=str(theirs)))
    assert "overwrite" in refused and theirs.read_text() == "someone else's"
    assert run(kind, [{"x": 6}], path=str(theirs), overwrite=True).ok


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_written_files_get_the_mode_the_umask_gives(
    tmp_path: Path, photos: list[dict[str, Any]]
) -> None:
    for kind, name in [*TABLES, ("DumpJSONL", "d.jsonl")]:
        where: dict[str, Any] = {
            "jsonl_path" if kind == "DumpJSONL" else "path": str(tmp_path / name)
        }
        assert run(kind, [{"x": 1}], 0, **where).ok
        assert mode(tmp_path / name) == 0o644, (kind, oct(mode(tmp_path / name)))
    out = tmp_path / "sorted"
    assert run("WriteImageFolder", photos, 2, folder=str(out), by="label").ok
    assert {mode(p) for p in out.rglob("*") if p.is_file()} == {0o644}
    assert {mode(p) for p in [out, *out.rglob("*")] if p.is_dir()} == {0o755}
