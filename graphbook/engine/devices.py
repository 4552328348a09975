"""Putting resource values where they run: a model goes to eval mode on its chosen device, and
on the CPU, when its resource asks (`cpu_slices`), runs on per-core slices of each batch."""

from __future__ import annotations

import sys
from typing import Any


def choose_device(name: str | None) -> str:
    """`auto` (or nothing) picks CUDA when present, else CPU; other names are used as given."""
    if name in (None, "", "auto"):
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(name)


def prepare(value: Any, params: dict[str, Any]) -> Any:
    """If `value` is a torch module, set eval mode and move it to the `device` parameter; on
    the CPU, with a `cpu_slices` parameter other than 1, cut its batches into slices run at
    once (graphbook/engine/slices.py; 0 is one slice per core)."""
    if not is_module(value):
        return value
    value.eval()
    if "device" in params:
        value.to(choose_device(params["device"]))
    slices = params.get("cpu_slices")
    if slices is not None and int(slices) != 1 and on_cpu(value):
        from graphbook.engine.slices import slice_on_cores

        slice_on_cores(value, int(slices))
    return value


def on_cpu(module: Any) -> bool:
    """Whether the module's weights are on the CPU (a module without weights counts)."""
    return all(p.device.type == "cpu" for p in module.parameters())


def is_module(value: Any) -> bool:
    torch = sys.modules.get("torch")  # nothing can be a Module if torch was never imported
    return torch is not None and isinstance(value, torch.nn.Module)
