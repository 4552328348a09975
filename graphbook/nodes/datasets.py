"""Datasets on disk: Hugging Face datasets (saved or in the local cache, offline) and torchvision
datasets from a local root.

Neither ever downloads: a dataset that is not on this machine is an error that says how to get
it here once.
"""

from __future__ import annotations

import inspect
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from graphbook.lifecycle import GeneratorSourceStep
from graphbook.nodes.common import Data, NodeInputError, image_record, local_path

LIMIT = {"type": "int", "default": 0, "description": "at most this many rows (0: all)"}
CHUNK = 256
"""Rows read from a Hugging Face dataset at a time."""


class HuggingFaceDataset(GeneratorSourceStep):
    """Yields the rows of a Hugging Face dataset split, one dict per row, with the dataset's
    own column names as fields: `{"image": ..., "label": 3, "text": "a cat"}`.

    `path` is either a folder written by `Dataset.save_to_disk` or `DatasetDict.save_to_disk`,
    or a dataset's name on the Hub (`user/name`) that is in the local cache
    ($HF_HOME/datasets) because it was loaded once before. It is read offline: Graphbook never
    downloads. A saved single `Dataset` has no splits, and `split` is not used for it.

    Image columns (a `datasets.Image` feature) are read without decoding. A value whose file
    is on this machine (an absolute path that exists) comes as an image record,
    `{"type": "image", "value": PATH}`, so that decoding happens downstream in the worker pool
    and the editor shows it; an image stored only as bytes in the dataset comes as a PIL image
    (opened, decoded when first used), which the editor previews and image nodes accept.

    Example: `path` = `~/data/beans_saved`, `split` = `validation`, `columns` = `image, labels`.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "path": {
            "type": "string",
            "required": True,
            "description": "a save_to_disk folder, or a dataset name in the local cache",
        },
        "split": {"type": "string", "default": "train", "description": "which split to read"},
        "columns": {
            "type": "list[string]",
            "default": [],
            "description": "columns to read, in this order (empty: all)",
        },
        "limit": LIMIT,
    }
    Outputs: ClassVar[list[str]] = ["out"]
    Category: ClassVar[str] = "Sources"
    path: str
    split: str = "train"
    columns: list[str] = []
    limit: int = 0

    def load(self) -> Iterator[Data]:
        hf = import_datasets()
        table = self.table(hf)
        columns = [str(c) for c in self.columns or []]
        missing = [c for c in columns if c not in table.column_names]
        if missing:
            raise NodeInputError(
                f"{self.path} ({self.split}) has no column {', '.join(map(repr, missing))}; "
                f"its columns are {', '.join(map(repr, table.column_names))}"
            )
        if columns:
            table = table.select_columns(columns)
        images = [n for n, f in table.features.items() if isinstance(f, hf.Image)]
        for name in images:  # paths and bytes as stored; decoding is left to who needs it
            table = table.cast_column(name, hf.Image(decode=False))
        count = len(table) if int(self.limit) <= 0 else min(int(self.limit), len(table))
        self.log(f"reading {count} of {len(table)} rows")
        for start in range(0, count, CHUNK):
            batch = table[start : min(start + CHUNK, count)]
            for index in range(len(next(iter(batch.values()), []))):
                yield {name: cell(values[index], name in images) for name, values in batch.items()}

    def table(self, hf: Any) -> Any:
        """The split to read: from a saved folder, else from the local cache."""
        folder = local_path(self.path, "path")
        if folder.exists():
            loaded = saved_dataset(hf, folder)
        else:
            loaded = cached_dataset(hf, str(self.path).strip())
        if isinstance(loaded, hf.DatasetDict):
            if self.split not in loaded:
                raise NodeInputError(
                    f"{self.path} has no split {self.split!r}; its splits are "
                    f"{', '.join(map(repr, loaded))}: set split to one of them"
                )
            return loaded[self.split]
        return loaded


def import_datasets() -> Any:
    try:
        import datasets  # type: ignore[import-untyped]
    except ImportError:
        raise NodeInputError(
            "Hugging Face datasets is not installed; install it with: pip install 'graphbook[hf]'"
        ) from None
    return datasets


def saved_dataset(hf: Any, folder: Path) -> Any:
    marks = ("dataset_dict.json", "state.json")
    if not folder.is_dir() or not any((folder / mark).is_file() for mark in marks):
        raise NodeInputError(
            f"{folder} is not a folder written by Dataset.save_to_disk or "
            "DatasetDict.save_to_disk (it has no dataset_dict.json or state.json); point path "
            "at such a folder, or at a dataset name in the local cache"
        )
    return hf.load_from_disk(str(folder))


def cached_dataset(hf: Any, name: str) -> Any:
    """All splits of a Hub dataset from the local cache, never from the network."""
    try:
        with offline(hf):
            return hf.load_dataset(name)
    except Exception as exc:  # not cached comes in several kinds, each worth the same advice
        raise NodeInputError(
            f"{name!r} is neither a saved dataset folder nor a dataset in the local Hugging "
            f"Face cache ($HF_HOME/datasets: {hf.config.HF_DATASETS_CACHE}); Graphbook "
            "never downloads: run datasets.load_dataset(" + repr(name) + ") once on a "
            "machine with network, or save the dataset with save_to_disk and set path to "
            f"that folder ({type(exc).__name__}: {exc})"
        ) from None


@contextmanager
def offline(hf: Any) -> Iterator[None]:
    """`datasets`, and the hub client it uses, offline for the block (HF_HUB_OFFLINE=1)."""
    settings = [hf.config, getattr(hf.config, "constants", None)]  # huggingface_hub's
    settings = [s for s in settings if hasattr(s, "HF_HUB_OFFLINE")]
    before = [s.HF_HUB_OFFLINE for s in settings]
    for setting in settings:
        setting.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for setting, value in zip(settings, before, strict=True):
            setting.HF_HUB_OFFLINE = value


def cell(value: Any, image: bool) -> Any:
    if not image or not isinstance(value, dict):
        return value
    path = value.get("path")
    if isinstance(path, str) and os.path.isabs(path) and os.path.isfile(path):
        return image_record(path)
    if value.get("bytes") is None:
        return None
    from PIL import Image

    return Image.open(io.BytesIO(value["bytes"]))


class TorchvisionDataset(GeneratorSourceStep):
    """Yields the samples of a torchvision dataset that is already on disk under `root`, one
    dict per sample: `{"image": <PIL image>, "label": 3, "class": "cat"}` (`class` when the
    dataset names its classes). It is built with `download=False`: a dataset that is not
    under `root` is an error, never a download.

    `name` is the class in torchvision.datasets: CIFAR10, CIFAR100, MNIST, FashionMNIST,
    KMNIST, SVHN, STL10, ImageFolder, FakeData (random images; needs no root), ... `train`
    picks the training or the test set where the dataset has one; `options` passes other
    arguments to the class (e.g. `{"split": "test"}` for SVHN, `{"size": 100, "image_size":
    [3, 32, 32]}` for FakeData).

    Example: `name` = `CIFAR10`, `root` = `~/data` (holding `cifar-10-batches-py/`)."""

    Parameters: ClassVar[dict[str, Any]] = {
        "name": {
            "type": "string",
            "default": "CIFAR10",
            "description": "dataset class in torchvision.datasets (CIFAR10, MNIST, ImageFolder)",
        },
        "root": {
            "type": "string",
            "default": "",
            "path": True,
            "description": "folder that holds the dataset's files",
        },
        "train": {
            "type": "boolean",
            "default": True,
            "description": "the training set (false: the test set), where there are two",
        },
        "limit": {"type": "int", "default": 0, "description": "at most this many samples"},
        "options": {
            "type": "dict",
            "default": {},
            "description": 'more arguments for the dataset class, e.g. {"split": "test"}',
        },
    }
    Outputs: ClassVar[list[str]] = ["out"]
    Category: ClassVar[str] = "Sources"
    name: str = "CIFAR10"
    root: str = ""
    train: bool = True
    limit: int = 0
    options: dict[str, Any] = {}

    def load(self) -> Iterator[Data]:
        dataset = self.dataset()
        classes = getattr(dataset, "classes", None)
        count = len(dataset) if int(self.limit) <= 0 else min(int(self.limit), len(dataset))
        self.log(f"reading {count} of {len(dataset)} samples of {self.name}")
        for index in range(count):
            image, target = dataset[index]
            label = int(target) if is_integer(target) else target
            data = {"image": image, "label": label}
            if isinstance(label, int) and isinstance(classes, list | tuple):
                data["class"] = classes[label] if 0 <= label < len(classes) else None
            yield data

    def dataset(self) -> Any:
        kind = dataset_class(str(self.name).strip())
        accepted = inspect.signature(kind).parameters
        arguments = dict(self.options or {})
        if "root" in accepted:
            arguments["root"] = str(dataset_root(self.root, self.name))
        if "train" in accepted:
            arguments.setdefault("train", bool(self.train))
        if "download" in accepted:
            arguments["download"] = False
        try:
            return kind(**arguments)
        except (RuntimeError, FileNotFoundError) as exc:
            raise NodeInputError(
                f"{self.name} was not found under root {arguments.get('root')!r} ({exc}); "
                "Graphbook does not download datasets: put its files there, or download it "
                f"once with torchvision yourself (torchvision.datasets.{self.name}(root, "
                "download=True))"
            ) from None
        except TypeError as exc:
            raise NodeInputError(f"{self.name} does not take these options: {exc}") from None


def dataset_class(name: str) -> Any:
    import torchvision.datasets as tvd

    kind = getattr(tvd, name, None) if name in tvd.__all__ else None
    if not inspect.isclass(kind):
        some = "CIFAR10, CIFAR100, MNIST, FashionMNIST, KMNIST, SVHN, STL10, ImageFolder, FakeData"
        raise NodeInputError(
            f"torchvision has no dataset {name!r}; use one of the classes in "
            f"torchvision.datasets, e.g. {some}"
        )
    return kind


def dataset_root(text: str, name: str) -> Path:
    if not str(text).strip():
        raise NodeInputError(f"{name} needs root: set it to the folder that holds its files")
    return local_path(text, "root")


def is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return hasattr(value, "item") and getattr(value, "ndim", 1) == 0 and "int" in str(value.dtype)
