"""Pickling across processes, with arrays and tensors copied once into shared memory segments."""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import mmap
import os
import pickle
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dill  # type: ignore[import-untyped]

if TYPE_CHECKING:
    import numpy as np
    import torch

SHM_DIR = "/dev/shm"
"""Where segments live: POSIX shared memory on Linux. Without it, arrays are pickled instead."""
NAME_PREFIX = "graphbook_"
MIN_BYTES = 16 * 1024
"""Smaller arrays are pickled with the rest: a segment costs a few system calls and a page, and
each one received stays a memory mapping while it lives (Linux allows about 65,000)."""

_PICKLE, _DILL = b"p", b"d"
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)
_counter = itertools.count()
Reduced = tuple[Callable[..., Any], tuple[Any, ...]]


@dataclass(frozen=True)
class Packed:
    """Pickled bytes and the segments they name; loading them unlinks those segments."""

    data: bytes
    segments: tuple[str, ...] = ()


@functools.cache
def available() -> bool:
    return os.path.isdir(SHM_DIR)


def dumps(obj: Any, prefix: str | None = None, *, recurse: bool = False) -> Packed:
    """Pickle `obj` (with dill when plain pickle cannot), putting arrays and tensors of
    `MIN_BYTES` or more into new segments named `prefix<pid>_<n>`; `None` means no segments.
    `recurse` has dill copy the globals a function uses, for a process that did not fork."""
    try:
        return _dump(obj, prefix, _PICKLE)
    except Exception:
        return _dump(obj, prefix, _DILL, recurse)


def loads(data: bytes | memoryview) -> Any:
    """Unpickle what `dumps` made; each array or tensor becomes a view on its segment, whose
    name is unlinked at once, so the memory goes back when the last view is gone."""
    body = memoryview(data)[1:]
    return dill.loads(body) if data[:1] == _DILL else pickle.loads(body)


def unlink(names: Iterable[str]) -> None:
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(SHM_DIR, name))


def sweep(prefix: str) -> int:
    """Unlink every segment whose name starts with `prefix`; returns how many there were."""
    if not available():
        return 0
    names = [name for name in os.listdir(SHM_DIR) if name.startswith(prefix)]
    unlink(names)
    return len(names)


def sweep_orphans(keep: Iterable[str] = ()) -> int:
    """Unlink the segments whose creator has died, except those named with a prefix in `keep`:
    what workers and parents killed with SIGKILL left behind. Returns how many there were."""
    if not available():
        return 0
    kept = tuple(keep)
    names = [
        name
        for name in os.listdir(SHM_DIR)
        if name.startswith(NAME_PREFIX) and not name.startswith(kept) and _creator_died(name)
    ]
    unlink(names)
    return len(names)


def _creator_died(name: str) -> bool:
    """Whether the process that made segment `name` (`graphbook_<pool>_<pid>_<n>`) is gone."""
    parts = name.split("_")
    if len(parts) != 4 or not parts[2].isdigit():
        return False
    try:
        os.kill(int(parts[2]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, and someone else's
        return False
    return False


# -- pickling ------------------------------------------------------------------------------
class _Segments:
    """The reducer a pickler consults first: arrays and tensors go to new segments."""

    def __init__(self, prefix: str | None) -> None:
        self.prefix = prefix
        self.names: list[str] = []

    def __call__(self, obj: Any) -> Reduced | Any:
        if self.prefix is None or not available():
            return NotImplemented
        numpy = sys.modules.get("numpy")  # nothing is an array if numpy was never imported
        if numpy is not None and type(obj) is numpy.ndarray and _shareable_array(obj):
            return self._array(obj)
        torch = sys.modules.get("torch")
        if torch is not None and type(obj) is torch.Tensor and _shareable_tensor(obj):
            return self._tensor(obj)
        return NotImplemented

    def _array(self, array: np.ndarray[Any, Any]) -> Reduced:
        import numpy as np

        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        return _rebuild_array, (self._write(data), array.nbytes, array.dtype, array.shape)

    def _tensor(self, tensor: torch.Tensor) -> Reduced:
        import torch

        flat = tensor.detach().resolve_conj().resolve_neg().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy()
        name = self._write(data)
        args = (name, data.nbytes, tensor.dtype, tuple(tensor.shape), tensor.requires_grad)
        return _rebuild_tensor, args

    def _write(self, data: np.ndarray[Any, Any]) -> str:
        name = f"{self.prefix}{os.getpid()}_{next(_counter)}"
        fd = os.open(os.path.join(SHM_DIR, name), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        self.names.append(name)
        try:
            view = data.data.cast("B")
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        return name


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, segments: _Segments) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.segments = segments

    def reducer_override(self, obj: Any) -> Any:
        return self.segments(obj)


def _dump(obj: Any, prefix: str | None, tag: bytes, recurse: bool = False) -> Packed:
    buffer = io.BytesIO()
    buffer.write(tag)
    segments = _Segments(prefix)
    if tag == _PICKLE:
        pickler: Any = _Pickler(buffer, segments)
    else:
        pickler = dill.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL, recurse=recurse)
        pickler.reducer_override = segments
    try:
        pickler.dump(obj)
    except BaseException:
        unlink(segments.names)
        raise
    return Packed(buffer.getvalue(), tuple(segments.names))


def _shareable_array(array: np.ndarray[Any, Any]) -> bool:
    return not array.dtype.hasobject and array.nbytes >= MIN_BYTES


def _shareable_tensor(tensor: torch.Tensor) -> bool:
    import torch

    return (
        tensor.device.type == "cpu"
        and tensor.layout == torch.strided
        and not tensor.is_quantized
        and (tensor.is_leaf or not tensor.requires_grad)
        and tensor.numel() * tensor.element_size() >= MIN_BYTES
    )


# -- unpickling ----------------------------------------------------------------------------
def _attach(name: str, nbytes: int) -> mmap.mmap:
    path = os.path.join(SHM_DIR, name)
    fd = os.open(path, os.O_RDWR)
    try:
        return mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED | _POPULATE)
    finally:
        os.close(fd)
        os.unlink(path)


def _rebuild_array(name: str, nbytes: int, dtype: np.dtype[Any], shape: tuple[int, ...]) -> Any:
    import numpy as np

    return np.frombuffer(_attach(name, nbytes), dtype=dtype).reshape(shape)


def _rebuild_tensor(
    name: str, nbytes: int, dtype: torch.dtype, shape: tuple[int, ...], requires_grad: bool
) -> torch.Tensor:
    import torch

    # frombuffer keeps a reference to the mmap, which unmaps when the tensor's storage dies.
    tensor = torch.frombuffer(_attach(name, nbytes), dtype=dtype).reshape(shape)
    return tensor.requires_grad_() if requires_grad else tensor
