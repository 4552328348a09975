"""ShapeImages never removes a file it did not make (it once wiped a folder of photos)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphbook import Workflow, run_workflow
from graphbook.examples.nodes import MARKER


def run_shapes(folder: Path, count: int) -> list[str]:
    workflow = Workflow()
    workflow.add("ShapeImages", id="images", folder=str(folder), count=count, per_dict=1)
    result = run_workflow(workflow, collect=True, continue_on_error=True)
    assert result.status == "completed", result.errors
    if result.errors:
        raise AssertionError(result.errors[0].error.message)
    return [d["image_paths"][0]["value"] for d in result.output("images")]


def test_a_folder_of_the_users_files_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    for n in range(5):
        (photos / f"IMG_{n}.jpg").write_bytes(b"my photo")
    with pytest.raises(AssertionError, match="holds 5 files it did not make"):
        run_shapes(photos, 3)
    assert sorted(p.name for p in photos.iterdir()) == [f"IMG_{n}.jpg" for n in range(5)]


def test_it_remakes_only_its_own_files(tmp_path: Path) -> None:
    folder = tmp_path / "shapes"
    first = run_shapes(folder, 6)
    assert len(first) == 6 and (folder / MARKER).is_file()
    stamp = Path(first[0]).stat().st_mtime_ns
    assert run_shapes(folder, 6) == first, "made once, then reused"
    assert Path(first[0]).stat().st_mtime_ns == stamp
    (folder / "mine.txt").write_text("keep me")
    assert len(run_shapes(folder, 3)) == 3
    assert (folder / "mine.txt").read_text() == "keep me"
    assert len(list(folder.glob("*.jpg"))) == 3
