"""Values across Ray without copying their tensors: CPU tensors travel as numpy arrays.

Ray pickles a torch tensor through torch's own reduction, which copies its bytes into the
pickle and copies them out again on the other side (for a decoded 224x224 image, 600 KB each
way). A numpy array instead travels as an out-of-band buffer: written once into Ray's object
store, and read in place by a process on the same machine (zero-copy). `pack` pickles a value
with cloudpickle (as Ray would), turning each CPU tensor into such an array; `unpack` makes the
tensors again, as views on the object store's memory.

Only the values that `pack` wraps travel this way (the Ray pool's tasks and outcomes, a remote
model's inputs and outputs); the rest of the process's Ray is left as Ray configures it.

An unpacked tensor is read-only as numpy sees it; the object store's memory is mapped writable,
and each of these values is read by one process, so a node that writes into it changes only its
own copy. It keeps its part of the object store until the last tensor on it is gone.
"""

from __future__ import annotations

import io
import pickle
import sys
import warnings
from typing import Any

from ray import cloudpickle

Packed = tuple[bytes, list[pickle.PickleBuffer]]
"""The pickled value, and the buffers of its arrays (Ray stores these without copying)."""


def pack(value: Any) -> Packed:
    """Pickle `value`, its CPU tensors as numpy arrays and every array's bytes out of band."""
    buffers: list[pickle.PickleBuffer] = []
    file = io.BytesIO()
    _Pickler(file, protocol=5, buffer_callback=buffers.append).dump(value)
    return file.getvalue(), buffers


def unpack(packed: Packed) -> Any:
    """The value `pack` pickled; its arrays and tensors are views on the buffers, not copies."""
    data, buffers = packed
    return pickle.loads(data, buffers=buffers)


_CloudPickler: Any = cloudpickle.Pickler  # untyped: Ray's vendored cloudpickle


class _Pickler(_CloudPickler):  # type: ignore[misc]
    def reducer_override(self, obj: Any) -> Any:
        torch = sys.modules.get("torch")
        if torch is not None and type(obj) is torch.Tensor:
            array = _as_array(obj)
            if array is not None:
                return _tensor, (array,)
        return super().reducer_override(obj)


def _as_array(tensor: Any) -> Any:
    """The tensor's memory as a numpy array, or None for a tensor numpy cannot hold (on a GPU,
    sparse, needing its gradient, bfloat16, ...), which torch then pickles as usual."""
    if tensor.device.type != "cpu" or tensor.requires_grad:
        return None
    try:
        return tensor.resolve_conj().resolve_neg().numpy()
    except (TypeError, RuntimeError):
        return None


def _tensor(array: Any) -> Any:
    import torch

    global _warned
    if not _warned:  # see _quiet_once
        _quiet_once(torch)
        _warned = True
    return torch.from_numpy(array)


_warned = False


def _quiet_once(torch: Any) -> None:
    """torch warns that a read-only numpy array makes a tensor it cannot write, once per
    process; here the memory is writable (see the module's docstring), so that one warning is
    drawn from a throwaway array and dropped. Not around every tensor: `catch_warnings` resets
    every module's once-only warnings each time and is not thread-safe."""
    import numpy

    read_only = numpy.zeros(1)
    read_only.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        torch.from_numpy(read_only)
