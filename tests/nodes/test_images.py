"""The images pack end to end: stats, thumbnails, image folders as sinks, hashes; unreadable
images failing or skipped; sinks that never replace a file or touch their sources."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageFilter

from graphbook import Workflow, param, run_workflow, source, step
from graphbook.engine.executor import RunResult
from graphbook.events import Event, NodeLog
from graphbook.nodes import library_registry

REGISTRY = library_registry()
"""Built once: building one reads every node's source, a good part of a small run."""


@step("Test/Rows")
@source()
@param("rows", "list", default=[])
def rows(ctx: Any) -> Any:
    yield from ctx.rows


def image(path: Path, **fields: Any) -> dict[str, Any]:
    return {"type": "image", "value": str(path), **fields}


def run(
    kind: str,
    dicts: list[dict[str, Any]],
    workers: int = 0,
    logs: list[str] | None = None,
    **params: Any,
) -> RunResult:
    def sink(event: Event) -> None:
        if logs is not None and isinstance(event, NodeLog):
            logs.append(str(event.message))

    workflow = Workflow()
    workflow.connect(workflow.add(rows, rows=dicts), workflow.add(kind, id="node", **params))
    return run_workflow(
        workflow,
        workers=workers,
        collect=True,
        continue_on_error=True,
        sink=sink,
        registry=REGISTRY,
    )


def checkerboard(path: Path, size: tuple[int, int] = (64, 48), square: int = 4) -> Path:
    picture = Image.new("L", size)
    picture.putdata(
        [255 * ((x // square + y // square) % 2) for y in range(size[1]) for x in range(size[0])]
    )
    picture.convert("RGB").save(path, quality=95)
    return path


def flat(path: Path, grey: int, size: tuple[int, int] = (64, 48)) -> Path:
    Image.new("RGB", size, (grey, grey, grey)).save(path)
    return path


def truncated(path: Path, like: Path) -> Path:
    data = like.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def errors(result: RunResult) -> list[str]:
    return [e.error.message for e in result.errors]


# -- ImageStats -------------------------------------------------------------------------------


def test_stats_tell_sharp_from_blurred_and_dark_from_bright(tmp_path: Path, workers: int) -> None:
    sharp = checkerboard(tmp_path / "sharp.jpg")
    with Image.open(sharp) as opened:
        opened.filter(ImageFilter.GaussianBlur(3)).save(tmp_path / "blurred.jpg", quality=95)
    dark, bright = flat(tmp_path / "dark.png", 30), flat(tmp_path / "bright.png", 220)
    dicts = [{"image": image(p)} for p in (sharp, tmp_path / "blurred.jpg", dark, bright)]
    result = run("ImageStats", dicts, workers)
    assert result.ok, errors(result)
    out = {Path(d["image"]["value"]).stem: d for d in result.output("node")}
    assert out["sharp"]["blur"] > 10 * out["blurred"]["blur"] > 0
    assert out["dark"]["blur"] == 0
    assert out["dark"]["brightness"] < 0.2 < 0.8 < out["bright"]["brightness"]
    assert out["dark"]["contrast"] == 0 < out["sharp"]["contrast"]
    assert (out["sharp"]["width"], out["sharp"]["height"], out["sharp"]["aspect"]) == (
        64,
        48,
        1.3333,
    )
    assert out["sharp"]["file_size"] == sharp.stat().st_size


def test_stats_of_a_list_of_images_go_on_each_record(tmp_path: Path) -> None:
    wide = flat(tmp_path / "wide.png", 100, (80, 20))
    turned = tmp_path / "turned.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored 80x20, shown turned a quarter: 20x80
    Image.new("RGB", (80, 20)).save(turned, exif=exif)
    result = run("ImageStats", [{"images": [image(wide), image(turned)]}], item_key="images")
    assert result.ok, errors(result)
    records = result.output("node")[0]["images"]
    assert [(r["width"], r["height"], r["aspect"]) for r in records] == [
        (80, 20, 4.0),
        (20, 80, 0.25),
    ]
    assert "aspect" not in result.output("node")[0]
    paths = run("ImageStats", [{"images": [str(wide)]}], item_key="images")
    assert "'images' holds a list of paths; results go on records" in errors(paths)[0]


def test_a_truncated_image_fails_naming_the_file_and_the_others_go_on(tmp_path: Path) -> None:
    good = checkerboard(tmp_path / "good.jpg", (640, 480))
    broken = truncated(tmp_path / "broken.jpg", good)
    result = run("ImageStats", [{"image": image(p)} for p in (good, broken, tmp_path / "gone.jpg")])
    assert [d["image"]["value"] for d in result.output("node")] == [str(good)]
    broken_error, gone_error = errors(result)
    assert str(broken) in broken_error and "on_error to skip" in broken_error
    assert str(tmp_path / "gone.jpg") in gone_error and "does not exist" in gone_error


def test_on_error_skip_drops_unreadable_images_and_counts_them(tmp_path: Path) -> None:
    good = checkerboard(tmp_path / "good.jpg")
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg")
    dicts: list[dict[str, Any]] = [
        {"image": image(broken)},
        {"image": image(good)},
        {"images": [image(broken), image(good)]},
    ]
    logs: list[str] = []
    result = run("ImageStats", dicts[:2], workers=2, logs=logs, on_error="skip")
    assert result.ok, errors(result)
    assert [d["image"]["value"] for d in result.output("node")] == [str(good)]
    assert any(str(broken) in line for line in logs)
    assert any("skipped 1 unreadable image" in line for line in logs)
    listed = run("ImageStats", dicts[2:], item_key="images", on_error="skip")
    assert [r["value"] for r in listed.output("node")[0]["images"]] == [str(good)]


def test_a_bad_on_error_is_refused(tmp_path: Path) -> None:
    good = checkerboard(tmp_path / "good.jpg")
    result = run("ImageStats", [{"image": image(good)}], on_error="ignore")
    assert result.status == "failed"
    assert errors(result) == ["on_error is 'ignore'; set it to one of: fail, skip"]


# -- Thumbnails -------------------------------------------------------------------------------


def test_thumbnails_are_small_named_by_source_and_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHBOOK_HOME", str(tmp_path / "home"))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    photo = checkerboard(tmp_path / "a" / "IMG_1.jpg", (1024, 768), 32)
    twin = flat(tmp_path / "b" / "IMG_1.jpg", 80, (300, 600))
    before = photo.read_bytes(), photo.stat().st_mtime_ns
    result = run("Thumbnails", [{"image": image(photo)}, {"image": str(twin)}], workers=2)
    assert result.ok, errors(result)
    first, second = (Path(d["thumbnail"]["value"]) for d in result.output("node"))
    assert first.parent == (tmp_path / "home" / "thumbnails").absolute()
    assert first != second and first.name.startswith("IMG_1-")
    with Image.open(first) as small, Image.open(second) as other:
        assert small.size == (128, 96) and other.size == (64, 128)
    assert (photo.read_bytes(), photo.stat().st_mtime_ns) == before
    made = first.stat().st_mtime_ns
    again = run("Thumbnails", [{"image": image(photo)}])
    assert again.output("node")[0]["thumbnail"]["value"] == str(first)
    assert first.stat().st_mtime_ns == made, "a thumbnail made before is reused"
    flat(photo, 200, (100, 100))
    changed = run("Thumbnails", [{"image": image(photo)}])
    assert Path(changed.output("node")[0]["thumbnail"]["value"]) != first
    assert first.stat().st_mtime_ns == made, "the old one is left as it was"


def test_thumbnails_in_a_folder_as_webp(tmp_path: Path) -> None:
    photo = flat(tmp_path / "p.png", 10, (50, 40))
    result = run(
        "Thumbnails", [{"image": image(photo)}], folder=str(tmp_path / "t"), format="webp", size=16
    )
    thumb = Path(result.output("node")[0]["thumbnail"]["value"])
    assert thumb.parent == tmp_path / "t" and thumb.suffix == ".webp"
    with Image.open(thumb) as small:
        assert small.size == (16, 13)


# -- WriteImageFolder --------------------------------------------------------------------------


@pytest.fixture
def labelled(tmp_path: Path) -> list[dict[str, Any]]:
    (tmp_path / "in").mkdir()
    return [
        {"image": image(checkerboard(tmp_path / "in" / "a.jpg", (200, 100))), "label": "cat"},
        {"image": image(flat(tmp_path / "in" / "b.png", 50)), "label": "dog"},
        {"image": image(flat(tmp_path / "in" / "c.png", 90)), "label": "cat"},
    ]


def sources_of(dicts: list[dict[str, Any]]) -> list[tuple[bytes, int]]:
    paths = [Path(d["image"]["value"]) for d in dicts]
    return [(p.read_bytes(), p.stat().st_mtime_ns) for p in paths]


def test_write_copies_into_sub_folders_by_label(
    tmp_path: Path, labelled: list[dict[str, Any]], workers: int
) -> None:
    before = sources_of(labelled)
    out = tmp_path / "out"
    result = run("WriteImageFolder", labelled, workers, folder=str(out), by="label")
    assert result.ok, errors(result)
    written = [d["written"] for d in result.output("node")]
    assert written == [
        str(out / "cat" / "a.jpg"),
        str(out / "dog" / "b.png"),
        str(out / "cat" / "c.png"),
    ]
    assert sorted(p.name for p in out.rglob("[!.]*")) == ["a.jpg", "b.png", "c.png", "cat", "dog"]
    assert (out / "cat" / "a.jpg").read_bytes() == (tmp_path / "in" / "a.jpg").read_bytes()
    assert sources_of(labelled) == before
    assert "__graphbook_image_writes__" not in result.output("node")[0]


def test_write_links_and_resizes(tmp_path: Path, labelled: list[dict[str, Any]]) -> None:
    before = sources_of(labelled)
    linked = run("WriteImageFolder", labelled[:1], folder=str(tmp_path / "l"), mode="link")
    assert os.path.samefile(linked.output("node")[0]["written"], labelled[0]["image"]["value"])
    resized = run(
        "WriteImageFolder",
        labelled,
        folder=str(tmp_path / "r"),
        mode="resize",
        size=50,
        format="png",
    )
    assert resized.ok, errors(resized)
    with Image.open(tmp_path / "r" / "a.png") as small:
        assert (small.format, small.size) == ("PNG", (50, 25))
    with Image.open(tmp_path / "r" / "b.png") as small:
        assert small.size == (50, 38)
    assert sources_of(labelled) == before


def test_a_link_to_another_device_is_a_copy(tmp_path: Path, labelled: list[dict[str, Any]]) -> None:
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second file system to link across")
    logs: list[str] = []
    with tempfile.TemporaryDirectory(dir="/dev/shm") as other:
        result = run("WriteImageFolder", labelled[:1], logs=logs, folder=other, mode="link")
        assert result.ok, errors(result)
        written = Path(result.output("node")[0]["written"])
        assert written.read_bytes() == Path(labelled[0]["image"]["value"]).read_bytes()
    assert any("could not be hard-linked" in line and "copied instead" in line for line in logs)


def test_write_refuses_a_folder_of_other_files_and_merges_only_when_told(
    tmp_path: Path, labelled: list[dict[str, Any]]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "b.png").write_bytes(b"mine")
    result = run("WriteImageFolder", labelled, folder=str(out))
    [message] = errors(result)
    assert str(out) in message and "overwrite" in message
    assert (out / "b.png").read_bytes() == b"mine"
    assert sorted(p.name for p in out.iterdir()) == ["b.png"], "refused before anything ran"
    logs: list[str] = []
    merged = run("WriteImageFolder", labelled[:2], logs=logs, folder=str(out), overwrite=True)
    assert merged.ok and (out / "b.png").read_bytes() == (tmp_path / "in" / "b.png").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == ["a.jpg", "b.png"]
    assert any(f"merged into {out}" in line for line in logs), logs


def test_write_never_renames_and_never_replaces_its_source(
    tmp_path: Path, labelled: list[dict[str, Any]]
) -> None:
    (tmp_path / "other").mkdir()
    twin = flat(tmp_path / "other" / "a.jpg", 10)
    result = run(
        "WriteImageFolder", [labelled[0], {"image": str(twin)}], folder=str(tmp_path / "o")
    )
    [message] = errors(result)
    assert "would both be written to" in message and str(twin) in message
    before = sources_of(labelled)
    own = run("WriteImageFolder", labelled, folder=str(tmp_path / "in"), overwrite=True)
    assert len(errors(own)) == 3 and "is the source image itself" in errors(own)[0]
    assert sources_of(labelled) == before


def test_write_makes_values_safe_folder_names(
    tmp_path: Path, labelled: list[dict[str, Any]]
) -> None:
    dicts = [{**labelled[0], "label": "../a/b"}, {**labelled[1], "label": None}]
    result = run("WriteImageFolder", dicts, folder=str(tmp_path / "out"), by="label")
    assert result.ok, errors(result)
    assert sorted(p.name for p in (tmp_path / "out").glob("[!.]*")) == ["None", "_a_b"]
    missing = run("WriteImageFolder", labelled[:1], folder=str(tmp_path / "x"), by="prediction")
    assert "by is 'prediction', but the dict has no such field" in errors(missing)[0]


def test_write_of_a_list_puts_written_on_each_record(tmp_path: Path) -> None:
    a, b = flat(tmp_path / "a.png", 1), flat(tmp_path / "b.png", 2)
    broken = tmp_path / "bad.png"
    broken.write_bytes(b"")
    dicts = [{"images": [image(a, label="x"), image(b, label="y"), image(broken, label="x")]}]
    result = run(
        "WriteImageFolder",
        dicts,
        2,
        folder=str(tmp_path / "o"),
        by="label",
        item_key="images",
        mode="resize",
        on_error="skip",
    )
    assert result.ok, errors(result)
    records = result.output("node")[0]["images"]
    assert [r["written"] for r in records] == [
        str(tmp_path / "o" / "x" / "a.png"),
        str(tmp_path / "o" / "y" / "b.png"),
    ]


# -- ImageHash --------------------------------------------------------------------------------


def test_image_hash_is_near_for_a_resized_copy(tmp_path: Path) -> None:
    original = checkerboard(tmp_path / "a.jpg", (320, 240), 40)
    with Image.open(original) as opened:
        opened.resize((160, 120)).save(tmp_path / "small.jpg", quality=70)
    other = tmp_path / "other.png"
    Image.linear_gradient("L").resize((320, 240)).save(other)
    result = run(
        "ImageHash", [{"image": str(p)} for p in (original, tmp_path / "small.jpg", other)]
    )
    a, small, b = (int(d["phash"], 16) for d in result.output("node"))
    assert bin(a ^ small).count("1") <= 4 < bin(a ^ b).count("1")


def test_image_hash_is_the_hash_deduplicate_images_writes(tmp_path: Path) -> None:
    picture = tmp_path / "p.jpg"
    Image.effect_mandelbrot((320, 240), (-2, -1.2, 1, 1.2), 60).convert("RGB").save(picture)
    data = [{"image": {"type": "image", "value": str(picture)}}]
    hashed = run("ImageHash", data).output("node")
    deduped = run("DeduplicateImages", data).output("node", "unique")
    assert hashed[0]["phash"] == deduped[0]["phash"]
