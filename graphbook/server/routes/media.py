"""/api/media: images runs made (PNG, from the run host that keeps them), image files under the
media roots, and thumbnails of image files outputs named and those files whole (signed URLs;
media.py keeps and finds them)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from graphbook.server.errors import ServerError, not_found
from graphbook.server.keys import MEDIA, RUN_MANAGER
from graphbook.server.media import IMAGE_SUFFIXES

routes = web.RouteTableDef()


@routes.get("/api/media/mem/{media_id}")
async def memory_image(request: web.Request) -> web.Response:
    data = await request.app[RUN_MANAGER].image(request.match_info["media_id"])
    if data is None:
        raise not_found("no such image (images are kept for the latest outputs only)")
    return web.Response(body=data, content_type="image/png")


@routes.get("/api/media/thumb")
async def thumbnail(request: web.Request) -> web.FileResponse:
    query = request.query
    if "path" not in query or "sig" not in query:
        raise ServerError(400, "bad_message", "give the path and sig a gallery row's thumb has")
    thumbnails = request.app[MEDIA].thumbnails
    path, signature = query["path"], query["sig"]
    made = await asyncio.to_thread(lambda: thumbnails.make(thumbnails.check(path, signature)))
    return web.FileResponse(made, headers={"Content-Type": "image/jpeg"})


@routes.get("/api/media/file/{root}/{path:.+}")
async def file_image(request: web.Request) -> web.FileResponse:
    path = request.app[MEDIA].file(request.match_info["root"], request.match_info["path"])
    return web.FileResponse(path, headers={"Content-Type": IMAGE_SUFFIXES[path.suffix.lower()]})


@routes.get("/api/media/image")
async def named_image(request: web.Request) -> web.FileResponse:
    """An image file an output named, whole, by the signed URL its preview carries."""
    query = request.query
    if "path" not in query or "sig" not in query:
        raise ServerError(400, "bad_message", "give the path and sig an image preview's url has")
    path = request.app[MEDIA].thumbnails.check_full(query["path"], query["sig"])
    kind = IMAGE_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ServerError(400, "bad_path", f"{path.name!r} is not an image file")
    return web.FileResponse(path, headers={"Content-Type": kind})
