"""A real server on a loopback port, driven by real HTTP and websocket clients."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from graphbook import protocol as p
from graphbook.server.app import create_app
from graphbook.server.keys import RUN_MANAGER
from graphbook.server.settings import ServerSettings
from graphbook.workflow import Workflow

TIMEOUT = 20.0
NODES = Path(__file__).resolve().parents[1] / "fixtures" / "server_nodes.py"
"""The node file every test server loads (copied into its nodes folder)."""


def chain(n: int = 5, add: int = 1, delay: float = 0.0) -> dict[str, Any]:
    """numbers -> add -> add2: a small workflow document."""
    wf = Workflow()
    src = wf.add("Numbers", id="src", n=n, delay=delay)
    a = wf.add("Add", id="a", add=add)
    b = wf.add("Add", id="b", add=10)
    wf.connect(src, a)
    wf.connect(a, b)
    return wf.to_json()


class Socket:
    """A websocket client that decodes (and so validates) every message it receives."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.seen: list[Any] = []

    async def next(self, timeout: float = TIMEOUT) -> Any:
        message = await self.ws.receive(timeout=timeout)
        assert message.type == aiohttp.WSMsgType.TEXT, f"got {message.type}: {message.data!r}"
        decoded = p.decode_server(message.data)
        self.seen.append(decoded)
        return decoded

    async def until(
        self,
        kind: type[Any],
        test: Callable[[Any], bool] = lambda m: True,
        timeout: float = TIMEOUT,
    ) -> Any:
        async def wait() -> Any:
            while True:
                message = await self.next()
                if isinstance(message, kind) and test(message):
                    return message

        return await asyncio.wait_for(wait(), timeout)

    async def send(self, message: Any) -> None:
        await self.ws.send_str(p.encode(message))

    async def close(self) -> None:
        await self.ws.close()

    def of(self, kind: type[Any]) -> list[Any]:
        return [m for m in self.seen if isinstance(m, kind)]


@dataclass
class Server:
    url: str
    http: aiohttp.ClientSession
    app: web.Application
    settings: ServerSettings
    sockets: list[Socket] = field(default_factory=list)

    async def request(self, method: str, path: str, **kw: Any) -> tuple[int, Any]:
        async with self.http.request(method, self.url + path, **kw) as response:
            text = await response.text()
            try:
                return response.status, json.loads(text) if text else None
            except ValueError:
                return response.status, text

    async def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return await self.request("POST", path, json=body, **kw)

    async def put(self, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
        return await self.request("PUT", path, json=body, **kw)

    async def connect(self, query: str = "", **kw: Any) -> Socket:
        ws = await self.http.ws_connect(self.url.replace("http", "ws") + "/ws" + query, **kw)
        socket = Socket(ws)
        self.sockets.append(socket)
        assert isinstance(await socket.next(), p.Hello)
        assert isinstance(await socket.next(), p.Snapshot)
        return socket

    def save(self, name: str, document: dict[str, Any]) -> None:
        path = self.settings.workflows / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document))

    async def run(self, workflow: str, **body: Any) -> str:
        status, reply = await self.post("/api/runs", {"workflow": workflow, **body})
        assert status == 202, reply
        return str(reply["run_id"])

    async def run_to_end(self, socket: Socket, workflow: str, **body: Any) -> p.RunFinished:
        run_id = await self.run(workflow, **body)
        finished: p.RunFinished = await socket.until(p.RunFinished, lambda m: m.run_id == run_id)
        await self.idle()
        return finished

    async def idle(self) -> None:
        """Wait until the run manager has no active run (its thread has handed back)."""
        runs = self.app[RUN_MANAGER]
        for _ in range(int(TIMEOUT / 0.01)):
            if runs.active is None:
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the run did not end")


def settings_for(root: Path, **overrides: Any) -> ServerSettings:
    nodes = root / "nodes"
    nodes.mkdir(parents=True, exist_ok=True)
    if not (nodes / "test_nodes.py").exists():
        shutil.copyfile(NODES, nodes / "test_nodes.py")
    base = ServerSettings(
        host="127.0.0.1",
        port=0,
        workflows=root / "workflows",
        nodes=nodes,
        data=root / "data",
        media=(root / "media",),
        watch=False,
        webapp=root / "webapp",
    )
    return replace(base, **overrides)


Scenario = Callable[[Server], Awaitable[None]]
Serve = Callable[..., None]
"""The `serving` fixture: `serving(scenario, headers=None, **settings)`."""


async def serving(settings: ServerSettings, scenario: Scenario, headers: dict[str, str]) -> None:
    app = create_app(settings)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    run_host = app[RUN_MANAGER].host  # scenarios time runs from a loaded run host, as a person does
    if run_host is not None:
        await asyncio.to_thread(run_host.ready.wait, 60)
    try:
        async with aiohttp.ClientSession(headers=headers) as http:
            server = Server(f"http://{host}:{port}", http, app, settings)
            try:
                await scenario(server)
            finally:
                for socket in server.sockets:
                    await socket.close()
    finally:
        await runner.cleanup()


def serve(
    root: Path, scenario: Scenario, headers: dict[str, str] | None = None, **overrides: Any
) -> None:
    """Run `scenario` against a fresh server on the folders under `root`."""
    settings = settings_for(root, **overrides)
    asyncio.run(asyncio.wait_for(serving(settings, scenario, headers or {}), 90))
