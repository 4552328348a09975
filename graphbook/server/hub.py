"""Hub: every connected websocket client, and the one place messages are sent to them.

Messages are folded into the RunState (graphbook/runview.py) before they go out, so a client
attached between two messages gets a snapshot that the next message continues exactly.
`node_progress` is coalesced: at most one per node every PROGRESS_INTERVAL, flushed before any
other message to keep order. The last run of each workflow stays readable (`last_run`), so a
page opening a workflow again, even after a reload, shows its results. Every method runs on the
event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence

from aiohttp import web

from graphbook import about
from graphbook import protocol as p
from graphbook.runview import RunState

logger = logging.getLogger(__name__)
PROGRESS_INTERVAL = 0.1
QUEUE_LIMIT = 20_000
"""Messages waiting for one client; a client that falls this far behind is disconnected."""
LAST_RUNS = 64
"""Workflows whose last run the hub keeps (their logs, outputs and errors) for `last_run`."""


WRITE_TURN = 32
"""Messages a client's writer sends before it lets the loop serve others."""


class Client:
    """One websocket connection, written to by its own task in the order messages come."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.id = uuid.uuid4().hex[:8]
        self.ws = ws
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self.code = 1013
        self.task = asyncio.get_running_loop().create_task(self._write())

    def send(self, message: p.ServerMessage) -> None:
        self.send_text(p.encode(message))

    def send_text(self, text: str) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= QUEUE_LIMIT:
            logger.warning("client %s is too slow; disconnecting it", self.id)
            self.close()
            return
        self.queue.put_nowait(text)

    def close(self, code: int = 1013) -> None:
        """Ends the connection once what is queued is sent: 1013 (try again later) for a client
        that fell behind, 1001 (going away) when the server stops."""
        if not self.closed:
            self.closed = True
            self.code = code
            self.queue.put_nowait(None)

    async def _write(self) -> None:
        """Sends the queue in order. A send that the socket takes at once does not suspend,
        so the task lets the loop run every WRITE_TURN messages: a burst of thousands (a
        4,000-node run's plans) held every other request for seconds."""
        try:
            sent = 0
            while (text := await self.queue.get()) is not None:
                await self.ws.send_str(text)
                sent += 1
                if sent % WRITE_TURN == 0:
                    await asyncio.sleep(0)
        except (ConnectionError, RuntimeError):
            pass  # the client went away; its reader notices and detaches it
        finally:
            with contextlib.suppress(Exception):
                await self.ws.close(code=self.code if not self.ws.closed else 1000)


class Hub:
    def __init__(self, catalog_version: Callable[[], int]) -> None:
        self.clients: dict[str, Client] = {}
        self.instance = uuid.uuid4().hex[:12]
        """This server process's id, sent in `hello` and /api/info."""
        self.view = RunState()
        self.last: OrderedDict[str, RunState] = OrderedDict()
        """The last run of each workflow that ran since the server started, before the run
        now in `view` (at most LAST_RUNS workflows, the least recently run dropped first)."""
        self._catalog_version = catalog_version
        self._progress: dict[tuple[str, str], p.NodeProgress] = {}
        self._timer: asyncio.TimerHandle | None = None

    def attach(self, ws: web.WebSocketResponse) -> Client:
        client = Client(ws)
        version = self._catalog_version()
        hello = p.Hello(
            p.VERSION, f"graphbook {about.version()}", client.id, version, self.instance
        )
        client.send(hello)
        client.send(self.snapshot())
        self.clients[client.id] = client
        return client

    def snapshot(self) -> p.Snapshot:
        self.flush()
        version = self._catalog_version()
        return p.Snapshot(self.view.snapshot(), list(self.view.prompts.values()), version)

    async def detach(self, client: Client, code: int = 1013) -> None:
        self.clients.pop(client.id, None)
        client.close(code)
        with contextlib.suppress(Exception):
            await client.task

    def last_run(self, workflow: str) -> p.RunSnapshot | None:
        """The last run of `workflow` as this server saw it (the current run if it is one)."""
        run = self.view.run
        if run is not None and run.started.workflow == workflow:
            return self.view.snapshot()
        kept = self.last.get(workflow)
        return kept.snapshot() if kept is not None else None

    def _keep_last(self, message: p.ServerMessage) -> None:
        """A run starting puts the one before it aside (`last`); a cleared cache clears there
        too, as it does in the page."""
        if isinstance(message, p.RunStarted) and self.view.run is not None:
            older = RunState()
            older.run = self.view.run
            workflow = older.run.started.workflow
            self.last[workflow] = older
            self.last.move_to_end(workflow)
            while len(self.last) > LAST_RUNS:
                self.last.popitem(last=False)
        elif isinstance(message, p.CacheCleared) and message.workflow in self.last:
            self.last[message.workflow].apply(message)

    def publish(self, message: p.ServerMessage) -> None:
        self._keep_last(message)
        self.view.apply(message)
        if isinstance(message, p.NodeProgress):
            self._progress[(message.run_id, message.node_id)] = message
            if self._timer is None:
                loop = asyncio.get_running_loop()
                self._timer = loop.call_later(PROGRESS_INTERVAL, self.flush)
            return
        self.flush()
        try:
            text = p.encode(message)
        except (TypeError, ValueError):
            logger.exception("cannot encode a %s message; dropped", message.type)
            return
        self._broadcast(text)

    def publish_all(self, messages: Sequence[p.ServerMessage]) -> None:
        for message in messages:
            self.publish(message)

    def flush(self) -> None:
        """Send the progress held back, now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._progress = self._progress, {}
        for message in pending.values():
            self._broadcast(p.encode(message))

    def _broadcast(self, text: str) -> None:
        for client in list(self.clients.values()):
            client.send_text(text)

    async def close(self) -> None:
        """Closes every websocket (going away), all at once: the server is stopping, and an
        open socket would hold its shutdown until aiohttp's timeout (60 s)."""
        clients = list(self.clients.values())
        await asyncio.gather(*(self.detach(client, 1001) for client in clients))
