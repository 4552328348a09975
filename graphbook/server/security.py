"""Who may talk to the server: the token, the Host (on loopback) and the Origin of writes and
websockets; and the middleware that turns every error into a JSON error reply."""

from __future__ import annotations

import asyncio
import hmac
import logging
import re

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from graphbook import protocol as p
from graphbook.server.errors import ServerError
from graphbook.server.request import error_reply
from graphbook.server.settings import LOOPBACK_NAMES, ServerSettings

logger = logging.getLogger(__name__)
DISCARD_SECONDS = 10.0
"""How long the rest of a refused body is dropped before the connection is closed."""
TOKEN_COOKIE = "graphbook_token"
TOKEN_HEADER = "X-Graphbook-Token"
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_HOST = re.compile(r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]+))(?::[0-9]{1,5})?")
"""A Host header: a name or an address, or an IPv6 address in brackets; an optional port."""
STATUS_CODES: dict[int, p.ErrorCode] = {
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    413: "too_large",
}


def token_matches(expected: str, given: str) -> bool:
    """Constant-time; any text compares (a header may carry bytes that are not UTF-8)."""
    return hmac.compare_digest(_bytes(expected), _bytes(given))


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def request_token(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        return auth.removeprefix("Bearer ").strip()
    return (
        request.headers.get(TOKEN_HEADER)
        or request.query.get("token")
        or request.cookies.get(TOKEN_COOKIE)
    )


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure becomes `{"error": {...}}` with a 4xx/5xx status; the server goes on."""
    try:
        return await handler(request)
    except ServerError as exc:
        if exc.close:
            return await reply_and_close(request, error_reply(exc))
        return error_reply(exc)
    except p.ProtocolError as exc:
        return error_reply(ServerError(400, exc.code, exc.message))
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = STATUS_CODES.get(exc.status, "bad_message")
        return error_reply(ServerError(exc.status, code, exc.reason))
    except Exception as exc:
        logger.exception("%s %s failed", request.method, request.path)
        return error_reply(ServerError(500, "internal", f"{type(exc).__name__}: {exc}"))


async def reply_and_close(request: web.Request, response: web.Response) -> web.Response:
    """Send `response`, then close the connection without decompressing the rest of the body:
    aiohttp would read it to the end before closing, decompressing it (a gzip bomb of 1 MB on
    the wire kept the loop busy for seconds). The bytes still coming are dropped as they are,
    until the client closes (closing at once would reset the connection, and the client could
    lose the reply)."""
    response.force_close()  # says `Connection: close`: the client opens a new one
    await response.prepare(request)
    await response.write_eof()
    transport = request.transport
    if transport is not None:
        transport.set_protocol(Discard(transport))
        request.content.feed_eof()  # aiohttp waits for no more of the body (nor lingers)
        if isinstance(transport, asyncio.WriteTransport) and transport.can_write_eof():
            transport.write_eof()  # the reply is whole: the client may close
    return response


class Discard(asyncio.Protocol):
    """Drops what a connection still sends; closes it when the client does, or after
    DISCARD_SECONDS."""

    def __init__(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.timer = asyncio.get_running_loop().call_later(DISCARD_SECONDS, transport.close)

    def data_received(self, data: bytes) -> None:
        pass

    def eof_received(self) -> bool:
        self.timer.cancel()
        self.transport.close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.timer.cancel()


def security_middleware(settings: ServerSettings) -> Middleware:
    @web.middleware
    async def security(request: web.Request, handler: Handler) -> web.StreamResponse:
        check_host(settings, request)
        check_token(settings, request)
        check_origin(settings, request)
        return await handler(request)

    return security


def check_host(settings: ServerSettings, request: web.Request) -> None:
    """The Host header, read as sent: one, well formed, and on loopback one of our names (a
    page from elsewhere must not reach us through DNS rebinding); the target a path, not an
    absolute URL whose host would stand in for the header's."""
    if not request.raw_path.startswith("/"):
        raise ServerError(
            400, "bad_message", "absolute-form request targets are refused; send the path only"
        )
    sent = request.headers.getall("Host", [])
    if len(sent) != 1:
        raise ServerError(400, "bad_message", f"send one Host header, not {len(sent)}")
    host = host_name(sent[0])
    if host is None:
        raise ServerError(
            400, "bad_message", f"malformed Host header {sent[0]!r}: expected NAME or NAME:PORT"
        )
    if settings.loopback and host not in LOOPBACK_NAMES:
        raise ServerError(403, "forbidden", f"Host {host!r} refused; use localhost or 127.0.0.1")


def host_name(header: str) -> str | None:
    """The host of a Host header (lower case, IPv6 without brackets); None if malformed."""
    found = _HOST.fullmatch(header.strip())
    if found is None:
        return None
    return (found.group("ipv6") or found.group("name")).lower()


def check_token(settings: ServerSettings, request: web.Request) -> None:
    if settings.token is None:
        return
    given = request_token(request)
    if given is None or not token_matches(settings.token, given):
        raise ServerError(
            401,
            "unauthorized",
            f"this server needs its token: header 'Authorization: Bearer T' or {TOKEN_HEADER}, "
            "or ?token=T",
        )


def check_origin(
    settings: ServerSettings, request: web.Request, every_method: bool = False
) -> None:
    """A browser's Origin on a write or websocket (on every method with `every_method`) must
    be the server's own or an allowed one."""
    origins = request.headers.getall("Origin", [])
    upgrade = request.headers.get("Upgrade", "").lower() == "websocket"
    if not origins or not (every_method or upgrade or request.method in WRITES):
        return
    if len(origins) > 1:
        raise ServerError(403, "forbidden", f"send one Origin header, not {len(origins)}")
    origin = origins[0]
    own = f"{request.scheme}://{request.host}"
    if origin != own and origin not in settings.allowed_origins:
        raise ServerError(
            403, "forbidden", f"Origin {origin!r} refused; start the server with --allow-origin"
        )
