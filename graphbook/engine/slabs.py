"""Batches laid out where they are loaded: a batch step's items go to a worker a part at a time,
and come back as one slab.

A batch step hands its load workers parts of a batch (`LoadEach`: the load function run on
each item of a list), not single items. A part's outcome (`Part`) is pickled where it was made
with its arrays and tensors laid out as the batch: every value's k-th array goes to region k of
one buffer (the slab), stacked, so that item j's array is row j of the region. The parent
receives one message and one slab per part instead of one of each per item; it maps the slab
once and each value's arrays are views of its rows. `Part.stacked(start, count)` is the same
rows as one tensor (or array, or structure of them): the batch stacked, with nothing copied.

Where the slab lives is the transport's choice: a shared memory segment the worker lends
(graphbook/engine/shm.py), or an array Ray keeps in its object store (the Ray pool's transfer).
An item whose array does not fit the layout (another shape or dtype than the part's first
value's) travels as it would alone, and its part then has no stacked form over that item.

NOTE [ A part is a batch ]
The batch step cuts its items into parts at the batch's own boundaries (a part is a whole batch
when the items come faster than the workers take them), so the batch it runs is usually one
part's rows: `stacked` is then a view. A batch made of several parts (the source is slower
than the workers, so smaller parts went out rather than leaving workers idle), or with an item
that failed in the middle, has no stacked form: `graphbook.stacking.stack` then copies.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import sys
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from graphbook.engine.pool import Done, Failed, Outcome, call, unsendable
from graphbook.engine.trace import Timed, now

ALIGN = 64
"""Each region starts on a multiple of this many bytes (a cache line; what SIMD loads like)."""

Allocate = Callable[[int], tuple[Any, memoryview]]
"""Gives a writable buffer of at least the bytes asked for: (its handle, its memory)."""
Reduced = tuple[Callable[..., Any], tuple[Any, ...]]


@dataclass(frozen=True)
class LoadEach:
    """A load lane's function: `fn` on each item of a part, every item's outcome its own (an
    item that raises fails alone, with its traceback, and keeps the metrics it reported)."""

    fn: Callable[..., Any]

    def __call__(self, items: list[Any]) -> Part:
        start = now()
        part = Part([call(self.fn, (item,)) for item in items])
        part.timed = Timed(os.getpid(), start, now())
        return part


@dataclass(frozen=True)
class Region:
    """One array position of the part's values, stacked over its items: row j is item j's."""

    tensor: bool
    """A torch tensor (else a NumPy array)."""
    dtype: Any
    shape: tuple[int, ...]
    nbytes: int
    """Bytes of one row."""
    offset: int
    """Where the region starts in the slab."""


class Part:
    """The outcomes of loading consecutive items of one batch, in order. In the process that
    unpickled it, `rows` are its regions as stacked tensors or arrays, views of one slab."""

    def __init__(self, outcomes: list[Outcome], timed: Timed | None = None) -> None:
        self.outcomes = outcomes
        self.timed = timed
        """When and where its items were loaded (for a run's trace)."""
        self.rows: list[Any] = []
        self.blobs: list[bytes] = []
        """Each item's pickled value, its slab arrays as references (unpacked parts only)."""
        self.pure: list[bool] = []
        """Whether item j's value is made of slab arrays alone (in dicts, tuples or lists)."""

    def __len__(self) -> int:
        return len(self.outcomes)

    def stacked(self, start: int, count: int) -> Any:
        """Items start..start+count-1 as one value of the items' structure, each array the
        rows of its region (a view, nothing copied); None where they cannot be: an item
        failed or did not fit the slab, or their structures differ."""
        if not self.rows or count < 1 or start + count > len(self.outcomes):
            return None
        blob = self.blobs[start]
        for j in range(start, start + count):
            if not self.pure[j] or self.blobs[j] != blob:
                return None
        if blob == ROW:
            return self.rows[0][start : start + count]
        token = _UNPACKING.set((self.rows, slice(start, start + count)))
        try:
            return pickle.loads(blob)
        finally:
            _UNPACKING.reset(token)

    def __reduce__(self) -> Reduced:
        """Pickled without a slab (an inline pool never pickles it; a transport that lays it
        out reduces it with `pack` first)."""
        return Part, (self.outcomes, self.timed)


# -- packing: in the worker ------------------------------------------------------------------
class _Layout:
    """The regions of one part, learnt from its first value with arrays."""

    def __init__(self, items: int) -> None:
        self.items = items
        self.regions: list[Region] = []
        self.writes: list[tuple[int, int, memoryview]] = []
        """(region, row, bytes) to copy into the slab once its size is known."""
        self.learning = True
        self._end = 0

    def place(self, value: Any, index: int, row: int, tensor: bool) -> bool:
        """Take the `index`-th array of item `row` into its region if it fits the layout."""
        data, dtype, shape = _bytes_of(value, tensor)
        if self.learning and index == len(self.regions):
            offset = _aligned(self._end)
            self.regions.append(Region(tensor, dtype, shape, data.nbytes, offset))
            self._end = offset + data.nbytes * self.items
        if index >= len(self.regions):
            return False
        region = self.regions[index]
        if (region.tensor, region.dtype, region.shape) != (tensor, dtype, shape):
            return False
        self.writes.append((index, row, data))
        return True

    @property
    def size(self) -> int:
        return self._end

    def write(self, memory: memoryview) -> None:
        for index, row, data in self.writes:
            region = self.regions[index]
            start = region.offset + row * region.nbytes
            memory[start : start + region.nbytes] = data
        self.writes.clear()


class _ItemPickler(pickle.Pickler):
    """Pickles one item's value: arrays that fit the layout become references to their rows,
    the others go to `fallback` (the transport's own reduction), if it takes them."""

    def __init__(
        self, file: io.BytesIO, layout: _Layout, row: int, fallback: Callable[[Any], Any]
    ) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.layout, self.row, self.fallback = layout, row, fallback
        self.arrays = 0
        self.misfits = 0

    def reducer_override(self, obj: Any) -> Any:
        tensor = _is_tensor(obj)
        if tensor is None:
            return NotImplemented
        index = self.arrays
        self.arrays += 1
        if self.layout.place(obj, index, self.row, tensor):
            return _row, (index,)
        self.misfits += 1
        return self.fallback(obj)


Packed = tuple[Any, tuple[Any, ...]]
"""A packed part: the handle `allocate` gave for its slab (None: no arrays), and the rest of
its state, for `unpack` with the slab's buffer."""


def pack(part: Part, allocate: Allocate, fallback: Callable[[Any], Any]) -> Packed:
    """`part` with its arrays copied into one slab from `allocate`. `fallback` reduces an array
    that does not fit (NotImplemented: pickled as usual). An item whose value cannot be
    pickled fails alone, saying why."""
    layout = _Layout(len(part.outcomes))
    blobs: list[bytes] = []
    pure: list[bool] = []
    outcomes: list[Outcome | None] = []
    for row, outcome in enumerate(part.outcomes):
        blob, fits = _pack_value(outcome, layout, row, fallback)
        layout.learning = not layout.regions
        if blob is None:
            outcomes.append(outcome if isinstance(outcome, Failed) else _unpicklable(fits))
            blobs.append(b"")
            pure.append(False)
            continue
        outcomes.append(None)
        blobs.append(blob)
        pure.append(fits)
    handle = None
    if layout.regions:
        handle, memory = allocate(layout.size)
        layout.write(memory)
        memory.release()
    metrics = [o.metrics for o in part.outcomes]
    return handle, (layout.regions, outcomes, blobs, pure, metrics, part.timed)


def _pack_value(
    outcome: Outcome, layout: _Layout, row: int, fallback: Callable[[Any], Any]
) -> tuple[bytes | None, Any]:
    """The item's pickled value and whether it is slab arrays alone; (None, why) when it
    failed or cannot be pickled. A value that is one array, fitting the layout, is `ROW`."""
    if not isinstance(outcome, Done):
        return None, None
    tensor = _is_tensor(outcome.value)
    single = tensor is not None and len(layout.regions) <= 1
    if single and layout.place(outcome.value, 0, row, bool(tensor)):
        return ROW, True
    buffer = io.BytesIO()
    pickler = _ItemPickler(buffer, layout, row, fallback)
    written = len(layout.writes)
    try:
        pickler.dump(outcome.value)
    except Exception as exc:
        del layout.writes[written:]
        return None, exc
    fits = pickler.misfits == 0 and pickler.arrays > 0 and _only_arrays(outcome.value)
    return buffer.getvalue(), fits


def in_memory(part: Part) -> Part:
    """`part` laid out as a transport would lay it out, in this process's memory: what a pool
    without workers gives a batch step, so its batches stack as the workers' do."""
    if part.rows:
        return part
    slabs: list[bytearray] = []

    def allocate(nbytes: int) -> tuple[int, memoryview]:
        slabs.append(bytearray(nbytes))
        return 0, memoryview(slabs[0])

    handle, state = pack(part, allocate, lambda obj: NotImplemented)
    return unpack(slabs[handle] if handle is not None else None, state)


def _unpicklable(exc: Any) -> Failed:
    return Failed(unsendable("the item's loaded value", exc))


def _only_arrays(value: Any) -> bool:
    """Whether `value` is arrays and tensors in dicts, tuples and lists, nothing else."""
    if isinstance(value, dict):
        return all(_only_arrays(v) for v in value.values())
    if isinstance(value, tuple | list):
        return bool(value) and all(_only_arrays(v) for v in value)
    return _is_tensor(value) is not None


# -- unpacking: where the part is received ---------------------------------------------------
_UNPACKING: ContextVar[tuple[list[Any], int | slice]] = ContextVar("graphbook_slab")
"""The rows of the part being unpickled, and which row (or rows) a reference stands for."""


ROW = b"row"
"""An item's value that is its row of the one region, as it stands (no pickle starts so)."""


def _row(index: int) -> Any:
    rows, at = _UNPACKING.get()
    return rows[index][at]


def unpack(buffer: Any, state: tuple[Any, ...]) -> Part:
    """The part `pack` packed, its arrays views of `buffer` (its slab, mapped here; None for
    a part without arrays)."""
    regions, outcomes, blobs, pure, metrics, timed = state
    rows = [_rows_of(buffer, region, len(outcomes)) for region in regions]
    part = Part([], timed)
    part.rows, part.blobs, part.pure = rows, blobs, pure
    for row, (outcome, blob) in enumerate(zip(outcomes, blobs, strict=True)):
        if outcome is None and blob == ROW:
            outcome = Done(rows[0][row])
        elif outcome is None:
            token = _UNPACKING.set((rows, row))
            try:
                outcome = Done(pickle.loads(blob))
            except Exception as exc:
                outcome, part.pure[row] = _unpicklable(exc), False
            finally:
                _UNPACKING.reset(token)
        if metrics[row]:
            object.__setattr__(outcome, "metrics", metrics[row])
        part.outcomes.append(outcome)
    return part


def _rows_of(buffer: Any, region: Region, items: int) -> Any:
    shape = (items, *region.shape)
    if region.tensor:
        import torch

        count = region.nbytes * items // max(region.dtype.itemsize, 1)
        flat = torch.frombuffer(buffer, dtype=region.dtype, count=count, offset=region.offset)
        return flat.view(shape)
    import numpy as np

    count = region.nbytes * items // region.dtype.itemsize
    return np.frombuffer(buffer, dtype=region.dtype, count=count, offset=region.offset).reshape(
        shape
    )


# -- arrays --------------------------------------------------------------------------------
def _is_tensor(obj: Any) -> bool | None:
    """True for a torch tensor a slab can hold, False for such a NumPy array, else None."""
    torch = sys.modules.get("torch")
    if torch is not None and type(obj) is torch.Tensor:
        ok = (
            obj.device.type == "cpu"
            and obj.layout == torch.strided
            and not obj.is_quantized
            and not obj.requires_grad
            and obj.numel() > 0
        )
        return True if ok else None
    numpy = sys.modules.get("numpy")
    if numpy is not None and type(obj) is numpy.ndarray:
        return False if (not obj.dtype.hasobject and obj.size > 0) else None
    return None


def _bytes_of(value: Any, tensor: bool) -> tuple[memoryview, Any, tuple[int, ...]]:
    """The array's bytes (contiguous, as a flat byte view), its dtype and shape."""
    if tensor:
        import torch

        if value.is_contiguous() and not (value.is_conj() or value.is_neg()):
            with contextlib.suppress(TypeError):  # a dtype NumPy lacks (bfloat16, ...)
                return value.numpy().data.cast("B"), value.dtype, tuple(value.shape)
        flat = value.detach().resolve_conj().resolve_neg().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy()
        return data.data.cast("B"), value.dtype, tuple(value.shape)
    import numpy as np

    data = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
    return data.data.cast("B"), value.dtype, tuple(value.shape)


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN
