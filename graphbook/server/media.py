"""Media: images nodes produce (kept in memory where the run made them, encoded as PNG once, when
first asked for), image files under roots, and thumbnails of image files anywhere
(thumbnails.py)."""

from __future__ import annotations

import io
import secrets
import threading
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from graphbook.previews import ImagePreview
from graphbook.server.errors import ServerError, not_found
from graphbook.server.paths import Root
from graphbook.server.thumbnails import Thumbnails

IMAGE_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
}
CAPACITY = 1024
"""In-memory images kept for the browser; the oldest are dropped first."""


class MediaStore:
    """Images by id for `/api/media/mem/{id}`, and URLs for image files under the roots.

    The run host keeps the images its runs make, as the nodes made them, and encodes one (PNG)
    the first time it is asked for, keeping the bytes in its place; nothing crosses to the
    server until someone looks. The server's store keeps the bytes it fetched (`put`)."""

    def __init__(
        self,
        roots: dict[str, Path],
        capacity: int = CAPACITY,
        *,
        secret: bytes | None = None,
        data: Path | None = None,
    ) -> None:
        self.roots = {name: Root(folder) for name, folder in roots.items()}
        self.capacity = capacity
        self.thumbnails = Thumbnails(secret or secrets.token_bytes(32), data)
        """Thumbnail URLs signed here; made into `data` (the server's data folder)."""
        self._images: OrderedDict[str, Any] = OrderedDict()
        """An image as a node made it, or its PNG bytes once they were asked for."""
        self._ids: dict[int, str] = {}
        self._lock = threading.Lock()

    def image_preview(self, image: Any) -> ImagePreview:
        url = f"/api/media/mem/{self.add(image)}"
        return ImagePreview(url, size=list(image.size), mode=str(getattr(image, "mode", "")))

    def add(self, image: Any) -> str:
        with self._lock:
            known = self._ids.get(id(image))
            if known is not None and self._images.get(known) is image:
                self._images.move_to_end(known)
                return known
            media_id = uuid.uuid4().hex[:16]
            self._images[media_id] = image
            self._ids[id(image)] = media_id
            while len(self._images) > self.capacity:
                _, old = self._images.popitem(last=False)
                self._ids.pop(id(old), None)
            return media_id

    def put(self, media_id: str, data: bytes) -> None:
        """Keep an image's PNG bytes under the id the run host gave it."""
        with self._lock:
            self._images[media_id] = data
            while len(self._images) > self.capacity:
                _, old = self._images.popitem(last=False)
                self._ids.pop(id(old), None)

    def encoded(self, media_id: str) -> bytes | None:
        """The image's PNG bytes, encoded the first time they are asked for (then kept in the
        image's place); None if it is not kept."""
        with self._lock:
            image = self._images.get(media_id)
        if image is None or isinstance(image, bytes):
            return image
        data = png_bytes(image)
        with self._lock:
            if self._images.get(media_id) is image:
                self._images[media_id] = data
                self._ids.pop(id(image), None)  # its id may be another image's once it is gone
        return data

    def file_url(self, path: str) -> str | None:
        """The URL of an image file, if it lies under one of the roots."""
        return self.file_link(path)[0]

    def file_link(self, path: str) -> tuple[str | None, str | None]:
        """(the URL of an image file, None) or (None, why not): under one of the roots, its
        place there; elsewhere (a folder a run read), a URL signed for that file alone."""
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            return None, f"the path cannot be resolved ({exc})"
        if resolved.suffix.lower() not in IMAGE_SUFFIXES:
            known = ", ".join(IMAGE_SUFFIXES)
            return None, f"{resolved.suffix or 'no suffix'} is not an image file type ({known})"
        for name, root in self.roots.items():
            if root.contains(resolved):
                return f"/api/media/file/{name}/{quote(root.relative(resolved))}", None
        return self.thumbnails.full_url(str(resolved)), None

    def thumb_url(self, path: str) -> str | None:
        """A signed URL of a small picture of an image file anywhere on disk."""
        suffix = Path(path).suffix.lower()
        return self.thumbnails.url(path) if suffix in IMAGE_SUFFIXES else None

    def link(self, image: Any) -> tuple[str | None, str | None, str | None]:
        """(thumbnail URL, full URL, why there is no full URL) of an image record's file, or
        of an image in memory (kept here, its URL both)."""
        if isinstance(image, dict):
            path = str(image["value"])
            url, reason = self.file_link(path)
            return self.thumb_url(path), url, reason
        memory = f"/api/media/mem/{self.add(image)}"
        return memory, memory, None

    def file(self, root_name: str, relative: str) -> Path:
        root = self.roots.get(root_name)
        if root is None:
            raise not_found(f"no media root {root_name!r}; roots: {', '.join(self.roots)}")
        path = root.resolve(relative)
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            raise ServerError(400, "bad_path", f"{relative!r} is not an image file")
        if not path.is_file():
            raise not_found(f"no image {relative!r} under {root_name}")
        return path


def png_bytes(image: Any) -> bytes:
    buffer = io.BytesIO()
    shown = image if image.mode in ("RGB", "RGBA", "L", "LA", "P", "1") else image.convert("RGB")
    shown.save(buffer, format="PNG")
    return buffer.getvalue()
