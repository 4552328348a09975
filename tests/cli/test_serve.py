"""`graphbook serve`, run for real: it says where it listens, and stops cleanly on a signal."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVING = re.compile(r"Graphbook is serving on (http://127\.0\.0\.1:(\d+)/)")


def serve(folder: Path, *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "graphbook", "serve", "--no-watch", *args]
    command += ["--data", str(folder / "data"), "--media", str(folder / "media")]
    return subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def first_line(process: subprocess.Popen[str], timeout: float = 60) -> str:
    """The first line the server prints, or a failure showing what it printed on stderr."""
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    stdout = process.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        process.kill()
        _out, err = process.communicate()
        pytest.fail(f"graphbook serve printed no line in {timeout} s; stderr:\n{err}")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_port_0_prints_the_port_it_listens_on_and_that_url_answers(tmp_path: Path) -> None:
    process = serve(tmp_path, "--port", "0")
    try:
        line = first_line(process)
        found = SERVING.search(line)
        assert found, f"expected 'Graphbook is serving on http://127.0.0.1:PORT/', got {line!r}"
        url, port = found.group(1), int(found.group(2))
        assert port != 0
        info = get_json(url + "api/info")
        assert info["version"] == 1 and info["token_required"] is False
        assert "Split" in {n["name"] for n in get_json(url + "api/catalog")["nodes"]}
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err


def test_a_port_in_use_is_an_error_not_a_silent_start(tmp_path: Path) -> None:
    first = serve(tmp_path, "--port", "0")
    try:
        found = SERVING.search(first_line(first))
        assert found
        second = serve(tmp_path, "--port", found.group(2))
        out, err = second.communicate(timeout=60)
        assert second.returncode == 2 and "serving" not in out
        assert "error" in err and found.group(2) in err
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
    assert first.returncode == 0


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_serve_at_once_with_a_websocket_client_connected(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """An open websocket used to hold the shutdown until aiohttp's 60 s timeout, while the page
    still showed "connected"; now the server closes it (1001, going away) as it stops."""
    process = serve(tmp_path, "--port", "0")
    found = SERVING.search(first_line(process))
    assert found, "the server did not say where it listens"
    url = found.group(1)

    async def connected_while_stopping() -> tuple[str, int | None, float]:
        async with aiohttp.ClientSession() as client, client.ws_connect(url + "ws") as ws:
            hello = await ws.receive_json(timeout=10)
            assert hello["instance"] == get_json(url + "api/info")["instance"]
            process.send_signal(signum)
            signalled = time.monotonic()
            while (await ws.receive(timeout=10)).type == aiohttp.WSMsgType.TEXT:
                pass  # the snapshot, then the close
            return hello["instance"], ws.close_code, signalled

    try:
        instance, code, signalled = asyncio.run(connected_while_stopping())
        process.communicate(timeout=10)
        exited_after = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert instance, "hello names the server process"
    assert code == 1001, f"the socket was closed with {code}, not 1001 (going away)"
    assert exited_after < 2.5, f"serve took {exited_after:.1f} s to exit after the signal"
    assert process.returncode == 0


def test_graphbook_app_serves_one_workflow_as_an_app_and_nothing_else(tmp_path: Path) -> None:
    from graphbook.templates import template

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "classify.json").write_text(
        json.dumps(template("classify-folder").workflow())
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "graphbook", "app", "mine/classify.json", "--port", "0"]
    command += ["--no-browser", "--no-watch", "--data", str(tmp_path / "data")]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = first_line(process)
        found = re.search(
            r"The app classify.json is at (http://127\.0\.0\.1:\d+/)app/classify.json", line
        )
        assert found, line
        app = get_json(found.group(1) + "api/apps/classify.json")
        assert app["apps_only"] is True and set(app["schema"]["properties"]) == {
            "folder",
            "threshold",
        }
        request = urllib.request.Request(
            found.group(1) + "api/workflows/classify.json", method="DELETE"
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 403
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    assert (tmp_path / "mine" / "classify.json").is_file()
    missing = subprocess.run(
        [sys.executable, "-m", "graphbook", "app", "nowhere.json", "--no-browser"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert missing.returncode == 2 and "no workflow file nowhere.json" in missing.stderr
