"""The websocket: a client gets `hello` and a snapshot, then every event; it may send `ping`.
Runs are started and controlled over HTTP (runs.py)."""

from __future__ import annotations

import logging

from aiohttp import WSCloseCode, WSMsgType, web

from graphbook import protocol as p
from graphbook.server.hub import Client
from graphbook.server.keys import HUB, JOBS, RUN_MANAGER, SETTINGS

logger = logging.getLogger(__name__)
routes = web.RouteTableDef()
HARD_LIMIT_FACTOR = 4
"""Messages over max_message get an `error` reply; over this many times it, the connection is
closed with code 1009, cleanly (the message read to its end, the close handshake done) up to
the body limit; past that aiohttp drops the connection (its close frame says 1009) before the
message is read into memory."""


@routes.get("/ws")
async def websocket(request: web.Request) -> web.WebSocketResponse:
    settings = request.app[SETTINGS]
    limit = settings.max_message
    ceiling = max(settings.max_body, limit * HARD_LIMIT_FACTOR)
    ws = web.WebSocketResponse(heartbeat=30, max_msg_size=ceiling)
    await ws.prepare(request)
    hub, runs = request.app[HUB], request.app[RUN_MANAGER]
    client = hub.attach(ws)
    if runs.recorder.problem is not None:  # a client connecting later is told too
        client.send(p.Error("store_failed", runs.recorder.problem))
    client.send(request.app[JOBS].message())
    try:
        async for message in ws:
            if message.type == WSMsgType.TEXT and len(message.data) > limit * HARD_LIMIT_FACTOR:
                too_large = f"a message is at most {limit} bytes, got {len(message.data)}"
                await ws.close(code=WSCloseCode.MESSAGE_TOO_BIG, message=too_large.encode())
            elif message.type == WSMsgType.TEXT:
                await handle(client, message.data, limit)
            elif message.type == WSMsgType.BINARY:
                client.send(p.Error("bad_message", "send JSON text frames, not binary ones"))
            elif message.type == WSMsgType.ERROR:
                break
    finally:
        await hub.detach(client)
    return ws


async def handle(client: Client, text: str, limit: int) -> None:
    """One client message: its reply (`pong` or `error`) goes to that client only. Runs are
    started and controlled over HTTP: a command the websocket once took is refused, naming
    the route to use (protocol.MOVED_TO_HTTP)."""
    if len(text) > limit:
        client.send(p.Error("too_large", f"a message is at most {limit} bytes, got {len(text)}"))
        return
    try:
        message = p.decode_client(text)
    except p.ProtocolError as exc:
        client.send(p.Error(exc.code, exc.message))
        return
    client.send(p.Pong(message.ref))
