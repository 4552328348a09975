"""What a run knows about its dataset: map-style or iterable, its length, and a fingerprint
that tells a resumed run whether it still reads the same data (the dataset's identity, read from
the object as the Trainer reads its train_data, never from augmented items)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from torch.utils.data import IterableDataset

from graphbook.batch_process.errors import BatchError
from graphbook.durable.identity import data_identity

DatasetKind = Literal["map", "iterable"]


@dataclass(frozen=True)
class DatasetInfo:
    kind: DatasetKind
    type: str
    length: int | None
    fingerprint: str
    identity: dict[str, Any] | None = field(default=None, compare=False)
    """What identifies the data (graphbook.durable.identity), to say what changed; None
    in a record from before it was kept (its fingerprint hashed a few items)."""

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
    """Kind, type, length, identity and a fingerprint of the identity."""
    kind = dataset_kind(dataset)
    name = f"{type(dataset).__module__}.{type(dataset).__qualname__}"
    length = len(dataset) if kind == "map" else None
    identity = data_identity(dataset)
    text = json.dumps(identity, sort_keys=True, default=str)
    return DatasetInfo(kind, name, length, hashlib.sha256(text.encode()).hexdigest()[:16], identity)
