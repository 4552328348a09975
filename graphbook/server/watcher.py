"""The watched folders. Nodes: loaded as the app starts, then watched: a saved node file
reloads, and every client hears of it. Workflows: a file added or removed there by anything
(a copy, a file manager, git) is announced (`workflows_listed`), so pages list it at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web
from watchfiles import Change, awatch

from graphbook import protocol as p
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


async def watch_workflows(app: web.Application, stop: asyncio.Event) -> None:
    settings, hub = app[SETTINGS], app[HUB]
    folder = settings.workflows.resolve()
    async for changes in awatch(
        folder,
        stop_event=stop,
        debounce=200,
        step=50,
        force_polling=settings.watch_polling,
        poll_delay_ms=200,
    ):
        message = listed(folder, changes)
        if message is not None:
            hub.publish(message)


def listed(folder: Path, changes: set[tuple[Change, str]]) -> p.WorkflowsListed | None:
    """The workflow files added and removed among `changes` (a save that rewrote one is
    neither), or None."""
    added: set[str] = set()
    removed: set[str] = set()
    for change, path in changes:
        name = _relative(folder, Path(path))
        if name is None:
            continue
        if change == Change.added:
            added.add(name)
        elif change == Change.deleted:
            removed.add(name)
    if not added and not removed:
        return None
    return p.WorkflowsListed(sorted(added - removed), sorted(removed - added))


def _relative(folder: Path, path: Path) -> str | None:
    """`path` as the workflows folder lists it, if it is a workflow file there."""
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return None
    hidden = any(part.startswith(".") for part in parts)
    return None if hidden or path.suffix != ".json" else "/".join(parts)


async def watcher_ctx(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: load the nodes folder, then watch it for the app's lifetime (if watching
    is on)."""
    await app[CATALOG].load()
    if not app[SETTINGS].watch:
        yield
        await app[CATALOG].close()
        return
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(watch(app, stop)), loop.create_task(watch_workflows(app, stop))]
    yield
    stop.set()
    with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.gather(*tasks), 5)
    await app[CATALOG].close()
