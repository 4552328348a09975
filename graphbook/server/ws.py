"""The websocket: a client gets `hello` and a snapshot, then every event; it sends commands."""

from __future__ import annotations

import logging
from typing import Any, assert_never

from aiohttp import WSMsgType, web

from graphbook import protocol as p
from graphbook.server.errors import ServerError
from graphbook.server.hub import Client
from graphbook.server.keys import HUB, JOBS, SESSION, SETTINGS
from graphbook.server.session import Session

logger = logging.getLogger(__name__)
routes = web.RouteTableDef()
Command = p.Run | p.Pause | p.Resume | p.Step | p.Stop | p.Answer | p.Clear
"""Every client message but `ping`."""
HARD_LIMIT_FACTOR = 4
"""Messages over max_message get an `error` reply; over this many times it, the connection
is closed by aiohttp (code 1009) before the message is read into memory."""


@routes.get("/ws")
async def websocket(request: web.Request) -> web.WebSocketResponse:
    limit = request.app[SETTINGS].max_message
    ws = web.WebSocketResponse(heartbeat=30, max_msg_size=limit * HARD_LIMIT_FACTOR)
    await ws.prepare(request)
    hub, session = request.app[HUB], request.app[SESSION]
    client = hub.attach(ws)
    client.send(request.app[JOBS].message())
    if session.recorder.problem is not None:  # a client connecting later is told too
        client.send(p.Error("store_failed", session.recorder.problem))
    try:
        async for message in ws:
            if message.type == WSMsgType.TEXT:  # in order: a run starts before a stop after it
                await handle(session, client, message.data, limit)
            elif message.type == WSMsgType.BINARY:
                client.send(p.Error("bad_message", "send JSON text frames, not binary ones"))
            elif message.type == WSMsgType.ERROR:
                break
    finally:
        await hub.detach(client)
    return ws


async def handle(session: Session, client: Client, text: str, limit: int) -> None:
    """One client message: its reply (`ack`, `pong` or `error`) goes to that client only."""
    if len(text) > limit:
        client.send(p.Error("too_large", f"a message is at most {limit} bytes, got {len(text)}"))
        return
    try:
        message = p.decode_client(text)
    except p.ProtocolError as exc:
        client.send(p.Error(exc.code, exc.message))
        return
    if isinstance(message, p.Ping):
        client.send(p.Pong(message.ref))
        return
    try:
        result = await command(session, message)
    except ServerError as exc:
        client.send(p.Error(exc.code, exc.message, message.ref, exc.problems))
    except Exception as exc:  # a bug must not end the connection
        logger.exception("handling a %s message failed", message.type)
        client.send(p.Error("internal", f"{type(exc).__name__}: {exc}", message.ref))
    else:
        client.send(p.Ack(message.ref, result))


async def command(session: Session, message: Command) -> Any:
    """Do what the message asks; the result goes back in the `ack` (as HTTP would reply).
    A run's workflow is read and checked off the loop (Session.start): meanwhile this client's
    next messages wait, other clients' do not."""
    match message:
        case p.Run():
            return p.RunAccepted(await session.start(message))
        case p.Pause():
            return session.pause()
        case p.Resume():
            return session.resume()
        case p.Step():
            return session.step(message.node)
        case p.Stop():
            return session.stop()
        case p.Answer():
            return session.answer(message.prompt_id, message.answer)
        case p.Clear():
            return session.clear(message.workflow, message.node)
        case _:
            assert_never(message)
