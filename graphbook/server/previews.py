"""Previews for the browser: the engine's previews, with images given their URLs: an image a node
made is kept here (media.py) and served by id, an image record's file by its path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphbook.engine.preview import Limits, PreviewWalk
from graphbook.previews import ImagePreview, Preview
from graphbook.server.media import MediaStore

LIVE = Limits(depth=4, items=20, text=500)
"""Pushed with every event: small."""
FULL = Limits(depth=16, items=10_000, text=1_000_000)
"""Fetched on demand (GET /api/outputs)."""
RECORD = frozenset({"type", "value"})
"""The keys of an image record that the preview holds as its own fields."""


class Previewer(PreviewWalk):
    """Turns node outputs into JSON-safe previews, images with their URLs; safe to call from the
    executor thread."""

    def __init__(self, media: MediaStore, limits: Limits = LIVE) -> None:
        super().__init__(limits)
        self.media = media

    def image(self, value: Any) -> Preview:
        return self.media.image_preview(value)

    def mapping(self, value: Mapping[Any, Any], depth: int) -> Preview:
        path = value.get("value")
        if value.get("type") == "image" and isinstance(path, str):
            rest = {k: v for k, v in value.items() if k not in RECORD}
            return self._file_image(path, self.plain_mapping(rest, depth))
        return self.plain_mapping(value, depth)

    def _file_image(self, path: str, fields: dict[str, Preview]) -> ImagePreview:
        """An image file's URLs: the full image (from the roots only), else why not; and a
        thumbnail wherever it lies."""
        url, reason = self.media.file_link(path)
        thumb = self.media.thumb_url(path)
        return ImagePreview(url, thumb, reason, value=path, fields=fields)
