"""What identifies a dataset, recorded with a run (a training run's train_data, a batch run's
dataset) so that a resume can tell whether it still reads the same data, and say precisely what
changed.

The data's identity is read from the dataset object, never through `__getitem__`: a dataset
that augments its items (with its own unseeded generator, or with the global RNGs in whatever
state the model's initialisation left them) gives other items each time it is read, though its
data is the same. What is hashed: the dataset's type and length, and each of its fields that
holds data (tensors and arrays, lists of file names or raw indices, strings, numbers, nested
datasets such as a `Subset`'s), each field's digest apart so that a change is named. A dataset that
is itself a plain list or array of items is hashed whole (sampled). Random generators,
callables (transforms) and objects of other types are left out (their type only).
Large arrays and lists are sampled (evenly spaced elements, with their shape and length).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import numpy as np
import torch

FORMAT = 2
"""Identities recorded by this module (format 1, absent from the record: a few items read
through `__getitem__`, which an augmenting dataset gives differently each time)."""
_MAX_DEPTH = 4
_MAX_ITEMS = 4096
"""Elements of a long list (or rows of a large array) hashed: evenly spaced, with its length."""
_MAX_BYTES = 1 << 24
_SKIPPED = (random.Random, np.random.Generator, np.random.RandomState, torch.Generator)


def data_identity(dataset: Any) -> dict[str, Any]:
    """The dataset's type, length and a digest of each field holding data."""
    fields: dict[str, str] = {}
    if _holds_data(dataset):  # a plain list (or array) of items: its content is the data
        fields["items"] = _digest(dataset)
    else:
        _fields(dataset, "", fields, 0, set())
    return {
        "format": FORMAT,
        "type": type(dataset).__qualname__,  # not the module: a script's is __main__ or not
        "length": len(dataset) if hasattr(dataset, "__len__") else None,
        "fields": fields,
    }


def data_changes(name: str, was: Any, now: dict[str, Any]) -> list[str]:
    """What differs between two identities of `name`, in words (empty if nothing does)."""
    if not isinstance(was, dict) or was.get("format") != FORMAT:
        # Recorded by an older version (items read through __getitem__): compare what both say.
        if not isinstance(was, dict):
            return []
        old_type = str(was.get("type", "")).rsplit(".", 1)[-1]
        changes = []
        if old_type and old_type != now["type"].rsplit(".", 1)[-1]:
            changes.append(f"{name} was a {old_type}, now a {now['type']}")
        if "length" in was and was["length"] != now["length"]:
            changes.append(f"{name} had {was['length']} items, now {now['length']}")
        return changes
    if was["type"] != now["type"]:
        return [f"{name} was a {was['type']}, now a {now['type']}"]
    changes = []
    if was["length"] != now["length"]:
        changes.append(f"{name} had {was['length']} items, now {now['length']}")
    old, new = was.get("fields", {}), now["fields"]
    differ = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if differ:
        shown = ", ".join(f".{k}" for k in differ[:6]) + (" ..." if len(differ) > 6 else "")
        changes.append(f"{name}'s data differs in {shown}")
    return changes


def _fields(value: Any, path: str, out: dict[str, str], depth: int, seen: set[int]) -> None:
    """A digest per field of `value` that holds data; nested datasets are walked into."""
    if id(value) in seen or depth > _MAX_DEPTH:
        return
    seen.add(id(value))
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict):
        return
    for name in sorted(attributes):
        field = attributes[name]
        where = f"{path}{name}"
        if _is_dataset(field):
            _fields(field, where + ".", out, depth + 1, seen)
        elif isinstance(field, list | tuple) and field and all(_is_dataset(d) for d in field):
            for index, part in enumerate(field):  # ConcatDataset.datasets
                _fields(part, f"{where}[{index}].", out, depth + 1, seen)
        elif _holds_data(field):
            out[where] = _digest(field)


def _digest(value: Any) -> str:
    digest = hashlib.sha256()
    _feed(digest, value, 0)
    return digest.hexdigest()[:16]


def _is_dataset(value: Any) -> bool:
    if isinstance(value, torch.Tensor | np.ndarray):
        return False
    if isinstance(value, torch.utils.data.Dataset):
        return True
    return all(hasattr(value, a) for a in ("__len__", "__getitem__", "__dict__"))


def _holds_data(value: Any) -> bool:
    if isinstance(value, _SKIPPED) or (callable(value) and not isinstance(value, torch.Tensor)):
        return False
    return isinstance(
        value,
        torch.Tensor
        | np.ndarray
        | str
        | bytes
        | int
        | float
        | bool
        | PurePath
        | list
        | tuple
        | Mapping
        | np.generic,
    )


def _feed(digest: Any, value: Any, depth: int) -> None:
    """Hash `value`'s content (not its identity: no ids or addresses)."""
    if depth > _MAX_DEPTH:
        digest.update(b"deep")
    elif isinstance(value, torch.Tensor):
        _feed_tensor(digest, value)
    elif isinstance(value, np.ndarray):
        _feed_array(digest, value)
    elif _feed_leaf(digest, value):
        pass
    elif isinstance(value, Mapping):
        digest.update(f"map{len(value)}".encode())
        for key in _sample(sorted(value, key=repr)):
            digest.update(repr(key).encode())
            _feed(digest, value[key], depth + 1)
    elif isinstance(value, list | tuple):
        digest.update(f"seq{len(value)}".encode())
        for part in _sample(value):
            _feed(digest, part, depth + 1)
    else:
        digest.update(type(value).__qualname__.encode())


def _feed_leaf(digest: Any, value: Any) -> bool:
    """Hash a scalar or an image; False if `value` is neither."""
    if isinstance(value, np.generic):
        digest.update(repr(value.item()).encode())
    elif type(value).__module__.startswith("PIL.") and hasattr(value, "tobytes"):
        digest.update(f"image|{value.mode}|{value.size}".encode())  # PIL, not imported here
        digest.update(value.tobytes())
    elif value is None or isinstance(value, str | bytes | int | float | bool | PurePath):
        digest.update(repr(value).encode())
    else:
        return False
    return True


def _feed_tensor(digest: Any, value: torch.Tensor) -> None:
    tensor = value.detach()
    if tensor.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        digest.update(str(tensor.dtype).encode())
        tensor = tensor.float()  # numpy has no such types; the values still identify the data
    _feed_array(digest, tensor.cpu().numpy())


def _sample(items: Any) -> list[Any]:
    if len(items) <= _MAX_ITEMS:
        return list(items)
    step = len(items) / _MAX_ITEMS
    return [items[int(i * step)] for i in range(_MAX_ITEMS)] + [items[-1]]


def _feed_array(digest: Any, array: np.ndarray[Any, Any]) -> None:
    digest.update(f"array|{array.dtype}|{array.shape}".encode())
    if array.dtype == object:
        for item in _sample(array.reshape(-1).tolist()):
            _feed(digest, item, _MAX_DEPTH)
        return
    if array.nbytes > _MAX_BYTES and array.ndim > 0:
        rows = np.linspace(0, len(array) - 1, num=min(len(array), _MAX_ITEMS)).astype(int)
        array = array[rows]
        if array.nbytes > _MAX_BYTES:
            flat = array.reshape(-1)
            array = flat[:: max(1, flat.size // (_MAX_BYTES // max(1, flat.itemsize)))]
    digest.update(np.ascontiguousarray(array).tobytes())
