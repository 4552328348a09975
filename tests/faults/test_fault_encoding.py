"""Strings that UTF-8 cannot encode (lone surrogates: a file name that is not UTF-8, a client's
"\\ud800") cross every boundary escaped as `\\udcxx`: the websocket, HTTP replies, the run
store (its older rows too), workflow files, the terminal and `run --json`."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from fault_procs import Served, env, project, serve

from graphbook.workflow import Workflow

BAD = "photo_\udce9.jpg"
"""What os.listdir gives for a file name holding the byte 0xE9 (not UTF-8)."""
SHOWN = "photo_\\udce9.jpg"
NODES = '''"""Nodes whose logs, outputs and errors hold a string that is not valid UTF-8."""

from typing import Any

from graphbook import source, step

BAD = "photo_\\udce9.jpg"


@step("Enc/Names")
@source()
def names(ctx: Any) -> Any:
    ctx.log(f"found {BAD}")
    yield {"name": BAD, BAD: 1}


@step("Enc/Fail")
def fail(ctx: Any, data: dict) -> None:
    raise ValueError(f"cannot open {data['name']}")
'''


def document(fail: bool = False, label: str = "names") -> dict[str, Any]:
    wf = Workflow()
    src = wf.add("Names", id="src")
    wf.nodes["src"] = replace(wf.nodes["src"], label=label)
    if fail:
        wf.connect(src, wf.add("Fail", id="fail"))
    return wf.to_json()


def old_rows(path: Path) -> None:
    """Rows as an earlier version wrote them: a JSON escape of a lone surrogate, and a text
    column holding bytes that are not UTF-8 (another process, a damaged write)."""
    from graphbook.store import Store

    Store(path)
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO runs (id, kind, name, status, config, counts, error, started, ended) "
            "VALUES ('old', 'workflow', 'old.json', 'failed', ?, ?, CAST(? AS TEXT), 1, 2)",
            ('{"params": {"src": {"p": "\\ud800"}}}', '{"src": {"out": 1}}', b"bad \xe9 byte"),
        )
        db.execute(
            "INSERT INTO run_nodes VALUES ('old', ?)",
            ('[{"node_id": "src", "title": "\\udce9", "state": "done"}]',),
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = project(tmp_path_factory.mktemp("encoding"))
    (folder / "nodes" / "enc_nodes.py").write_text(NODES)
    (folder / "workflows" / "names.json").write_text(json.dumps(document()))
    (folder / "workflows" / "fail.json").write_text(json.dumps(document(fail=True)))
    old_rows(folder / "data" / "graphbook.sqlite")
    served = serve(folder)
    yield served
    served.stop()


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


async def receive(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    message = await ws.receive(timeout=20)
    assert message.type == aiohttp.WSMsgType.TEXT, (message.type, message.data, message.extra)
    return dict(json.loads(message.data))


async def until(ws: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, Any]:
    while (message := await receive(ws))["type"] != kind:
        pass
    return message


async def run_and_watch(server: Served, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Run with a client connected; every message it got, then a new client's first two."""
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(server.url + "ws") as ws:
            seen = [await receive(ws), await receive(ws)]
            status, reply = await asyncio.to_thread(server.call, "POST", "/api/runs", body)
            assert status == 202, reply
            while seen[-1]["type"] != "run_finished":
                seen.append(await receive(ws))
            await ws.send_str(json.dumps({"type": "ping", "ref": "after"}))
            assert (await until(ws, "pong"))["ref"] == "after"
        async with http.ws_connect(server.url + "ws") as ws:
            seen += [await receive(ws), await receive(ws)]
    assert [m["type"] for m in seen[-2:]] == ["hello", "snapshot"]
    return seen


def test_a_node_logging_and_outputting_a_name_that_is_not_utf8(server: Served) -> None:
    seen = asyncio.run(run_and_watch(server, {"workflow": "fail.json"}))
    text = list(strings(seen))
    assert f"found {SHOWN}" in text and f"cannot open {SHOWN}" in "\n".join(text)
    run_id = seen[-1]["run"]["run_id"]
    for path in ("/api/runs/current", "/api/runs/last?workflow=fail.json", "/api/runs"):
        assert server.call("GET", path)[0] == 200, path
    status, details = server.call("GET", f"/api/runs/{run_id}/details")
    assert status == 200, details
    assert SHOWN in details["run"]["error"]
    logs = [log["message"] for node in details["nodes"] for log in node["logs"]]
    assert f"found {SHOWN}" in logs


def test_a_client_graph_with_a_label_that_is_a_lone_surrogate(server: Served) -> None:
    body = {"workflow": "names.json", "graph": document(label="\ud800")}
    seen = asyncio.run(run_and_watch(server, body))
    assert seen[-1]["run"]["status"] == "completed"
    assert server.call("GET", "/api/runs/current")[0] == 200


def test_a_ping_with_a_lone_surrogate_ref_is_answered(server: Served) -> None:
    async def ping() -> dict[str, Any]:
        async with aiohttp.ClientSession() as http, http.ws_connect(server.url + "ws") as ws:
            await ws.send_str('{"type": "ping", "ref": "\\ud800"}')
            return await until(ws, "pong")

    assert asyncio.run(ping())["ref"] == "\\ud800"


def test_a_saved_workflow_with_a_lone_surrogate_is_utf8_on_disk(server: Served) -> None:
    body = json.dumps(document(label="\udce9\ud800"))  # ASCII: the escapes as JSON has them
    status, saved = server.call("PUT", "/api/workflows/saved.json", json.loads(body))
    assert status == 200, saved
    folder = Path(server.call("GET", "/api/info")[1]["roots"]["workflows"])
    on_disk = (folder / "saved.json").read_bytes().decode("utf-8")
    assert "\\\\udce9\\\\ud800" in on_disk
    status, read = server.call("GET", "/api/workflows/saved.json")
    assert status == 200 and read["workflow"]["nodes"][0]["label"] == "\\udce9\\ud800"


def test_rows_an_older_version_wrote_read_back(server: Served) -> None:
    status, runs = server.call("GET", "/api/runs")
    assert status == 200, runs
    (old,) = [run for run in runs["runs"] if run["run_id"] == "old"]
    assert old["params"] == {"src": {"p": "\\ud800"}} and old["error"] == "bad \\udce9 byte"
    status, details = server.call("GET", "/api/runs/old/details")
    assert status == 200 and details["nodes"][0]["title"] == "\\udce9", details


@pytest.mark.parametrize("json_flag", [True, False])
def test_graphbook_run_writes_utf8(server: Served, json_flag: bool) -> None:
    folder = Path(server.call("GET", "/api/info")[1]["roots"]["workflows"]).parent
    command = [sys.executable, "-m", "graphbook", "run", "workflows/fail.json", "--nodes", "nodes"]
    done = subprocess.run(
        [*command, *(["--json"] if json_flag else [])],
        cwd=folder,
        env={**env(), "PYTHONIOENCODING": "utf-8:surrogateescape"},
        capture_output=True,
        timeout=120,
    )
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert done.returncode == 1, err
    assert "Traceback (most recent call last)" not in err.split("ValueError")[0]
    if json_flag:
        events = [json.loads(line) for line in out.splitlines()]
        assert f"found {SHOWN}" in list(strings(events))
    else:
        assert f"cannot open {SHOWN}" in err and f"found {SHOWN}" in out


def test_a_client_path_with_a_lone_surrogate_is_refused(server: Served) -> None:
    status, reply = server.call("POST", "/api/runs", {"workflow": "\ud800.json"})
    error = reply["error"]
    assert status == 400 and error["code"] == "bad_path", reply
    assert "lone surrogate" in error["message"], error
