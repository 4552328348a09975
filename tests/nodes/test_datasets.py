"""Dataset sources end to end: Hugging Face datasets saved on disk or in the local cache (never
downloaded) and torchvision datasets from a root (FakeData here), with their errors."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import datasets  # type: ignore[import-untyped]
import pytest
from PIL import Image

from graphbook import Workflow, batch, run_workflow, step
from graphbook.engine.executor import RunResult
from graphbook.nodes import library_registry

Data = dict[str, Any]
REGISTRY = library_registry()
"""One registry for the file's runs: building one reads every node's source."""


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No network, and a Hugging Face cache of the test's own."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))


def colours(n: int) -> list[Image.Image]:
    return [Image.new("RGB", (64, 48), (40 * i, 100, 200)) for i in range(n)]


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    """A DatasetDict (train: 5 rows, test: 2) with an image column of PIL images."""
    table = {"image": colours(5), "label": [0, 1, 0, 1, 1], "text": list("abcde")}
    train = datasets.Dataset.from_dict(table).cast_column("image", datasets.Image())
    folder = tmp_path / "saved"
    datasets.DatasetDict({"train": train, "test": train.select([3, 4])}).save_to_disk(folder)
    return folder


def run(kind: str, workers: int = 0, **params: Any) -> RunResult:
    workflow = Workflow()
    workflow.add(kind, id="src", **params)
    return run_workflow(workflow, collect=True, workers=workers, registry=REGISTRY)


def rows(kind: str, **params: Any) -> list[Data]:
    result = run(kind, **params)
    assert result.ok, result.errors
    return result.output("src")


def error_of(kind: str, **params: Any) -> str:
    result = run(kind, **params)
    assert result.status == "failed" and result.errors
    return result.errors[0].error.message


# -- Hugging Face -------------------------------------------------------------------------------
def test_a_saved_dataset_dict_by_split_with_its_pil_images(saved: Path) -> None:
    train = rows("HuggingFaceDataset", path=str(saved))
    assert [r["label"] for r in train] == [0, 1, 0, 1, 1]
    assert [r["text"] for r in train] == list("abcde")
    image = train[2]["image"]
    assert isinstance(image, Image.Image), "stored as bytes only: a PIL image"
    assert image.size == (64, 48) and image.getpixel((0, 0)) == (80, 100, 200)
    test = rows("HuggingFaceDataset", path=str(saved), split="test", columns=["text"], limit=1)
    assert test == [{"text": "d"}]


def test_pil_images_reach_a_batch_step_in_the_worker_pool(saved: Path) -> None:
    sizes: list[tuple[int, int]] = []

    @step("Test/Sizes")
    @batch(2, "image", load_fn=image_size)
    def measure(ctx: Any, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        sizes.extend(outputs)

    workflow = Workflow()
    images = workflow.add("HuggingFaceDataset", path=str(saved))
    workflow.connect(images, workflow.add(measure))
    result = run_workflow(workflow, workers=2, registry=REGISTRY)
    assert result.ok, result.errors
    assert sizes == [(64, 48)] * 5


def image_size(item: Any) -> tuple[int, int]:
    image = item if isinstance(item, Image.Image) else Image.open(item["value"])
    return (int(image.width), int(image.height))


def test_a_dataset_in_the_local_cache_by_name_with_image_files(tmp_path: Path) -> None:
    files = tmp_path / "files"
    for n, (name, image) in enumerate(zip(["cat", "dog", "dog"], colours(3), strict=True)):
        (files / name).mkdir(parents=True, exist_ok=True)
        image.save(files / name / f"{n}.png")
    built_in = tmp_path / "built"
    datasets.load_dataset("imagefolder", data_dir=str(files), cache_dir=str(built_in))
    # what load_dataset("someone/tiny") leaves in the cache: such files, named for it
    built = next(p for p in (built_in / "imagefolder").glob("*/*/*") if p.is_dir())
    entry = Path(datasets.config.HF_DATASETS_CACHE) / "someone___tiny" / "default" / "0.0.0"
    shutil.copytree(built, entry / "0123abcd")
    os.rename(
        entry / "0123abcd" / "imagefolder-train.arrow", entry / "0123abcd" / "tiny-train.arrow"
    )
    got = rows("HuggingFaceDataset", path="someone/tiny")
    assert [r["label"] for r in got] == [0, 1, 1]
    assert [r["image"] for r in got] == [
        {"type": "image", "value": str(files / name / f"{n}.png")}
        for n, name in enumerate(["cat", "dog", "dog"])
    ], "images whose files are on this machine come as image records"
    message = error_of("HuggingFaceDataset", path="someone/tiny", split="validation")
    assert "has no split 'validation'; its splits are 'train'" in message


def test_hugging_face_errors_say_what_to_do(saved: Path, tmp_path: Path) -> None:
    missing = error_of("HuggingFaceDataset", path="someone/not-here")
    assert "'someone/not-here' is neither a saved dataset folder nor" in missing
    assert "local Hugging Face cache" in missing and "never downloads" in missing
    assert "load_dataset('someone/not-here')" in missing and "save_to_disk" in missing
    split = error_of("HuggingFaceDataset", path=str(saved), split="validation")
    assert "no split 'validation'; its splits are 'train', 'test'" in split
    column = error_of("HuggingFaceDataset", path=str(saved), columns=["caption"])
    assert "no column 'caption'; its columns are 'image', 'label', 'text'" in column
    (tmp_path / "plain").mkdir()
    folder = error_of("HuggingFaceDataset", path=str(tmp_path / "plain"))
    assert "not a folder written by Dataset.save_to_disk" in folder


def test_without_datasets_installed_the_extra_is_named(
    saved: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "datasets", None)
    assert "pip install 'graphbook[hf]'" in error_of("HuggingFaceDataset", path=str(saved))


# -- torchvision --------------------------------------------------------------------------------
def test_fake_data_yields_pil_images_and_int_labels() -> None:
    options = {"size": 6, "image_size": [3, 32, 32], "num_classes": 3}
    got = rows("TorchvisionDataset", name="FakeData", options=options, limit=4)
    assert len(got) == 4
    assert all(isinstance(r["image"], Image.Image) and r["image"].size == (32, 32) for r in got)
    assert all(isinstance(r["label"], int) and 0 <= r["label"] < 3 for r in got)
    assert "class" not in got[0], "FakeData names no classes"
    again = rows("TorchvisionDataset", name="FakeData", options=options, limit=4)
    assert [r["label"] for r in again] == [r["label"] for r in got], "the same samples"


def test_an_image_folder_dataset_names_its_classes(tmp_path: Path) -> None:
    for n, name in enumerate(["cat", "dog", "dog"]):
        (tmp_path / "root" / name).mkdir(parents=True, exist_ok=True)
        colours(1)[0].save(tmp_path / "root" / name / f"{n}.png")
    got = rows("TorchvisionDataset", name="ImageFolder", root=str(tmp_path / "root"))
    assert [(r["label"], r["class"]) for r in got] == [(0, "cat"), (1, "dog"), (1, "dog")]


def test_torchvision_errors_say_what_to_do(tmp_path: Path) -> None:
    absent = error_of("TorchvisionDataset", name="CIFAR10", root=str(tmp_path))
    assert f"CIFAR10 was not found under root {str(tmp_path)!r}" in absent
    assert "does not download" in absent and "download=True" in absent
    assert not any(tmp_path.iterdir()), "nothing was downloaded"
    unknown = error_of("TorchvisionDataset", name="CIFAR11", root=str(tmp_path))
    assert "no dataset 'CIFAR11'" in unknown and "CIFAR10, CIFAR100, MNIST" in unknown
    assert "needs root" in error_of("TorchvisionDataset", name="MNIST")
