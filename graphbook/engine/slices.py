"""A model on the CPU runs on per-core slices of each batch at once, one torch thread each.

torch's own intra-op threads split every operation across the cores and wait for each other at
the end of it: they cost more CPU per image than one thread does, and the whole model stalls
whenever another process (a decoding worker) holds one of the cores. Independent slices only
share the cores. Every CPU model resource runs this way unless it opts out (its `cpu_slices`
parameter, or GRAPHBOOK_CPU_SLICES, set to 1; graphbook/engine/devices.py).

By default the number of slices is measured, not guessed: one per core, or one more. Which is
faster depends on the model (on 2 cores with 2 decoding workers at a lower priority,
bench/README.md: mobilenet_v3_small ran 1.10x as fast on 2 slices as on 3, resnet18 1.07x as
fast on 3: a spare slice fills the gap a thread leaves when it finishes first, and costs a
third thread's switching and cache misses). The two take turns on the first batches (`Tuner`)
and the one with the least time per item is kept. Slices keep at least MIN_SLICE items, since a
forward pass on one or two images wastes what batching buys.

The model stays the same object (its attributes, parameters and `isinstance` are untouched):
only its `forward` is replaced on the instance, and it falls back to one call on the whole
input for anything it cannot cut and put back together, and whenever slices could change what
the model computes or records: in training mode (batch norm would see slices' statistics) and
while any of its modules has a forward hook (a hook would see slices, not the batch).
"""

from __future__ import annotations

import logging
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import torch

LOGGER = logging.getLogger(__name__)
ModelT = TypeVar("ModelT", bound=torch.nn.Module)
MARK = "_graphbook_slices"
MIN_SLICE = 4
TRIALS = 2
"""Timed batches per candidate number of slices before the tuner keeps one."""


def cores() -> int:
    """The cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def default_slices() -> tuple[int, ...]:
    """The numbers of slices to try: one per core, and one more; none (1) on one core."""
    return (cores(), cores() + 1) if cores() > 1 else (1,)


def slice_on_cores(model: ModelT, parts: int = 0) -> ModelT:
    """Make `model(batch)` run on up to `parts` slices of the batch at once (0: the default,
    as many as there are cores or one more, whichever runs faster; see `Tuner`), each slice at
    least MIN_SLICE items.

    Only the first positional argument is cut, along its first dimension; the outputs (a tensor,
    or tuples, lists and dicts of tensors) are joined back along theirs. Sets torch's intra-op
    threads to one when it first cuts a batch, since each slice has a core of its own (a model
    only ever called on batches too small to cut keeps torch's threads). Returns the same model.
    """
    candidates = (parts,) if parts else default_slices()
    if max(candidates) < 2 or MARK in model.__dict__:
        return model
    sliced = Sliced(model.forward, candidates)
    try:
        model.forward = sliced
    except (AttributeError, RuntimeError, TypeError) as exc:  # a TorchScript module, say
        LOGGER.info("%s runs whole batches: its forward cannot be replaced (%s)", _name(model), exc)
        return model
    model.__dict__[MARK] = sliced
    return model


class Tuner:
    """Picks the number of slices by timing the model: the candidates take turns on the first
    batches that can be cut into any of them (the first round not counted: threads start and
    torch chooses its kernels), then after TRIALS each the one with the least median time per
    item is kept for good."""

    def __init__(self, candidates: Sequence[int]) -> None:
        self.candidates = tuple(candidates)
        self.chosen: int | None = candidates[0] if len(candidates) == 1 else None
        self.times: dict[int, list[float]] = {c: [] for c in candidates}
        self._turn = 0

    def next(self, items: int) -> int:
        """The slices for a batch of `items`."""
        if self.chosen is not None or items // MIN_SLICE < max(self.candidates):
            return self.chosen or max(self.candidates)
        return self._turn_of

    @property
    def _turn_of(self) -> int:
        """The candidate whose turn it is."""
        return self.candidates[self._turn % len(self.candidates)]

    def record(self, parts: int, seconds: float, items: int) -> None:
        """A batch of `items` took `seconds` on the `parts` slices `next` gave it."""
        if self.chosen is not None or parts != self._turn_of:
            return
        self._turn += 1
        if self._turn <= len(self.candidates):
            return  # the warm-up round
        self.times[parts].append(seconds / items)
        if all(len(times) >= TRIALS for times in self.times.values()):
            medians = {c: statistics.median(t) for c, t in self.times.items()}
            self.chosen = min(self.candidates, key=medians.__getitem__)
            LOGGER.info(
                "cpu slices: %d (ms per item: %s)",
                self.chosen,
                ", ".join(f"{c} slices {m * 1e3:.2f}" for c, m in medians.items()),
            )


class Sliced:
    """The replacement `forward`: cuts, runs the slices in threads, joins."""

    def __init__(self, forward: Callable[..., Any], candidates: Sequence[int]) -> None:
        self.forward = forward
        self.candidates = tuple(candidates)
        self.tuner = Tuner(self.candidates)
        self.whole = False  # set once an output could not be joined: from then on, no slicing
        self.cut = False  # set once a batch was cut
        self._threads = ThreadPoolExecutor(max(candidates), thread_name_prefix="graphbook-slice")

    @property
    def parts(self) -> int:
        """The slices a full batch is cut into: the tuner's choice, or the most it may try."""
        return self.tuner.chosen or max(self.candidates)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        first = args[0] if args else None
        if self.whole or not isinstance(first, torch.Tensor) or first.dim() == 0:
            return self.forward(*args, **kwargs)
        if not sliceable(getattr(self.forward, "__self__", None)):
            return self.forward(*args, **kwargs)
        items = first.shape[0]
        wanted = self.tuner.next(items)
        parts = min(wanted, items // MIN_SLICE)
        if parts < 2:
            return self.forward(*args, **kwargs)
        if not self.cut:
            self.cut = True
            torch.set_num_threads(1)  # before the slice threads start: they take it on
        modes = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
        rest = args[1:]

        def run(piece: torch.Tensor) -> Any:
            # grad and inference mode belong to a thread: take on the caller's
            with torch.inference_mode(modes[1]), torch.set_grad_enabled(modes[0]):
                return self.forward(piece, *rest, **kwargs)

        began = time.perf_counter()
        outputs = list(self._threads.map(run, first.tensor_split(parts)))
        if parts == wanted:
            self.tuner.record(parts, time.perf_counter() - began, items)
        try:
            return join(outputs)
        except TypeError as exc:
            LOGGER.warning("cpu_slices: %s; running the model on whole batches instead", exc)
            self.whole = True
            return self.forward(*args, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        return {"forward": self.forward, "candidates": self.candidates, "whole": self.whole}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["forward"], state["candidates"])  # type: ignore[misc]
        self.whole = state["whole"]


def sliceable(model: Any) -> bool:
    """Whether slices compute what the whole batch would: the model is in eval mode and none
    of its modules has forward hooks (hooks would each see a slice)."""
    if not isinstance(model, torch.nn.Module):
        return True
    for module in model.modules():
        if module.training or module._forward_hooks or module._forward_pre_hooks:
            return False
    global_hooks = torch.nn.modules.module._global_forward_hooks
    return not global_hooks and not torch.nn.modules.module._global_forward_pre_hooks


def _name(model: Any) -> str:
    return type(model).__name__


def join(outputs: list[Any]) -> Any:
    """Put the slices' outputs back together, keeping their structure."""
    first = outputs[0]
    if isinstance(first, torch.Tensor) and first.dim() > 0:
        return torch.cat(outputs)
    if isinstance(first, tuple | list) and all(len(o) == len(first) for o in outputs):
        joined = [join(list(group)) for group in zip(*outputs, strict=True)]
        if hasattr(first, "_fields"):  # a named tuple
            return type(first)(*joined)
        return type(first)(joined)
    if isinstance(first, Mapping):
        parts = {key: join([o[key] for o in outputs]) for key in first}
        return parts if type(first) is dict else type(first)(parts)  # type: ignore[call-arg]
    raise TypeError(f"cannot join outputs of type {type(first).__name__} from slices of a batch")
