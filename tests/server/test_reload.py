"""Node files load in a thread: the server answers while a slow node file imports, one load
runs at a time, and the catalog changes in one step."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiohttp import web
from server_harness import Serve, Server, settings_for

from graphbook import protocol as p
from graphbook.nodes import library_registry
from graphbook.server.app import create_app
from graphbook.server.catalog import CatalogState
from graphbook.server.keys import CATALOG

SLOW = """
import time
from pathlib import Path

from graphbook import step

LOG = Path({log!r})
with LOG.open("a") as f:
    f.write("start {name}\\n")
time.sleep({seconds})
with LOG.open("a") as f:
    f.write("end {name}\\n")


@step("Slow/{name}")
def node(ctx, data):
    pass
"""


def slow_file(folder: Path, log: Path, name: str, seconds: float = 2.0) -> Path:
    path = folder / f"{name.lower()}.py"
    path.write_text(SLOW.format(log=str(log), name=name, seconds=seconds))
    return path


def events(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


async def until_started(log: Path, name: str) -> None:
    for _ in range(2000):
        if f"start {name}" in events(log):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{name} never started loading")


def test_the_server_answers_while_a_slow_node_file_reloads(serving: Serve, tmp_path: Path) -> None:
    log = tmp_path / "imports.log"

    async def scenario(server: Server) -> None:
        socket = await server.connect()
        _status, before = await server.get("/api/catalog")
        slow_file(server.settings.nodes, log, "Tortoise")
        await until_started(log, "Tortoise")

        status, info = await server.get("/api/info")
        catalog_status, during = await server.get("/api/catalog")
        assert status == 200 and info["version"] == p.VERSION
        assert "end Tortoise" not in events(log), "the request waited for the import"
        assert catalog_status == 200 and during == before  # the old catalog, whole

        changed = await socket.until(p.CatalogChanged)
        assert changed.added == ["Tortoise"] and events(log)[-1] == "end Tortoise"
        _status, after = await server.get("/api/catalog")
        assert after["version"] == changed.version == before["version"] + 1
        assert "Tortoise" in {n["name"] for n in after["nodes"]}

    serving(scenario, watch=True)


def test_two_reloads_run_one_after_the_other(tmp_path: Path) -> None:
    folder, log = tmp_path / "nodes", tmp_path / "imports.log"
    folder.mkdir()
    hare = slow_file(folder, log, "Hare", 0.5)
    tortoise = slow_file(folder, log, "Tortoise", 0.5)
    state = CatalogState(library_registry(), folder)

    async def both() -> tuple[p.CatalogChanged | None, p.CatalogChanged | None]:
        return await asyncio.gather(state.reload([hare]), state.reload([tortoise]))

    first, second = asyncio.run(both())
    assert events(log) == ["start Hare", "end Hare", "start Tortoise", "end Tortoise"]
    assert first is not None and first.added == ["Hare"] and first.version == 2
    assert second is not None and second.added == ["Tortoise"] and second.version == 3
    assert {"Hare", "Tortoise"} <= {spec.name for spec in state.registry}


def test_the_nodes_folder_loads_at_start_without_holding_up_the_event_loop(
    tmp_path: Path,
) -> None:
    log = tmp_path / "imports.log"
    settings = settings_for(tmp_path)
    slow_file(settings.nodes, log, "Tortoise")
    seen_mid_load: list[bool] = []

    async def start() -> None:
        runner = web.AppRunner(create_app(settings), handle_signals=False)
        setup = asyncio.create_task(runner.setup())
        try:
            while not setup.done():
                seen_mid_load.append(events(log) == ["start Tortoise"])
                await asyncio.sleep(0.02)
            await setup
            assert "Tortoise" in runner.app[CATALOG].registry
        finally:
            await runner.cleanup()

    asyncio.run(start())
    assert any(seen_mid_load), "the event loop stood still while the node file loaded"
