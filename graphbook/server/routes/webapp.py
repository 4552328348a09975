"""The built web app at `/` (from graphbook/webapp/), or a page that says how to build it.

The build writes NAME.br and NAME.gz beside each text asset; aiohttp's FileResponse sends one
of them to a browser that accepts it. Assets have content-hashed names, so they are cached for
a year; index.html is revalidated on every load, so a new build is seen at once.
"""

from __future__ import annotations

import html
import mimetypes

from aiohttp import web

from graphbook.server.errors import ServerError
from graphbook.server.keys import SETTINGS
from graphbook.server.paths import Root
from graphbook.server.security import TOKEN_COOKIE, token_matches

routes = web.RouteTableDef()
FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
MISSING = """<!doctype html>
<html><head><meta charset="utf-8"><title>Graphbook</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>Graphbook server is running</h1>
<p>The web app has not been built into <code>{folder}</code>. Build it with:</p>
<pre>npm ci &amp;&amp; npm run build   # at the repository root (or: bash scripts/install)</pre>
<p>The HTTP API is under <a href="/api/info">/api/</a> and events stream at <code>/ws</code>
(see docs/protocol.md).</p>
</body></html>
"""


@routes.get("/")
async def index(request: web.Request) -> web.StreamResponse:
    return _with_token_cookie(request, _page(request, "index.html"))


@routes.get("/apps")
async def apps_page(request: web.Request) -> web.StreamResponse:
    """The apps list: the app itself, which reads its path."""
    return _with_token_cookie(request, _page(request, "index.html"))


@routes.get("/app/{workflow:.+}")
async def app_page(request: web.Request) -> web.StreamResponse:
    """An app's page: the web app, with its asset links made absolute (they are relative to
    the page, and this page lies deeper than the others)."""
    index_file = request.app[SETTINGS].webapp / "index.html"
    if not index_file.is_file():
        return _page(request, "index.html")
    text = index_file.read_text(encoding="utf-8").replace("<head>", '<head><base href="/">', 1)
    response = web.Response(text=text, content_type="text/html")
    response.headers["Cache-Control"] = REVALIDATE
    return _with_token_cookie(request, response)


def _with_token_cookie(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    """A page asked for with `?token=T`: the token kept in a cookie, for the page's calls."""
    token = request.app[SETTINGS].token
    given = request.query.get("token")
    if token is not None and given is not None and token_matches(token, given):
        response.set_cookie(TOKEN_COOKIE, given, httponly=True, samesite="Strict")
    return response


@routes.get("/{path:(?!api/|ws$).+}")
async def asset(request: web.Request) -> web.StreamResponse:
    return _page(request, request.match_info["path"])


def _page(request: web.Request, relative: str) -> web.StreamResponse:
    folder = request.app[SETTINGS].webapp
    index_file = folder / "index.html"
    if not index_file.is_file():
        text = MISSING.format(folder=html.escape(str(folder)))
        return web.Response(text=text, content_type="text/html")
    try:
        path = Root(folder).resolve(relative)
    except ServerError:
        path = index_file
    if not path.is_file():
        path = index_file  # the app routes its own paths
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    hashed = path.parent.name == "assets" and path != index_file
    headers = {"Content-Type": kind, "Cache-Control": FOREVER if hashed else REVALIDATE}
    return web.FileResponse(path, headers=headers)
