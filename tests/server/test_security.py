"""Who may talk to the server and which paths it may touch."""

from __future__ import annotations

import os
from pathlib import Path

import aiohttp
import pytest
from server_harness import Serve, Server, chain
from yarl import URL

from graphbook import protocol as p
from graphbook.errors import GraphbookError
from graphbook.server.app import create_app
from graphbook.server.settings import ServerSettings

TOKEN = "s3cret-token"


def test_it_refuses_to_listen_off_loopback_without_a_token(tmp_path: Path) -> None:
    settings = ServerSettings(
        host="0.0.0.0", workflows=tmp_path / "w", nodes=tmp_path / "n", data=tmp_path / "d"
    )
    with pytest.raises(GraphbookError, match="token"):
        create_app(settings)


def test_a_token_is_required_on_every_request_and_the_websocket(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        status, reply = await server.get("/api/catalog")
        assert status == 401 and reply["error"]["code"] == "unauthorized"
        status, _ = await server.get("/")
        assert status == 401
        for headers in ({"Authorization": f"Bearer {TOKEN}"}, {"X-Graphbook-Token": TOKEN}):
            assert (await server.get("/api/catalog", headers=headers))[0] == 200
        assert (await server.get(f"/api/catalog?token={TOKEN}"))[0] == 200
        wrong = {"Authorization": "Bearer wrong"}
        assert (await server.get("/api/catalog", headers=wrong))[0] == 401
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await server.connect()
        assert refused.value.status == 401
        socket = await server.connect(f"?token={TOKEN}")
        await socket.send(p.Ping(ref="1"))
        assert (await socket.until(p.Pong)).ref == "1"

        jar = aiohttp.CookieJar(unsafe=True)
        async with aiohttp.ClientSession(cookie_jar=jar) as browser:
            async with browser.get(f"{server.url}/?token={TOKEN}") as page:
                assert page.status == 200
            async with browser.get(f"{server.url}/api/workflows") as listing:
                assert listing.status == 200, "the cookie set by /?token= lets the browser in"

    serving(scenario, token=TOKEN)


def test_origin_is_checked_for_websockets_and_writes(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        evil = {"Origin": "http://evil.example"}
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await server.connect(headers=evil)
        assert refused.value.status == 403
        status, reply = await server.put("/api/workflows/x.json", chain(), headers=evil)
        assert status == 403 and reply["error"]["code"] == "forbidden"
        assert not (server.settings.workflows / "x.json").exists()
        assert (await server.get("/api/workflows", headers=evil))[0] == 200, "reads are fine"
        own = {"Origin": server.url}
        assert (await server.put("/api/workflows/x.json", chain(), headers=own))[0] == 200
        await server.connect(headers={"Origin": "http://localhost:5173"})
        status, _ = await server.get("/api/info", headers={"Host": "evil.example"})
        assert status == 403, "a foreign Host on loopback is DNS rebinding"

    serving(scenario, allowed_origins=("http://localhost:5173",))


BAD_PATHS = [
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e/outside.json",
    "%2Fetc%2Fpasswd",
    "sub%5C..%5C..%5Coutside.json",
    ".hidden.json",
    "sub/%2e%2e/%2e%2e/outside.json",
    "link.json",
    "linkdir/outside.json",
    "x%00.json",
    "C:%5Cwindows.json",
]


def test_no_path_outside_the_roots_can_be_read_or_written(serving: Serve, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": true}')

    async def scenario(server: Server) -> None:
        folder = server.settings.workflows
        os.symlink(outside, folder / "link.json")
        os.symlink(tmp_path, folder / "linkdir")
        for bad in BAD_PATHS:
            url = URL(f"{server.url}/api/workflows/{bad}", encoded=True)
            for method in ("GET", "PUT", "DELETE", "PATCH"):
                async with server.http.request(method, url, json=chain()) as response:
                    assert 400 <= response.status < 500, (method, bad, response.status)
                    assert "secret" not in await response.text()
        for bad in ("../outside.json", "/tmp/x.json", "a/../../x.json"):
            server.save("mine.json", chain())
            status, _ = await server.request(
                "PATCH", "/api/workflows/mine.json", json={"path": bad}
            )
            assert status == 400, bad
        for bad in ("data/..%2F..%2Foutside.json", "nodes/test_nodes.py", "data/graphbook.sqlite"):
            url = URL(f"{server.url}/api/media/file/{bad}", encoded=True)
            async with server.http.get(url) as response:
                assert 400 <= response.status < 500, bad
        assert outside.read_text() == '{"secret": true}'

    serving(scenario)


def test_oversized_bodies_and_messages_get_an_error(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        big = chain()
        big["doc"] = "x" * 5000
        status, reply = await server.put("/api/workflows/big.json", big)
        assert status == 413 and reply["error"]["code"] == "too_large"
        socket = await server.connect()
        await socket.ws.send_str('{"type": "ping", "ref": "' + "x" * 2000 + '"}')
        assert (await socket.until(p.Error)).code == "too_large"
        await socket.send(p.Ping(ref="ok"))
        assert (await socket.until(p.Pong)).ref == "ok"
        await socket.ws.send_str("y" * 10_000)
        closed = await socket.ws.receive(timeout=10)
        assert closed.type in (
            aiohttp.WSMsgType.CLOSE,
            aiohttp.WSMsgType.CLOSED,
            aiohttp.WSMsgType.ERROR,
        )
        assert (await server.get("/api/info"))[0] == 200, "the server goes on"

    serving(scenario, max_body=2000, max_message=1000)


def test_graphbook_serve_refuses_off_loopback_without_a_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from graphbook.cli import main

    monkeypatch.delenv("GRAPHBOOK_TOKEN", raising=False)
    folders = ["--workflows", str(tmp_path / "w"), "--nodes", str(tmp_path / "n")]
    assert main(["serve", "--host", "0.0.0.0", *folders, "--data", str(tmp_path / "d")]) == 2
    assert "--token" in capsys.readouterr().err
