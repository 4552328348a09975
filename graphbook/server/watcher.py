"""The nodes folder: loaded as the app starts, then watched: a saved node file reloads, and
every client hears of it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web
from watchfiles import awatch

from graphbook.server.keys import CATALOG, HUB, SETTINGS

logger = logging.getLogger(__name__)


async def watch(app: web.Application, stop: asyncio.Event) -> None:
    settings, catalog, hub = app[SETTINGS], app[CATALOG], app[HUB]
    folder = settings.nodes
    async for changes in awatch(
        folder,
        stop_event=stop,
        debounce=400,
        step=50,
        force_polling=settings.watch_polling,
        poll_delay_ms=200,
    ):
        paths = [Path(path) for _, path in changes]
        try:
            message = await catalog.reload(paths)
        except Exception:  # reloading must never take the server down
            logger.exception("reloading node files failed")
            continue
        if message is not None:
            hub.publish(message)


async def watcher_ctx(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: load the nodes folder, then watch it for the app's lifetime (if watching
    is on)."""
    await app[CATALOG].load()
    if not app[SETTINGS].watch:
        yield
        return
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(watch(app, stop))
    yield
    stop.set()
    with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
        await asyncio.wait_for(task, 5)
