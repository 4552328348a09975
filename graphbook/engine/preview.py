"""Previews of node outputs: JSON-safe, bounded in size, tensors and images summarised."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 4
MAX_ITEMS = 20
MAX_TEXT = 500


def preview(value: Any, depth: int = 0) -> Any:
    """A small JSON-safe picture of `value`, for the terminal, the browser and the logs."""
    if value is None or isinstance(value, bool | int | str):
        return value if not isinstance(value, str) else _text(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= MAX_DEPTH:
        return _text(repr(value))
    if isinstance(value, Mapping):
        items = list(value.items())
        shown = {str(k): preview(v, depth + 1) for k, v in items[:MAX_ITEMS]}
        if len(items) > MAX_ITEMS:
            shown["…"] = f"{len(items) - MAX_ITEMS} more keys"
        return shown
    if isinstance(value, list | tuple):
        shown_list = [preview(v, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            shown_list.append(f"… {len(value) - MAX_ITEMS} more")
        return shown_list
    return _special(value)


def _special(value: Any) -> Any:
    kind = type(value).__module__.split(".")[0]
    if kind == "torch" and hasattr(value, "shape"):
        return tensor_summary(value)
    if kind == "numpy" and hasattr(value, "shape"):
        return array_summary(value)
    if kind == "PIL" and hasattr(value, "size"):
        return {"type": "image", "size": list(value.size), "mode": value.mode}
    return _text(repr(value))


def tensor_summary(tensor: Any) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "type": "tensor",
        "shape": list(tensor.shape),
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "device": str(tensor.device),
    }
    if tensor.numel() and (tensor.is_floating_point() or not tensor.is_complex()):
        values = tensor.detach().float()
        summary.update(min=_num(values.min()), max=_num(values.max()), mean=_num(values.mean()))
    return summary


def array_summary(array: Any) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "type": "array",
        "shape": list(array.shape),
        "dtype": str(array.dtype),
    }
    if array.size and array.dtype.kind in "biuf":
        summary.update(min=_num(array.min()), max=_num(array.max()), mean=_num(array.mean()))
    return summary


def _num(value: Any) -> float | str:
    number = float(value)
    return round(number, 6) if math.isfinite(number) else str(number)


def _text(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"
