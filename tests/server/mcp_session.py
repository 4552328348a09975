"""One MCP session for all the tests of a module: a `graphbook mcp` process on stdio, or a
`graphbook serve` process reached at /mcp over streamable HTTP, each driven by the official
SDK's client in a thread of its own, so that each test calls the tools as an agent does
without starting a server of its own."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client
from mcp_agent import Agent

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
NODES = ROOT / "tests" / "fixtures" / "server_nodes.py"
SERVING = re.compile(r"serving on (http://127\.0\.0\.1:\d+)/")
Transport = Literal["stdio", "http"]
FOLDERS = ["--workflows", "workflows", "--nodes", "nodes", "--data", "data", "--media", "media"]


class Person:
    """The person behind the agent's client: answers the questions the server elicits with
    what a test gave it, in order (declines when it has none)."""

    def __init__(self) -> None:
        self.answers: list[dict[str, Any]] = []
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        if not self.answers:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=self.answers.pop(0))


class Shared:
    """The server's folders under `root`, the server, and one agent connected to it."""

    def __init__(self, root: Path, transport: Transport) -> None:
        self.root = root
        self.transport = transport
        self.url = ""
        """The server's address over HTTP (`http://127.0.0.1:PORT`)."""
        self.person = Person()
        self.agent: Agent | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._closed: asyncio.Event | None = None
        self._held: Future[None] | None = None
        self._process: subprocess.Popen[str] | None = None
        for folder in ("workflows", "nodes", "data", "media"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(NODES, root / "nodes" / "test_nodes.py")

    @property
    def workflows(self) -> Path:
        return self.root / "workflows"

    @property
    def nodes(self) -> Path:
        return self.root / "nodes"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }

    def start(self) -> None:
        self._thread.start()
        if self.transport == "http":
            self._process = subprocess.Popen(
                [sys.executable, "-m", "graphbook", "serve", "--no-watch", "--port", "0", *FOLDERS],
                cwd=self.root,
                env=self.env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            assert self._process.stdout is not None
            found = SERVING.search(self._process.stdout.readline())
            assert found is not None, "graphbook serve did not start"
            self.url = found.group(1)
        opened: Future[None] = Future()
        self._held = asyncio.run_coroutine_threadsafe(self._hold(opened), self._loop)
        opened.result(120)

    async def _hold(self, opened: Future[None]) -> None:
        self._closed = asyncio.Event()
        try:
            async with self.session() as session:
                self.agent = Agent(session)
                opened.set_result(None)
                await self._closed.wait()
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc)
            raise

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[ClientSession]:
        if self.transport == "stdio":
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "graphbook", "mcp", *FOLDERS, "--no-watch"],
                env=self.env(),
                cwd=self.root,
            )
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write, elicitation_callback=self.person) as session,
            ):
                await session.initialize()
                yield session
        else:
            async with (
                httpx2.AsyncClient(timeout=120) as http,
                streamable_http_client(f"{self.url}/mcp", http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield session

    def run(self, scenario: Callable[[Agent], Coroutine[Any, Any, T]], timeout: float = 120) -> T:
        """Run `scenario` with the shared agent, in the session's thread; its result."""
        assert self.agent is not None, "the session is not open"
        agent = self.agent
        return asyncio.run_coroutine_threadsafe(scenario(agent), self._loop).result(timeout)

    def close(self) -> None:
        if self._closed is not None:
            self._loop.call_soon_threadsafe(self._closed.set)
        if self._held is not None:
            with contextlib.suppress(Exception):
                self._held.result(30)  # the session closed, a stdio server ended with it
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(30)


@contextlib.contextmanager
def shared(root: Path, transport: Transport) -> Iterator[Shared]:
    session = Shared(root, transport)
    try:
        session.start()
        yield session
    finally:
        session.close()
