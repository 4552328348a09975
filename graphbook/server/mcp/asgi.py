"""An aiohttp handler that serves one request through an ASGI application (HTTP only): the
request becomes an ASGI scope and body, the app's `http.response.*` messages the streamed
reply. The MCP SDK's streamable HTTP transport is ASGI; this is all of ASGI that it needs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Message, Receive, Send], Awaitable[None]]


def scope(request: web.Request) -> Message:
    """The ASGI HTTP scope of an aiohttp request."""
    host, port = _server(request)
    peer = request.transport.get_extra_info("peername") if request.transport else None
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode("latin-1"),
        "query_string": request.query_string.encode("latin-1"),
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "server": (host, port),
        "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
        "state": {},
    }


def _server(request: web.Request) -> tuple[str, int]:
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    if isinstance(sockname, tuple):
        return str(sockname[0]), int(sockname[1])
    return ("127.0.0.1", 80)


async def serve_asgi(app: ASGIApp, request: web.Request) -> web.StreamResponse:
    """Run `app` for `request` and stream what it sends; a 500 if it sends no reply."""
    body = await request.read()
    bridge = _Reply(request)
    sent_body = False

    async def receive() -> Message:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await bridge.finished.wait()  # the client is gone once the reply has ended
        return {"type": "http.disconnect"}

    await app(scope(request), receive, bridge.send)
    if bridge.response is None:
        return web.Response(status=500, text="the ASGI application sent no reply")
    if not bridge.finished.is_set():
        await bridge.response.write_eof()
    return bridge.response


class _Reply:
    """The aiohttp response an ASGI app's messages build."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.response: web.StreamResponse | None = None
        self.finished = asyncio.Event()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.response = web.StreamResponse(status=message["status"])
            for name, value in message.get("headers", []):
                self.response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await self.response.prepare(self.request)
        elif message["type"] == "http.response.body" and self.response is not None:
            await self.response.write(message.get("body", b""))
            if not message.get("more_body", False):
                await self.response.write_eof()
                self.finished.set()
