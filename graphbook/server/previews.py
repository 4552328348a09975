"""Previews for the browser: the engine's previews, with images turned into media URLs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphbook.engine.preview import Limits, PreviewWalk
from graphbook.server.media import MediaStore

LIVE = Limits(depth=4, items=20, text=500)
"""Pushed with every event: small."""
FULL = Limits(depth=16, items=10_000, text=1_000_000)
"""Fetched on demand (GET /api/outputs)."""


class Previewer(PreviewWalk):
    """Turns node outputs into JSON-safe previews, images as media URLs; safe to call from the
    executor thread."""

    def __init__(self, media: MediaStore, limits: Limits = LIVE) -> None:
        super().__init__(limits)
        self.media = media

    def image(self, value: Any) -> Any:
        return self.media.image_preview(value)

    def mapping(self, value: Mapping[Any, Any], depth: int) -> Any:
        if value.get("type") == "image" and isinstance(value.get("value"), str):
            return {**self.plain_mapping(value, depth), **self._file_image(value["value"])}
        return self.plain_mapping(value, depth)

    def _file_image(self, path: str) -> dict[str, Any]:
        """An image file's URLs: the full image (from the roots only), else why not; and a
        thumbnail wherever it lies."""
        url, reason = self.media.file_link(path)
        shown: dict[str, Any] = {"url": url, "thumb": self.media.thumb_url(path)}
        if reason is not None:
            shown["outside"] = reason
        return shown
