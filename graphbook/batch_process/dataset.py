"""What a run knows about its dataset: map-style or iterable, its length, and a fingerprint
that tells a resumed run whether it still reads the same data."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import torch
from PIL import Image
from torch.utils.data import IterableDataset

from graphbook.batch_process.errors import BatchError

DatasetKind = Literal["map", "iterable"]
_MAX_DEPTH = 8


@dataclass(frozen=True)
class DatasetInfo:
    kind: DatasetKind
    type: str
    length: int | None
    fingerprint: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def dataset_kind(dataset: object) -> DatasetKind:
    """The kind of `dataset`: "map" if sized and indexable, "iterable" if it can be iterated
    again and again (an IterableDataset, or any object whose `__iter__` starts over)."""
    if isinstance(dataset, IterableDataset):
        return "iterable"
    if hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__"):
        return "map"
    if isinstance(dataset, Iterable) and iter(dataset) is not dataset:
        return "iterable"
    raise BatchError(
        f"cannot process a {type(dataset).__name__}: expected a map-style dataset (with "
        "__len__ and __getitem__) or an IterableDataset whose __iter__ starts over each time; "
        "a generator or iterator can be read only once, so the run could not resume"
    )


def describe(dataset: Any) -> DatasetInfo:
    """Kind, type, length and fingerprint. The fingerprint hashes the class name, the length
    and a few items (first, middle and last of a map-style dataset; the first of an iterable)."""
    kind = dataset_kind(dataset)
    name = f"{type(dataset).__module__}.{type(dataset).__qualname__}"
    length = len(dataset) if kind == "map" else None
    # The class's module is left out: a script's classes live in __main__ when it runs and
    # elsewhere when it is imported, and the data is the same.
    digest = hashlib.sha256(f"{type(dataset).__qualname__}|{length}".encode())
    for item in _samples(dataset, length):
        _feed(digest, item, 0)
    return DatasetInfo(kind, name, length, digest.hexdigest()[:16])


def _samples(dataset: Any, length: int | None) -> list[Any]:
    if length is None:
        for item in dataset:
            return [item]
        return []
    return [dataset[i] for i in sorted({0, length // 2, length - 1}) if 0 <= i < length]


def _feed(digest: Any, value: Any, depth: int) -> None:
    """Hash `value`'s content (not its identity: no ids or addresses)."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, torch.Tensor):
        _feed_tensor(digest, value)
    elif isinstance(value, np.ndarray):
        _feed_array(digest, value)
    elif isinstance(value, Image.Image):
        digest.update(f"image|{value.mode}|{value.size}".encode())
        digest.update(value.tobytes())
    elif value is None or isinstance(value, str | bytes | int | float | bool | complex):
        digest.update(repr(value).encode())
    elif isinstance(value, Mapping):
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            _feed(digest, value[key], depth + 1)
    elif isinstance(value, list | tuple):
        digest.update(f"seq{len(value)}".encode())
        for part in value:
            _feed(digest, part, depth + 1)
    else:
        digest.update(type(value).__qualname__.encode())


def _feed_tensor(digest: Any, tensor: torch.Tensor) -> None:
    tensor = tensor.detach().cpu()
    if tensor.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        digest.update(str(tensor.dtype).encode())
        tensor = tensor.float()  # numpy has no such types; the values still identify the data
    _feed_array(digest, tensor.numpy())


def _feed_array(digest: Any, array: np.ndarray[Any, Any]) -> None:
    digest.update(f"array|{array.dtype}|{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).tobytes())
