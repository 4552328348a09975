"""The ASGI bridge: an aiohttp request through a tiny ASGI app and back, streamed."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from aiohttp import web

from graphbook.server.mcp.asgi import Message, Receive, Send, serve_asgi


async def echo(scope: Message, receive: Receive, send: Send) -> None:
    """Answers with what it saw of the request, in two chunks."""
    body = (await receive())["body"]
    headers = dict(scope["headers"])
    seen = f"{scope['method']} {scope['path']}?{scope['query_string'].decode()} "
    seen += f"{headers[b'x-test'].decode()} {body.decode()}"
    await send({"type": "http.response.start", "status": 201, "headers": [(b"x-seen", b"yes")]})
    await send({"type": "http.response.body", "body": seen.encode(), "more_body": True})
    await send({"type": "http.response.body", "body": b" (end)"})


async def silent(scope: Message, receive: Receive, send: Send) -> None:
    await receive()


async def scenario() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        app = echo if request.path == "/echo" else silent
        return await serve_asgi(app, request)

    app = web.Application()
    app.router.add_route("*", "/{name}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        async with aiohttp.ClientSession() as http:
            url = f"http://{host}:{port}"
            sent: dict[str, Any] = {"data": b"hello", "headers": {"X-Test": "t"}}
            async with http.post(f"{url}/echo?a=1", **sent) as response:
                assert response.status == 201 and response.headers["x-seen"] == "yes"
                assert await response.text() == "POST /echo?a=1 t hello (end)"
            async with http.get(f"{url}/silent") as response:
                assert response.status == 500
                assert "sent no reply" in await response.text()
    finally:
        await runner.cleanup()


def test_a_request_through_an_asgi_app() -> None:
    asyncio.run(asyncio.wait_for(scenario(), 30))
