"""Values across Ray without copying their tensors: CPU tensors travel as numpy arrays.

Ray pickles a torch tensor through torch's own reduction, which copies its bytes into the
pickle and copies them out again on the other side (for a decoded 224x224 image, 600 KB each
way). A numpy array instead travels as an out-of-band buffer: written once into Ray's object
store, and read in place by a process on the same machine (zero-copy). `pack` pickles a value
with cloudpickle (as Ray would), turning each CPU tensor into such an array; `unpack` makes the
tensors again, as views on the object store's memory.

A value can also stay where it was made (`Kept`: a load's result, a batch's dump arguments):
`pack_refs` sends only its place, and the object refs beside the pickle as a list that Ray
serializes itself (counting their references); `unpack_refs` on an actor fetches them from the
object store (from whichever node holds them, never through the driver) and puts the values in.

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
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ray import cloudpickle

from graphbook.engine import slabs

Packed = tuple[bytes, list[pickle.PickleBuffer]]
"""The pickled value, and the buffers of its arrays (Ray stores these without copying)."""


@dataclass(frozen=True)
class Kept:
    """A value left in Ray's object store where a Ray actor made it: item `index` of the packed
    list that `ref` names. The driver hands it on without reading it; the actor that gets it
    in a task reads it (`unpack_refs`). `node`: the Ray node that made it."""

    ref: Any
    index: int
    node: str = ""
    spread: bool = False
    """It stands for a task's whole arguments (a tuple), not for one of them."""


@dataclass(frozen=True)
class Spread:
    """What a `Kept` with `spread` becomes on the actor: the task's arguments."""

    args: tuple[Any, ...]


def pack(value: Any) -> Packed:
    """Pickle `value`, its CPU tensors as numpy arrays and every array's bytes out of band."""
    packed, refs = pack_refs(value)
    if refs:
        raise TypeError("a value kept in Ray's object store travels with pack_refs, not pack")
    return packed


def pack_refs(value: Any) -> tuple[Packed, list[Any]]:
    """`pack`, with each `Kept` in `value` sent as its place: the object refs come beside the
    pickle, to be passed to Ray as an argument of their own (Ray then counts them)."""
    buffers: list[pickle.PickleBuffer] = []
    file = io.BytesIO()
    pickler = _Pickler(file, protocol=5, buffer_callback=buffers.append)
    pickler.dump(value)
    return (file.getvalue(), buffers), pickler.refs


def unpack(packed: Packed) -> Any:
    """The value `pack` pickled; its arrays and tensors are views on the buffers, not copies."""
    data, buffers = packed
    return pickle.loads(data, buffers=buffers)


def unpack_refs(packed: Packed, refs: list[Any]) -> Any:
    """On a Ray actor: the value `pack_refs` pickled, each `Kept` replaced by its value,
    fetched from the object store (Ray's errors when one is lost with its node propagate)."""
    if not refs:
        return unpack(packed)
    import ray

    token = _RESOLVED.set([unpack(group) for group in ray.get(list(refs))])
    try:
        return unpack(packed)
    finally:
        _RESOLVED.reset(token)


def spread(args: Any) -> tuple[Any, ...]:
    """A task's arguments as the function takes them (a `Spread` opened)."""
    if len(args) == 1 and isinstance(args[0], Spread):
        return args[0].args
    return tuple(args)


def size(packed: Packed) -> int:
    """Bytes of a packed value: its pickle and its buffers."""
    data, buffers = packed
    return len(data) + sum(memoryview(b).nbytes for b in buffers)


_RESOLVED: ContextVar[list[Any]] = ContextVar("graphbook_resolved")
"""The kept groups `unpack_refs` fetched, while it unpickles."""


def _kept(group: int, index: int, spread: bool) -> Any:
    value = _RESOLVED.get()[group][index]
    return Spread(tuple(value)) if spread else value


_CloudPickler: Any = cloudpickle.Pickler  # untyped: Ray's vendored cloudpickle


class _Pickler(_CloudPickler):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refs: list[Any] = []

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is Kept:
            if obj.ref not in self.refs:
                self.refs.append(obj.ref)
            return _kept, (self.refs.index(obj.ref), obj.index, obj.spread)
        if type(obj) is slabs.Part:
            return _slab_part(obj, self.reducer_override)
        torch = sys.modules.get("torch")
        if torch is not None and type(obj) is torch.Tensor:
            array = _as_array(obj)
            if array is not None:
                return _tensor, (array,)
        return super().reducer_override(obj)


def _slab_part(part: slabs.Part, reduce: Any) -> Any:
    """A batch's part with its arrays laid out as the batch in one array, which Ray keeps in
    its object store as one buffer (graphbook/engine/slabs.py), read in place where it lands."""
    import numpy

    made: list[Any] = []

    def allocate(nbytes: int) -> tuple[int, memoryview]:
        made.append(numpy.empty(nbytes, dtype=numpy.uint8))
        return 0, made[0].data.cast("B")

    handle, state = slabs.pack(part, allocate, reduce)  # a misfit goes as it would alone
    return _part, (made[handle] if handle is not None else None, state)


def _part(slab: Any, state: tuple[Any, ...]) -> slabs.Part:
    if slab is not None:
        import torch

        global _warned
        if not _warned:  # see _quiet_once
            _quiet_once(torch)
            _warned = True
    return slabs.unpack(slab, state)


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
        torch.frombuffer(read_only, dtype=torch.uint8)
