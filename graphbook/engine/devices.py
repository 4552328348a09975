"""Putting resource values where they run: a model goes to eval mode on its chosen device; on
the CPU it runs on per-core slices of each batch (graphbook/engine/slices.py) unless its
resource or the environment opts out; on a GPU, CPU batches handed to it are copied through
pinned memory on a side stream (graphbook/engine/feed.py)."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

LOGGER = logging.getLogger(__name__)
SLICES_ENV = "GRAPHBOOK_CPU_SLICES"
"""Slices for every CPU model resource that has no `cpu_slices` parameter of its own: unset or
`0` is one per core or one more, whichever runs faster (graphbook/engine/slices.py), `1` turns
slicing off (the model runs as it is)."""


def choose_device(name: str | None) -> str:
    """`auto` (or nothing) picks CUDA when present, else CPU; other names are used as given."""
    if name in (None, "", "auto"):
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(name)


def prepare(value: Any, params: dict[str, Any]) -> Any:
    """If `value` is a torch module, set eval mode and move it to the `device` parameter. On
    the CPU, cut its batches into slices run at once (`cpu_slices` parameter, else the
    GRAPHBOOK_CPU_SLICES variable, else 0: one slice per core or one more, timed; 1 is off). On a
    CUDA device, feed it CPU batches through pinned memory. A `devices` parameter naming more
    than one device (`all`: every GPU) replicates it on each, dealing each batch between them."""
    if not is_module(value):
        return value
    value.eval()
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
