"""Previews of node outputs: JSON-safe, bounded in size, tensors and images summarised as the
typed previews of graphbook/previews.py. A picture of a value, not the value:
graphbook/plain.py is the walk that keeps it whole."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphbook.previews import ImagePreview, Preview, TensorPreview

MAX_DEPTH = 4
MAX_ITEMS = 20
MAX_TEXT = 500


@dataclass(frozen=True)
class Limits:
    depth: int
    items: int
    text: int


SMALL = Limits(MAX_DEPTH, MAX_ITEMS, MAX_TEXT)


class PreviewWalk:
    """The one walk over a value that previews make: containers to `limits.depth`, the first
    `limits.items` of each, text cut at `limits.text`; tensors and arrays summarised. A front
    end that shows images its own way (the server: as media URLs) overrides `image` and
    `mapping`."""

    def __init__(self, limits: Limits = SMALL) -> None:
        self.limits = limits

    def __call__(self, value: Any) -> Preview:
        return self.preview(value, 0)

    def preview(self, value: Any, depth: int) -> Preview:
        if value is None or isinstance(value, bool | int):
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if is_image(value):
            return self.image(value)
        if depth >= self.limits.depth:
            return self.text(repr(value))
        if isinstance(value, Mapping):
            return self.mapping(value, depth)
        if isinstance(value, list | tuple):
            return self.sequence(value, depth)
        return self.leaf(value)

    def image(self, value: Any) -> Preview:
        return ImagePreview(size=list(value.size), mode=str(value.mode))

    def mapping(self, value: Mapping[Any, Any], depth: int) -> Preview:
        return self.plain_mapping(value, depth)

    def plain_mapping(self, value: Mapping[Any, Any], depth: int) -> dict[str, Preview]:
        items = list(value.items())
        shown = {str(k): self.preview(v, depth + 1) for k, v in items[: self.limits.items]}
        if len(items) > self.limits.items:
            shown["…"] = f"{len(items) - self.limits.items} more keys"
        return shown

    def sequence(self, value: list[Any] | tuple[Any, ...], depth: int) -> list[Preview]:
        shown = [self.preview(v, depth + 1) for v in value[: self.limits.items]]
        if len(value) > self.limits.items:
            shown.append(f"… {len(value) - self.limits.items} more")
        return shown

    def leaf(self, value: Any) -> Preview:
        kind = type(value).__module__.split(".")[0]
        if kind == "torch" and hasattr(value, "shape"):
            return tensor_summary(value)
        if kind == "numpy" and hasattr(value, "shape"):
            return array_summary(value)
        return self.text(repr(value))

    def text(self, text: str) -> str:
        return text if len(text) <= self.limits.text else text[: self.limits.text] + "…"


_SMALL_WALK = PreviewWalk()


def preview(value: Any, depth: int = 0) -> Preview:
    """A small JSON-safe picture of `value`, for the terminal, the browser and the logs."""
    return _SMALL_WALK.preview(value, depth)


def is_image(value: Any) -> bool:
    """A PIL image (told by its module, so PIL is not imported to ask)."""
    return type(value).__module__.split(".")[0] == "PIL" and hasattr(value, "size")


def tensor_summary(tensor: Any) -> TensorPreview:
    shape, dtype = list(tensor.shape), str(tensor.dtype).removeprefix("torch.")
    device = str(tensor.device)
    if not tensor.numel() or not (tensor.is_floating_point() or not tensor.is_complex()):
        return TensorPreview("tensor", shape, dtype, device)
    values = tensor.detach().float()
    low, high, mean = _num(values.min()), _num(values.max()), _num(values.mean())
    return TensorPreview("tensor", shape, dtype, device, low, high, mean)


def array_summary(array: Any) -> TensorPreview:
    shape, dtype = list(array.shape), str(array.dtype)
    if not array.size or array.dtype.kind not in "biuf":
        return TensorPreview("array", shape, dtype)
    low, high, mean = _num(array.min()), _num(array.max()), _num(array.mean())
    return TensorPreview("array", shape, dtype, None, low, high, mean)


def _num(value: Any) -> float | str:
    number = float(value)
    return round(number, 6) if math.isfinite(number) else str(number)
