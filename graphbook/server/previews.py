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
            return {**self.plain_mapping(value, depth), "url": self.media.file_url(value["value"])}
        return self.plain_mapping(value, depth)
