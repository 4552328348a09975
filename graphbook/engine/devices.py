"""Putting resource values where they run: a model goes to eval mode on its chosen device; on
the CPU it runs on per-core slices of each batch (graphbook/engine/slices.py) unless its
resource or the environment opts out; on a GPU, CPU batches handed to it are copied through
pinned memory on a side stream (graphbook/engine/feed.py).

A model that is being trained keeps the mode its node's code set (Graphbook 0.13 never changed
it, and its training workflows rely on that): one whose resource says so (a `trains` parameter
set true, or `Trains = True` on the class) is never put in eval mode, and one whose parameters
an optimizer holds when the run starts (a resource's value, or an attribute of a step, as
0.13's MNIST example builds its SGD) is put back in the mode it had (`resume_training`). Slices
never cut a batch of a model in training mode."""

from __future__ import annotations

import logging
import os
import sys
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from graphbook.resources import choose_device

LOGGER = logging.getLogger(__name__)
SLICES_ENV = "GRAPHBOOK_CPU_SLICES"
"""Slices for every CPU model resource that has no `cpu_slices` parameter of its own: unset or
`0` is one per core or one more, whichever runs faster (graphbook/engine/slices.py), `1` turns
slicing off (the model runs as it is)."""


_PUT_IN_EVAL: weakref.WeakKeyDictionary[Any, list[Any]] = weakref.WeakKeyDictionary()
"""A model put in eval mode by `prepare` -> its modules that were in training mode."""


def trains(instance: Any, params: Mapping[str, Any]) -> bool:
    """Whether a resource says its model is trained: a `trains` parameter set true, or a
    `Trains` attribute (a class's `Trains = True`)."""
    return bool(params.get("trains", getattr(instance, "Trains", False)))


def prepare(value: Any, params: dict[str, Any], training: bool = False) -> Any:
    """If `value` is a torch module, set eval mode (unless `training`: the resource trains it)
    and move it to the `device` parameter. On the CPU, cut its batches into slices run at once
    (`cpu_slices` parameter, else the GRAPHBOOK_CPU_SLICES variable, else 0: one slice per core
    or one more, timed; 1 is off). On a CUDA device, feed it CPU batches through pinned memory.
    A `devices` parameter naming more than one device (`all`: every GPU) replicates it on each,
    dealing each batch between them."""
    if not is_module(value):
        return value
    if not training:
        was_training = [module for module in value.modules() if module.training]
        value.eval()
        if was_training:
            _PUT_IN_EVAL[value] = was_training
    if params.get("devices"):  # replicas on several devices (graphbook/engine/replicas.py)
        from graphbook.engine.replicas import devices_of, replicate

        names = devices_of(params["devices"])
        if len(names) > 1:
            return replicate(value, names)
        params = {**params, "device": names[0]}
    if "device" in params:
        value.to(choose_device(params["device"]))
    if on_cpu(value):
        slices = cpu_slices(params)
        if slices != 1:
            from graphbook.engine.slices import slice_on_cores

            slice_on_cores(value, slices)
    elif on_cuda(value):
        from graphbook.engine.feed import feed_on_device

        feed_on_device(value)
    return value


def put_in_eval(value: Any) -> bool:
    """Whether `prepare` put this model in eval mode from training mode (and it stays so)."""
    return is_module(value) and value in _PUT_IN_EVAL


def resume_training(values: Mapping[str, Any], holders: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Put back in training mode each model of `values` (resource values by node id) that
    `prepare` put in eval mode and whose parameters an optimizer holds: a value of `values`, or
    an attribute of a node of `holders` (steps by node id). Returns (model's node, optimizer's
    node) for each. A run with no such model never touches torch: another thread may be
    importing it that moment (the module half made), as when a server's other run starts."""
    if not any(put_in_eval(model) for model in values.values()):
        return []
    import torch

    optimizers = [
        (node_id, value)
        for node_id, value in _candidates(values, holders)
        if isinstance(value, torch.optim.Optimizer)
    ]
    resumed: list[tuple[str, str]] = []
    for model_id, model in values.items():
        if not put_in_eval(model):
            continue
        weights = {id(p) for p in model.parameters()}
        for holder, optimizer in optimizers:
            held = (p for group in optimizer.param_groups for p in group["params"])
            if any(id(p) in weights for p in held):
                for module in _PUT_IN_EVAL.pop(model):
                    module.training = True
                resumed.append((model_id, holder))
                break
    return resumed


def _candidates(values: Mapping[str, Any], holders: Mapping[str, Any]) -> Iterable[tuple[str, Any]]:
    yield from values.items()
    for node_id, holder in holders.items():
        for value in getattr(holder, "__dict__", {}).values():
            yield node_id, value


def cpu_slices(params: dict[str, Any]) -> int:
    """The slices asked for: the resource's `cpu_slices`, else GRAPHBOOK_CPU_SLICES, else 0."""
    given = params.get("cpu_slices")
    source = "the cpu_slices parameter"
    if given is None:
        given, source = os.environ.get(SLICES_ENV) or 0, SLICES_ENV
    try:
        slices = int(given)
    except (TypeError, ValueError):
        slices = -1
    if slices < 0:
        raise ValueError(
            f"{source} is {given!r}; give a whole number: 0 (one slice per core or one more, "
            "timed), 1 (no slicing) or more"
        )
    return slices


def on_cpu(module: Any) -> bool:
    """Whether the module's weights are on the CPU (a module without weights counts)."""
    return all(p.device.type == "cpu" for p in module.parameters())


def on_cuda(module: Any) -> bool:
    """Whether the module has weights and all of them are on one CUDA device."""
    devices = {(p.device.type, p.device.index) for p in module.parameters()}
    return len(devices) == 1 and next(iter(devices))[0] == "cuda"


def is_module(value: Any) -> bool:
    torch = sys.modules.get("torch")  # nothing can be a Module if torch was never imported
    return torch is not None and isinstance(value, torch.nn.Module)
