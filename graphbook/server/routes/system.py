"""System stats (CPU, memory, GPUs, worker pool, cache) and the server's settings."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from typing import Any

from aiohttp import web

from graphbook import about
from graphbook import protocol as p
from graphbook.events import PoolStats
from graphbook.server.errors import bad_message
from graphbook.server.keys import HUB, RUN_MANAGER
from graphbook.server.request import read_object, reply
from graphbook.server.runmanager import RunManager

routes = web.RouteTableDef()


def memory() -> tuple[int, int]:
    """(used, total) bytes of memory."""
    psutil = _psutil()
    if psutil is not None:
        vm = psutil.virtual_memory()
        return int(vm.total - vm.available), int(vm.total)
    return _proc_memory()


def _proc_memory() -> tuple[int, int]:
    fields: dict[str, int] = {}
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            name, value = line.split(":", 1)
            fields[name] = int(value.split()[0]) * 1024
    total = fields.get("MemTotal", 0)
    return total - fields.get("MemAvailable", 0), total


def cpu_percent() -> float:
    psutil = _psutil()
    return float(psutil.cpu_percent(interval=None)) if psutil is not None else 0.0


def _psutil() -> Any:
    """psutil if installed (it is optional)."""
    try:
        return importlib.import_module("psutil")
    except ImportError:
        return None


def gpus() -> list[p.GpuInfo]:
    """GPUs torch can see; torch is imported only if it is installed."""
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        return []
    import torch

    if not torch.cuda.is_available():
        return []
    found = []
    for index in range(torch.cuda.device_count()):
        free, total = torch.cuda.mem_get_info(index)
        found.append(p.GpuInfo(index, torch.cuda.get_device_name(index), total - free, total))
    return found


def pool_info(runs: RunManager) -> PoolStats | None:
    return runs.pool.stats()


def system_stats(runs: RunManager) -> p.SystemStats:
    used, total = memory()
    used_bytes, entries = runs.cache.usage()
    cache = p.CacheInfo(used_bytes, runs.cache.budget, entries)
    return p.SystemStats(cpu_percent(), used, total, gpus(), pool_info(runs), cache)


def settings_json(runs: RunManager) -> dict[str, Any]:
    return {"cache_budget_bytes": runs.cache.budget, "workers": runs.settings.workers}


@routes.get("/api/system")
async def system(request: web.Request) -> web.Response:
    return reply(await asyncio.to_thread(system_stats, request.app[RUN_MANAGER]))


@routes.get("/api/settings")
async def get_settings(request: web.Request) -> web.Response:
    return reply(settings_json(request.app[RUN_MANAGER]))


@routes.put("/api/settings")
async def put_settings(request: web.Request) -> web.Response:
    body, runs = await read_object(request), request.app[RUN_MANAGER]
    budget = body.get("cache_budget_bytes")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise bad_message("cache_budget_bytes must be a whole number of bytes, 0 or more")
    runs.cache.set_budget(budget)
    return reply(settings_json(runs))


@routes.get("/api/info")
async def info(request: web.Request) -> web.Response:
    settings = request.app[RUN_MANAGER].settings
    roots = {name: str(folder.resolve()) for name, folder in settings.roots().items()}
    return reply(
        {
            "version": p.VERSION,
            "server": f"graphbook {about.version()}",
            "token_required": settings.token is not None,
            "roots": roots,
            "instance": request.app[HUB].instance,
        }
    )
