"""Images in an agent's answers: the images an output's preview shows, as MCP image content
(small JPEG thumbnails, a bounded number), and their links made absolute where there is an
HTTP server to follow them (over stdio a link means nothing, so it is left out)."""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from aiohttp import web
from mcp.server.mcpserver import Context
from mcp.types import ImageContent

from graphbook.server.errors import ServerError
from graphbook.server.keys import MEDIA, RUN_MANAGER
from graphbook.server.media import MediaStore
from graphbook.server.thumbnails import SIZE

MAX_IMAGES = 8
"""Images one answer may carry."""
MEMORY = "/api/media/mem/"
LINKS = ("url", "thumb")


class Pictures:
    """The images of previews, made into content for one answer, at most `limit` of them."""

    def __init__(self, app: web.Application, base: str | None, limit: int) -> None:
        self.media: MediaStore = app[MEDIA]
        self.runs = app[RUN_MANAGER]
        self.base = base
        """The server's address (`http://host:port`) the agent reached it at; None on stdio."""
        self.limit = min(limit, MAX_IMAGES)
        self.shown: list[ImageContent] = []

    async def show(self, preview: Any) -> Any:
        """`preview` with its images' links made absolute (or left out), each image shown
        marked with its place among the answer's images (`"image": N`, from 1)."""
        for image in list(_images(preview)):
            if len(self.shown) < self.limit:
                picture = await self.thumbnail(image)
                if picture is not None:
                    self.shown.append(picture)
                    image["image"] = len(self.shown)
            for link in LINKS:
                if self.base is None:  # a link, and why there is none, mean nothing here
                    image.pop(link, None)
                    image.pop("outside", None)
                elif isinstance(image.get(link), str):
                    image[link] = self.base + image[link]
        return preview

    async def thumbnail(self, image: dict[str, Any]) -> ImageContent | None:
        """A JPEG of at most SIZE pixels a side: of an image a run keeps (fetched from its run
        host as the media route fetches it), or of an image file an output names (as the
        thumbnails route draws it); None if neither is there any more."""
        url, thumb = image.get("url"), image.get("thumb")
        if isinstance(url, str) and url.startswith(MEMORY):
            try:
                kept = await self.runs.image(url[len(MEMORY) :])
            except ServerError:  # the run host is restarting
                return None
            return await asyncio.to_thread(_from_png, kept) if kept is not None else None
        if isinstance(thumb, str):
            return await asyncio.to_thread(self._file_thumbnail, thumb)
        return None

    def _file_thumbnail(self, thumb: str) -> ImageContent | None:
        query = parse_qs(urlsplit(thumb).query)
        thumbnails = self.media.thumbnails
        try:
            file = thumbnails.check(query["path"][0], query["sig"][0])
            return _content(Path(thumbnails.make(file)).read_bytes())
        except (KeyError, ServerError, OSError):
            return None


def _from_png(data: bytes) -> ImageContent | None:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            return _content(_jpeg(image))
    except (OSError, ValueError):  # not a picture PIL can draw
        return None


def _images(value: Any) -> Iterator[dict[str, Any]]:
    """The image previews in a preview (dicts with `"type": "image"`), depth first."""
    if isinstance(value, dict):
        if value.get("type") == "image":
            yield value
            return
        for inner in value.values():
            yield from _images(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _images(inner)


def _jpeg(image: Any) -> bytes:
    small = image.copy()
    small.thumbnail((SIZE, SIZE))
    buffer = io.BytesIO()
    small.convert("RGB").save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()


def _content(data: bytes) -> ImageContent:
    return ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type="image/jpeg")


def server_address(ctx: Context[Any, Any] | None) -> str | None:
    """`http://host:port` as the agent's request named the server (its Host header), or None
    without one (stdio)."""
    try:
        headers = ctx.headers if ctx is not None else None
    except ValueError:  # not in a request
        return None
    host = headers.get("host") if headers is not None else None
    return f"http://{host}" if isinstance(host, str) and host else None
