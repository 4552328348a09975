"""Previews for the browser: the engine's previews, with images turned into media URLs."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphbook.engine.preview import array_summary, tensor_summary
from graphbook.server.media import MediaStore


@dataclass(frozen=True)
class Limits:
    depth: int
    items: int
    text: int


LIVE = Limits(depth=4, items=20, text=500)
"""Pushed with every event: small."""
FULL = Limits(depth=16, items=10_000, text=1_000_000)
"""Fetched on demand (GET /api/outputs)."""


class Previewer:
    """Turns node outputs into JSON-safe previews; safe to call from the executor thread."""

    def __init__(self, media: MediaStore, limits: Limits = LIVE) -> None:
        self.media = media
        self.limits = limits

    def __call__(self, value: Any) -> Any:
        return self.preview(value, 0)

    def preview(self, value: Any, depth: int) -> Any:
        if value is None or isinstance(value, bool | int):
            return value
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if _is_image(value):
            return self.media.image_preview(value)
        if depth >= self.limits.depth:
            return self._text(repr(value))
        if isinstance(value, Mapping):
            return self._mapping(value, depth)
        if isinstance(value, list | tuple):
            return self._sequence(value, depth)
        return self._leaf(value)

    def _mapping(self, value: Mapping[Any, Any], depth: int) -> Any:
        if value.get("type") == "image" and isinstance(value.get("value"), str):
            return {**self._plain_mapping(value, depth), **self._file_image(value["value"])}
        return self._plain_mapping(value, depth)

    def _plain_mapping(self, value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        items = list(value.items())
        shown = {str(k): self.preview(v, depth + 1) for k, v in items[: self.limits.items]}
        if len(items) > self.limits.items:
            shown["…"] = f"{len(items) - self.limits.items} more keys"
        return shown

    def _file_image(self, path: str) -> dict[str, Any]:
        """An image file's URLs: the full image (from the roots only), else why not; and a
        thumbnail wherever it lies."""
        url, reason = self.media.file_link(path)
        shown: dict[str, Any] = {"url": url, "thumb": self.media.thumb_url(path)}
        if reason is not None:
            shown["outside"] = reason
        return shown

    def _sequence(self, value: list[Any] | tuple[Any, ...], depth: int) -> list[Any]:
        shown = [self.preview(v, depth + 1) for v in value[: self.limits.items]]
        if len(value) > self.limits.items:
            shown.append(f"… {len(value) - self.limits.items} more")
        return shown

    def _leaf(self, value: Any) -> Any:
        kind = type(value).__module__.split(".")[0]
        if kind == "torch" and hasattr(value, "shape"):
            return tensor_summary(value)
        if kind == "numpy" and hasattr(value, "shape"):
            return array_summary(value)
        return self._text(repr(value))

    def _text(self, text: str) -> str:
        return text if len(text) <= self.limits.text else text[: self.limits.text] + "…"


def _is_image(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "PIL" and hasattr(value, "size")
