"""What reaches the device: nested tensors moved to it, and the DataLoader settings that make
those moves cheap on a GPU. Shared by the batch API and the Trainer.

On CUDA a copy from ordinary (pageable) host memory blocks the caller and is staged by the
driver anyway; from pinned memory it can be queued with `non_blocking=True` and overlap the
work already on the GPU. So when the device is CUDA, batches are read into pinned memory
(`pin_memory=True`, unless the caller said otherwise) and copied without blocking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np
import torch

T = TypeVar("T")


def to_device(data: T, device: torch.device) -> T:
    """`data` with every tensor (and numeric numpy array, as a tensor) moved to `device`,
    inside lists, tuples, named tuples and dicts; anything else is returned as it is. Copies
    to a CUDA device are queued without blocking (the device's stream orders them)."""
    moved: T = _moved(data, device)
    return moved


def _moved(data: Any, device: torch.device) -> Any:
    if isinstance(data, torch.Tensor):
        return data.to(device, non_blocking=device.type == "cuda")
    if isinstance(data, np.ndarray) and data.dtype.kind in "biufc":
        return _moved(torch.from_numpy(data), device)
    if isinstance(data, Mapping):
        return {k: _moved(v, device) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(_moved(v, device) for v in data))
    if isinstance(data, list | tuple):
        return type(data)(_moved(v, device) for v in data)
    return data


def loader_kwargs_for(device: torch.device, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """DataLoader keyword arguments for reading batches bound for `device`: on CUDA,
    `pin_memory=True` unless `kwargs` sets `pin_memory` itself; elsewhere `kwargs` as given
    (pinning only costs on a CPU)."""
    chosen = dict(kwargs)
    if device.type == "cuda":
        chosen.setdefault("pin_memory", True)
    return chosen
