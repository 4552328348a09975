"""Pickling across processes, with arrays and tensors copied once into shared memory segments.

A worker process lends its segments (`lend_from_here`): the parent maps a lent segment without
unlinking it and, once the last array or tensor on it is gone, names it in `given_back(prefix)`;
the pool hands those names back to the worker, which writes the next result into them. Writing
into pages that already exist is a copy; a new segment costs the kernel allocating, zeroing and
later freeing every page (a 600 KB image: 0.02 against 0.30 ms of CPU, bench/README.md).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import io
import itertools
import mmap
import os
import pickle
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dill  # type: ignore[import-untyped]

from graphbook.engine import slabs

if TYPE_CHECKING:
    import numpy as np
    import torch

SHM_DIR = "/dev/shm"
"""Where segments live: POSIX shared memory on Linux. Without it, arrays are pickled instead."""
NAME_PREFIX = "graphbook_"
MIN_BYTES = 16 * 1024
"""Smaller arrays are pickled with the rest: a segment costs a few system calls and a page, and
each one received stays a memory mapping while it lives (Linux allows about 65,000)."""

KEEP_FREE = 32
"""Segments given back that a worker keeps to write again, at most (and `KEEP_FREE_BYTES`): what
it is given back while it runs its share of a lane's tasks, twice the tasks a worker holds."""
KEEP_FREE_BYTES = 64 * 1024 * 1024
PAGE = mmap.PAGESIZE

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


def discard(names: Iterable[str]) -> None:
    """Unlink segments this process made and will never send: a result that failed to pickle
    or to reach the parent."""
    names = list(names)
    if _lender is not None:
        _lender.forget(names)
    unlink(names)


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


def creator(name: str) -> int:
    """The pid of the process that made segment `name` (`graphbook_<pool>_<pid>_<n>`); 0 for a
    name not made that way."""
    parts = name.split("_")
    return int(parts[2]) if len(parts) == 4 and parts[2].isdigit() else 0


def _pool_prefix(name: str) -> str:
    """`graphbook_<pool>_` of `graphbook_<pool>_<pid>_<n>`."""
    return "_".join(name.split("_")[:2]) + "_"


def _creator_died(name: str) -> bool:
    """Whether the process that made segment `name` is gone."""
    pid = creator(name)
    if not pid:
        return False
    try:
        os.kill(pid, 0)
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
        if type(obj) is slabs.Part:
            return self._part(obj)
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
        rebuild = _rebuild_lent_array if self.lends else _rebuild_array
        return rebuild, (self._write(data), array.nbytes, array.dtype, array.shape)

    def _tensor(self, tensor: torch.Tensor) -> Reduced:
        import torch

        flat = tensor.detach().resolve_conj().resolve_neg().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy()
        name = self._write(data)
        args = (name, data.nbytes, tensor.dtype, tuple(tensor.shape), tensor.requires_grad)
        return (_rebuild_lent_tensor if self.lends else _rebuild_tensor), args

    def _part(self, part: slabs.Part) -> Reduced:
        """A batch's part with its arrays in one slab (graphbook/engine/slabs.py)."""
        made: list[_Segment] = []
        handle, state = slabs.pack(part, functools.partial(self._slab, made), self)
        for segment in made:
            segment.mapping.close()
        if handle is None:
            return _rebuild_part, (None, 0, state)
        name, size = handle
        return (_rebuild_lent_part if self.lends else _rebuild_part), (name, size, state)

    def _slab(self, made: list[_Segment], nbytes: int) -> tuple[tuple[str, int], memoryview]:
        assert self.prefix is not None
        if _lender is not None:
            segment = _lender.reserve(self.prefix, nbytes)
        else:
            segment = _Segment.create(_new_name(self.prefix), _pages(nbytes))
            made.append(segment)
        self.names.append(segment.name)
        return (segment.name, segment.size), memoryview(segment.mapping)[:nbytes]

    @property
    def lends(self) -> bool:
        return _lender is not None

    def _write(self, data: np.ndarray[Any, Any]) -> str:
        assert self.prefix is not None
        view = data.data.cast("B")
        if _lender is not None:
            name = _lender.write(self.prefix, view)
            self.names.append(name)
            return name
        name = _new_name(self.prefix)
        fd = os.open(os.path.join(SHM_DIR, name), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        self.names.append(name)
        try:
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
        discard(segments.names)
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


def _attach_lent(name: str, nbytes: int) -> np.ndarray[Any, Any]:
    """The first `nbytes` of a worker's lent segment, mapped here once and kept mapped (see
    NOTE [ Lent segments stay mapped ]); when the returned array dies (the last array or
    tensor on it is gone), the name goes to `given_back` for the pool to hand back."""
    import numpy as np

    with _mapped_lock:
        mapping = _idle.pop(name, None) or _map(name)
        _in_use[name] = mapping
    memory = np.frombuffer(mapping, dtype=np.uint8, count=nbytes)
    weakref.finalize(memory, _let_go, name)
    return memory


def _map(name: str) -> mmap.mmap:
    fd = os.open(os.path.join(SHM_DIR, name), os.O_RDWR)
    try:
        size = os.fstat(fd).st_size
        return mmap.mmap(fd, size, flags=mmap.MAP_SHARED | _POPULATE)
    finally:
        os.close(fd)


def _let_go(name: str) -> None:
    """Nothing here uses the lent segment any more: keep it mapped while it is among the most
    recently used, and hand it back."""
    with _mapped_lock:
        mapping = _in_use.pop(name, None)
        if mapping is not None:
            _idle[name] = mapping
            _trim(MAPPED_BYTES)
    _give_back(name)


def _trim(most: int) -> None:
    """Unmap the idle segments used longest ago until those kept hold at most `most` bytes."""
    held = sum(len(m) for m in _idle.values())
    while _idle and held > most:
        _, mapping = _idle.popitem(last=False)
        held -= len(mapping)
        mapping.close()


def unmap_idle(prefix: str) -> None:
    """Unmap the idle lent segments of a pool (it is closing: they will not come again)."""
    with _mapped_lock:
        for name in [n for n in _idle if n.startswith(prefix)]:
            _idle.pop(name).close()


# NOTE [ Lent segments stay mapped ]
# Mapping a segment costs the kernel building its page table (MAP_POPULATE: a 4.8 MB slab of 32
# decoded images took ~0.4 ms here) and unmapping it as much again, once per message. A lent
# segment comes back from its worker again and again, written anew, so the parent maps it once:
# while arrays on it live it is in use, then idle, kept mapped (the MAPPED_BYTES most recently
# used), and the next message naming it is read through the same mapping. A segment its worker
# destroyed meanwhile stays in memory until the parent unmaps it: at most MAPPED_BYTES, and
# every idle one of a pool when the pool closes.
MAPPED_BYTES = 512 * 2**20
_idle: collections.OrderedDict[str, mmap.mmap] = collections.OrderedDict()
_in_use: dict[str, mmap.mmap] = {}
_mapped_lock = threading.RLock()  # finalizers run in whichever thread drops the last view


def _rebuild_array(name: str, nbytes: int, dtype: np.dtype[Any], shape: tuple[int, ...]) -> Any:
    return _array_on(_attach(name, nbytes), dtype, shape)


def _rebuild_lent_array(
    name: str, nbytes: int, dtype: np.dtype[Any], shape: tuple[int, ...]
) -> Any:
    return _array_on(_attach_lent(name, nbytes), dtype, shape)


def _rebuild_part(name: str | None, nbytes: int, state: tuple[Any, ...]) -> slabs.Part:
    return slabs.unpack(_attach(name, nbytes) if name is not None else None, state)


def _rebuild_lent_part(name: str, nbytes: int, state: tuple[Any, ...]) -> slabs.Part:
    return slabs.unpack(_attach_lent(name, nbytes), state)


def _array_on(mapping: Any, dtype: np.dtype[Any], shape: tuple[int, ...]) -> Any:
    import numpy as np

    return np.frombuffer(mapping, dtype=dtype).reshape(shape)


def _rebuild_tensor(
    name: str, nbytes: int, dtype: torch.dtype, shape: tuple[int, ...], requires_grad: bool
) -> torch.Tensor:
    return _tensor_on(_attach(name, nbytes), dtype, shape, requires_grad)


def _rebuild_lent_tensor(
    name: str, nbytes: int, dtype: torch.dtype, shape: tuple[int, ...], requires_grad: bool
) -> torch.Tensor:
    return _tensor_on(_attach_lent(name, nbytes), dtype, shape, requires_grad)


def _tensor_on(
    mapping: Any, dtype: torch.dtype, shape: tuple[int, ...], requires_grad: bool
) -> torch.Tensor:
    import torch

    # frombuffer keeps a reference to the mmap, which unmaps when the tensor's storage dies.
    tensor = torch.frombuffer(mapping, dtype=dtype).reshape(shape)
    return tensor.requires_grad_() if requires_grad else tensor


# -- lending: segments written again -----------------------------------------------------------
_returns: dict[str, deque[str]] = {}
"""Per pool prefix, the lent segments whose last array or tensor has gone (appended by
finalizers, in any thread) and that the pool has not yet handed back."""


def open_returns(prefix: str) -> None:
    """A pool with this prefix hands lent segments back (call before its workers send any)."""
    _returns.setdefault(prefix, deque())


def close_returns(prefix: str) -> None:
    """The pool is closed: segments given back from now on are forgotten (and swept), and
    those mapped here and idle are unmapped."""
    _returns.pop(prefix, None)
    unmap_idle(prefix)


def given_back(prefix: str) -> list[str]:
    """Take the names of the pool's lent segments that nobody here uses any more."""
    returned = _returns.get(prefix)
    taken: list[str] = []
    while returned:
        taken.append(returned.popleft())
    return taken


def _give_back(name: str) -> None:
    returned = _returns.get(_pool_prefix(name))
    if returned is not None:
        returned.append(name)


def lend_from_here() -> None:
    """From now on this process (a worker) lends its segments and writes them again once
    they are given back (`taken_back`)."""
    global _lender
    _lender = _Lender()


def taken_back(names: Iterable[str], keep: bool = True) -> None:
    """The parent let go of these lent segments: keep them to write again (unless `keep` is
    false, or there are enough spare already), else unlink them."""
    if _lender is not None:
        _lender.take_back(names, keep)


def drop_spare() -> None:
    """Unlink the segments kept to be written again (the worker has nothing to run)."""
    if _lender is not None:
        _lender.drop_spare()


@dataclass
class _Segment:
    name: str
    mapping: mmap.mmap

    @property
    def size(self) -> int:
        return len(self.mapping)

    @classmethod
    def create(cls, name: str, size: int) -> _Segment:
        fd = os.open(os.path.join(SHM_DIR, name), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, size)
            return cls(name, mmap.mmap(fd, size, flags=mmap.MAP_SHARED))
        except BaseException:
            unlink([name])
            raise
        finally:
            os.close(fd)

    def destroy(self) -> None:
        self.mapping.close()
        unlink([self.name])


class _Lender:
    """A worker's segments: lent (the parent may hold them) and spare (given back, kept mapped
    to be written again, up to KEEP_FREE of them and KEEP_FREE_BYTES)."""

    def __init__(self) -> None:
        self.lent: dict[str, _Segment] = {}
        self.spare: dict[int, list[_Segment]] = {}
        """Spare segments by size (whole pages)."""

    def write(self, prefix: str, data: memoryview) -> str:
        segment = self.reserve(prefix, len(data))
        segment.mapping[: len(data)] = data
        return segment.name

    def reserve(self, prefix: str, nbytes: int) -> _Segment:
        """A segment of at least `nbytes` to write into and lend: a spare one of that size
        (its pages exist already), else a new one."""
        size = _pages(nbytes)
        spares = self.spare.get(size)
        segment = spares.pop() if spares else _Segment.create(_new_name(prefix), size)
        self.lent[segment.name] = segment
        return segment

    def take_back(self, names: Iterable[str], keep: bool) -> None:
        for name in names:
            segment = self.lent.pop(name, None)
            if segment is None:
                continue
            if not (keep and self._room_for(segment.size)):
                segment.destroy()
                continue
            self.spare.setdefault(segment.size, []).append(segment)

    def _room_for(self, size: int) -> bool:
        """Room for one more spare: up to KEEP_FREE of them in KEEP_FREE_BYTES, and always
        two of its size (a batch's slab can be larger than that; two keep one being written
        while the parent reads the other)."""
        count = sum(len(segments) for segments in self.spare.values())
        held = sum(each * len(segments) for each, segments in self.spare.items())
        if len(self.spare.get(size, ())) < 2:
            return True
        return count < KEEP_FREE and held + size <= KEEP_FREE_BYTES

    def forget(self, names: Iterable[str]) -> None:
        for name in names:
            segment = self.lent.pop(name, None)
            if segment is not None:
                segment.mapping.close()

    def drop_spare(self) -> None:
        for segments in self.spare.values():
            for segment in segments:
                segment.destroy()
        self.spare.clear()


_lender: _Lender | None = None


def _pages(nbytes: int) -> int:
    """`nbytes` rounded up to whole pages (at least one)."""
    return -(-max(nbytes, 1) // PAGE) * PAGE


def _new_name(prefix: str) -> str:
    return f"{prefix}{os.getpid()}_{next(_counter)}"
