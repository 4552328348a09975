"""The file sources end to end: ImageFolder (globs, extensions, labels, limits, shuffles,
several images a dict, its errors) and Files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from graphbook import Workflow, run_workflow
from graphbook.engine.executor import RunResult
from graphbook.nodes import library_registry

Data = dict[str, Any]
REGISTRY = library_registry()
"""One registry for the file's runs: building one reads every node's source (most of a run's
time here)."""


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    """cat/ (3 JPEGs, one in a sub-folder), dog/ (2 PNGs, one corrupt .jpg), 1 loose image,
    a text file, a hidden file."""
    root = tmp_path / "photos"
    for relative in ["cat/a.jpg", "cat/b.JPG", "cat/2021/c.jpeg", "dog/d.png", "dog/e.png"]:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (64, 48), (200, 100, 50)).save(path, format="PNG")
    (root / "dog" / "broken.jpg").write_bytes(b"not a jpeg at all")
    Image.new("RGB", (64, 48)).save(root / "loose.webp")
    (root / "notes.txt").write_text("not an image")
    (root / "cat" / "._a.jpg").write_bytes(b"macOS resource fork")
    return root


def run(kind: str, workers: int = 0, **params: Any) -> RunResult:
    workflow = Workflow()
    workflow.add(kind, id="src", **params)
    return run_workflow(workflow, collect=True, workers=workers, registry=REGISTRY)


def dicts(kind: str, **params: Any) -> list[Data]:
    result = run(kind, **params)
    assert result.ok, result.errors
    return result.output("src")


def error_of(kind: str, **params: Any) -> str:
    result = run(kind, **params)
    assert result.status == "failed" and result.errors
    return result.errors[0].error.message


def test_every_image_below_the_folder_sorted_without_decoding(photos: Path) -> None:
    rows = dicts("ImageFolder", folder=str(photos))
    paths = [row["image"]["value"] for row in rows]
    assert paths == sorted(paths) and all(Path(p).is_absolute() for p in paths)
    relative = [str(Path(p).relative_to(photos)) for p in paths]
    assert relative == [
        "cat/2021/c.jpeg",
        "cat/a.jpg",
        "cat/b.JPG",  # the extension matched in any case
        "dog/broken.jpg",  # listed, not opened: a corrupt file fails where it is decoded
        "dog/d.png",
        "dog/e.png",
        "loose.webp",
    ]
    assert rows[0] == {"image": {"type": "image", "value": paths[0]}}


def test_pattern_and_extensions_narrow_the_listing(photos: Path) -> None:
    top = dicts("ImageFolder", folder=str(photos), pattern="*")
    assert [Path(r["image"]["value"]).name for r in top] == ["loose.webp"]
    cats = dicts("ImageFolder", folder=str(photos), pattern="cat/*")
    assert [Path(r["image"]["value"]).name for r in cats] == ["a.jpg", "b.JPG"]
    pngs = dicts("ImageFolder", folder=str(photos), extensions="PNG")
    assert [Path(r["image"]["value"]).name for r in pngs] == ["d.png", "e.png"]


def test_labels_from_class_folders_as_torchvision_does(photos: Path) -> None:
    result = run("ImageFolder", folder=str(photos), labels_from_folders=True)
    rows = result.output("src")
    labelled = {Path(r["image"]["value"]).name: (r["label"], r["label_index"]) for r in rows}
    assert labelled == {
        "c.jpeg": ("cat", 0),  # cat/2021/c.jpeg is still a cat
        "a.jpg": ("cat", 0),
        "b.JPG": ("cat", 0),
        "broken.jpg": ("dog", 1),
        "d.png": ("dog", 1),
        "e.png": ("dog", 1),
    }, "the loose image has no class and is left out"
    assert result.ok


def test_limit_and_a_repeatable_shuffle(photos: Path) -> None:
    def paths(**params: Any) -> list[str]:
        return [r["image"]["value"] for r in dicts("ImageFolder", folder=str(photos), **params)]

    every = paths()
    assert paths(limit=3) == every[:3]
    shuffled = [paths(shuffle=True, seed=seed) for seed in (1, 1, 2)]
    assert shuffled[0] == shuffled[1], "the same seed gives the same order"
    assert shuffled[0] != shuffled[2] and sorted(shuffled[2]) == every
    assert paths(shuffle=True, seed=1, limit=2) == shuffled[0][:2], "a sample of the shuffle"


def test_several_images_a_dict_each_with_its_label(photos: Path) -> None:
    rows = dicts(
        "ImageFolder", folder=str(photos), per_dict=4, labels_from_folders=True, key="photos"
    )
    assert [len(r["photos"]) for r in rows] == [4, 2]
    first = rows[0]["photos"][0]
    assert first["type"] == "image" and first["label"] == "cat" and first["label_index"] == 0
    assert rows[1]["photos"][-1]["label"] == "dog"
    assert set(rows[0]) == {"photos"}


def test_bad_folders_and_no_match_are_errors_that_say_what_to_fix(
    photos: Path, tmp_path: Path
) -> None:
    missing = error_of("ImageFolder", folder=str(tmp_path / "nope"))
    assert str(tmp_path / "nope") in missing and "check the path" in missing
    assert "not a folder" in error_of("ImageFolder", folder=str(photos / "notes.txt"))
    none = error_of("ImageFolder", folder=str(photos), pattern="*.png")
    assert none.startswith(f"0 images found in {photos} matching '*.png' with extensions")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "0 images found" in error_of("ImageFolder", folder=str(empty))
    assert "absolute" in error_of("ImageFolder", folder=str(photos), pattern="/etc/*")


def test_the_count_found_is_logged(photos: Path) -> None:
    from graphbook.events import Event, NodeLog

    logs: list[str] = []

    def sink(event: Event) -> None:
        if isinstance(event, NodeLog):
            logs.append(str(event.message))

    workflow = Workflow()
    workflow.add("ImageFolder", id="src", folder=str(photos), labels_from_folders=True)
    assert run_workflow(workflow, sink=sink, registry=REGISTRY).ok
    assert any("found 6 images" in line and "2 classes" in line for line in logs), logs


def test_files_by_glob_with_their_sizes(photos: Path) -> None:
    rows = dicts("Files", folder=str(photos), pattern="**/*.png")
    assert [r["name"] for r in rows] == ["d.png", "e.png"]
    assert rows[0]["path"] == str(photos / "dog" / "d.png")
    assert rows[0]["size"] == (photos / "dog" / "d.png").stat().st_size
    top = dicts("Files", folder=str(photos))
    assert [r["name"] for r in top] == ["loose.webp", "notes.txt"], "folders are not files"
    assert len(dicts("Files", folder=str(photos), pattern="**/*", limit=2)) == 2
    message = error_of("Files", folder=str(photos), pattern="*.csv")
    assert message.startswith(f"0 files found in {photos} matching '*.csv'")


def test_a_folder_source_feeds_a_sink_with_two_workers(photos: Path, tmp_path: Path) -> None:
    workflow = Workflow()
    images = workflow.add("ImageFolder", folder=str(photos), labels_from_folders=True)
    table = tmp_path / "images.csv"
    workflow.connect(images, workflow.add("WriteCSV", path=str(table)))
    result = run_workflow(workflow, workers=2, registry=REGISTRY)
    assert result.ok, result.errors
    lines = table.read_text().splitlines()
    assert lines[0] == "image,label,label_index" and len(lines) == 7
    assert lines[1] == f"{photos / 'cat' / '2021' / 'c.jpeg'},cat,0"
