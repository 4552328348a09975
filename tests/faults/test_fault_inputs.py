"""Bad input is a 4xx with a clear message, never a 500; the Host check reads the raw header;
saves keep the file's mode, stale temporary files are cleaned at start, a missing file is 404."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from fault_procs import Served, project, serve

from graphbook.workflow import Workflow

DOCUMENT = json.dumps(Workflow().to_json()).encode()


def send(server: Served, head: str, body: bytes = b"") -> tuple[int, str]:
    """One raw HTTP/1.1 request (headers exactly as given); the status and the body."""
    request = head.replace("\n", "\r\n") + f"Content-Length: {len(body)}\r\n"
    request += "Connection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as connection:
        connection.sendall(request.encode("latin-1") + body)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    status_line, _, rest = reply.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2].decode("utf-8", "replace")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = project(tmp_path_factory.mktemp("inputs"))
    workflows = folder / "workflows"
    (workflows / "loop.json").symlink_to("loop.json")
    (workflows / "kept.json").write_bytes(DOCUMENT)
    (workflows / "kept.json").chmod(0o640)
    (workflows / ".kept.json.ab12cd_3.tmp").write_text('{"half": ')
    (workflows / "sub").mkdir()
    (workflows / "sub" / ".x.json.zz99zz99.tmp").write_text("")
    (workflows / ".notes.tmp").write_text("someone's own file")
    served = serve(folder)
    yield served
    served.stop()


def folder_of(server: Served) -> Path:
    return Path(server.call("GET", "/api/info")[1]["roots"]["workflows"])


GET = "GET {path} HTTP/1.1\nHost: {host}\n"
BAD_INPUT = {
    "symlink loop": GET.format(path="/api/workflows/loop.json", host="localhost"),
    "300-character name": GET.format(path=f"/api/workflows/{'a' * 300}.json", host="localhost"),
    "port not a number": GET.format(path="/api/info", host="127.0.0.1:abc"),
    "IPv6 without brackets": GET.format(path="/api/info", host="::1"),
    "userinfo in Host": GET.format(path="/api/info", host="evil.example@localhost"),
    "absolute-form target": GET.format(path="http://localhost/api/info", host="localhost"),
    "two Host headers": GET.format(path="/api/info", host="localhost\nHost: evil.example"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_a_4xx_with_a_message(server: Served, case: str) -> None:
    status, body = send(server, BAD_INPUT[case])
    assert 400 <= status < 500, (status, body)
    assert body.strip(), "a refusal says why"
    if body.startswith("{"):  # ours; aiohttp itself refuses two Host headers, in plain text
        error = json.loads(body)["error"]
        assert error["code"] != "internal" and error["message"]


def test_a_long_name_is_refused_when_saving_too(server: Served) -> None:
    head = f"PUT /api/workflows/{'b' * 300}.json HTTP/1.1\nHost: localhost\n"
    status, body = send(server, head + "Content-Type: application/json\n", DOCUMENT)
    assert status == 400 and "at most 255 bytes" in body


def test_a_token_that_is_not_ascii_is_a_401(tmp_path: Path) -> None:
    served = serve(project(tmp_path), "--token", "s3cret")
    try:
        head = "GET /api/info HTTP/1.1\nHost: localhost\nX-Graphbook-Token: s\xe9cret\xff\n"
        status, body = send(served, head)
        assert status == 401 and "token" in body
        assert (
            send(served, "GET /api/info HTTP/1.1\nHost: localhost\nX-Graphbook-Token: s3cret\n")[0]
            == 200
        )
    finally:
        served.stop()


def test_a_write_with_two_origins_is_refused(server: Served) -> None:
    own = f"http://localhost:{server.port}"
    head = f"PUT /api/workflows/two.json HTTP/1.1\nHost: localhost:{server.port}\n"
    head += "Content-Type: application/json\n"
    assert send(server, head + f"Origin: {own}\n", DOCUMENT)[0] == 200
    status, body = send(server, head + f"Origin: {own}\nOrigin: http://evil.example\n", DOCUMENT)
    assert status == 403 and "one Origin" in body


def test_saves_keep_the_mode_and_new_files_get_the_umask_mode(server: Served) -> None:
    folder = folder_of(server)
    umask = os.umask(0o022)
    os.umask(umask)
    assert server.call("PUT", "/api/workflows/kept.json", Workflow().to_json())[0] == 200
    assert stat.S_IMODE((folder / "kept.json").stat().st_mode) == 0o640
    assert server.call("PUT", "/api/workflows/new.json", Workflow().to_json())[0] == 200
    assert stat.S_IMODE((folder / "new.json").stat().st_mode) == 0o666 & ~umask


def test_temporaries_of_killed_saves_are_removed_at_start(server: Served) -> None:
    folder = folder_of(server)
    assert not (folder / ".kept.json.ab12cd_3.tmp").exists()
    assert not (folder / "sub" / ".x.json.zz99zz99.tmp").exists()
    assert (folder / ".notes.tmp").exists(), "a file that is not a save's temporary is kept"


def test_deleting_a_missing_file_is_a_404(server: Served) -> None:
    status, reply = server.call("DELETE", "/api/workflows/never-was.json")
    assert status == 404 and "never-was.json" in reply["error"]["message"]


def gzip_bomb(mebibytes: int) -> bytes:
    """`mebibytes` MiB of zeros, gzipped (about 1 KB on the wire per MiB)."""
    compress = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * (1 << 20)
    return b"".join([*(compress.compress(zeros) for _ in range(mebibytes)), compress.flush()])


def peak_memory(pid: int) -> int:
    """The most memory the process has held at once (its peak resident set), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")


STALLED = 5.0
"""Seconds /api/info may take beside the bomb (a loaded machine) before the server counts as
stalled: inflating the whole GiB here takes longer, and holds it in memory (checked apart)."""


def test_a_gzip_bomb_is_refused_by_its_size_without_stalling_the_server(server: Served) -> None:
    body = gzip_bomb(1024)
    head = "PUT /api/workflows/bomb.json HTTP/1.1\nHost: localhost\n"
    head += "Content-Type: application/json\nContent-Encoding: gzip\n"
    worst, answered, done = 0.0, 0, threading.Event()

    def probe() -> None:
        nonlocal worst, answered
        while not done.is_set():
            began = time.monotonic()
            assert server.call("GET", "/api/info")[0] == 200
            worst, answered = max(worst, time.monotonic() - began), answered + 1

    before = peak_memory(server.process.pid)
    prober = threading.Thread(target=probe)
    prober.start()
    try:
        status, reply = send(server, head, body)
    finally:
        done.set()
        prober.join()
    grew = peak_memory(server.process.pid) - before
    assert grew < 128 << 20, f"the server held {grew >> 20} MiB more: it inflated the bomb"
    assert status == 413 and "too large" in reply, reply
    assert answered and worst < STALLED, f"/api/info took {worst:.2f} s beside the bomb"


def test_a_websocket_message_of_5_mib_is_closed_with_1009(server: Served) -> None:
    """Over four times the message limit (1 MiB) the connection closes with code 1009, a clean
    close the client reads (not a reset midway through its send); the server goes on."""

    async def send_big() -> tuple[aiohttp.WSMsgType, int | None]:
        async with aiohttp.ClientSession() as http, http.ws_connect(server.url + "ws") as ws:
            await ws.send_str("x" * (5 << 20))
            while (message := await ws.receive(timeout=20)).type == aiohttp.WSMsgType.TEXT:
                pass
            return message.type, ws.close_code

    assert asyncio.run(send_big()) == (aiohttp.WSMsgType.CLOSE, 1009)
    assert server.call("GET", "/api/info")[0] == 200
