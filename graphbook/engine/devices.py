"""Putting resource values where they run: a model goes to eval mode on its chosen device."""

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
    """If `value` is a torch module, set eval mode and move it to the `device` parameter."""
    if not is_module(value):
        return value
    value.eval()
    if "device" in params:
        value.to(choose_device(params["device"]))
    return value


def is_module(value: Any) -> bool:
    torch = sys.modules.get("torch")  # nothing can be a Module if torch was never imported
    return torch is not None and isinstance(value, torch.nn.Module)
