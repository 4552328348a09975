"""The job queue over HTTP and the websocket, against one real `graphbook serve` process:
jobs run one after another, in the order the queue says; cancel, move, stop, ?wait; errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from graphbook import protocol as p
from tests.faults.fault_procs import Served, project, serve, wait_until, workflow


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project(tmp_path_factory.mktemp("jobs"))


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[Served]:
    workflow(folder, "long.json", "Slow", n=2000)
    workflow(folder, "short.json", "Slow", n=2)
    short = json.loads((folder / "workflows" / "short.json").read_text())
    short["nodes"][1]["type"] = "NoSuchNode"
    (folder / "workflows" / "broken.json").write_text(json.dumps(short))
    served = serve(folder)
    yield served
    served.stop()


@pytest.fixture(autouse=True)
def idle(server: Served) -> Iterator[None]:
    """Each test begins and ends with nothing queued or running."""
    yield
    for job in server.call("GET", "/api/jobs")[1]["queued"]:
        server.call("DELETE", f"/api/jobs/{job['id']}")
    try:
        wait_until(lambda: stopped(server), "the run to stop and the queue to idle")
    except AssertionError as failed:  # say what the server saw
        raise AssertionError(f"{failed}\n{seen(server)}") from None


def stopped(server: Served) -> bool:
    """Whether nothing runs; if something does, Stop it. A job's run may be going while
    /api/runs/current does not show it yet (its run process has not said it began): Stop is
    asked again until both the run and the queue are idle."""
    if server.call("GET", "/api/jobs")[1]["running"] is None and server.current() is None:
        return True
    server.call("POST", "/api/runs/current/stop")  # 409 while the job's run is being checked
    return False


def seen(server: Served) -> str:
    """The run, the queue and the tail of the log, as the server has them now."""
    jobs = server.call("GET", "/api/jobs")[1]
    log = "".join(server.err[-40:])
    return f"run: {server.current()}\nrunning job: {jobs['running']}\nthe server's log:\n{log}"


def submit(server: Served, name: str, **body: Any) -> dict[str, Any]:
    status, job = server.call("POST", "/api/jobs", {"workflow": name, **body})
    assert status == 201, job
    return dict(job)


def job(server: Served, job_id: str) -> dict[str, Any]:
    status, found = server.call("GET", f"/api/jobs/{job_id}")
    assert status == 200, found
    return dict(found)


def running(server: Served, job_id: str) -> dict[str, Any]:
    """Wait for the job to have a run going; the job."""
    return dict(wait_until(lambda: _has_run(job(server, job_id)), f"job {job_id} to run"))


def _has_run(found: dict[str, Any]) -> dict[str, Any] | None:
    return found if found["state"] == "running" and found["run_id"] else None


def queued_ids(server: Served) -> list[str]:
    return [j["id"] for j in server.call("GET", "/api/jobs")[1]["queued"]]


def test_jobs_run_one_after_another_in_the_queue_order(server: Served) -> None:
    first = submit(server, "long.json")
    second = submit(server, "short.json", overrides={"src": {"n": 3}})
    third = submit(server, "short.json")
    assert second["state"] == "queued"
    running(server, first["id"])
    assert queued_ids(server) == [second["id"], third["id"]]

    moved = server.call("POST", f"/api/jobs/{third['id']}/move", {"to": "up"})[1]
    assert moved["position"] == 0
    assert queued_ids(server) == [third["id"], second["id"]]

    status, stopped = server.call("POST", f"/api/jobs/{first['id']}/stop")
    assert status == 200, stopped
    waited = server.call("GET", f"/api/jobs/{second['id']}?wait=60")[1]
    assert waited["ended"] is True
    assert waited["job"]["state"] == "completed"
    assert waited["job"]["counts"]["src"]["out"] == 3, "the job's overrides were not used"
    done_third = job(server, third["id"])
    assert done_third["state"] == "completed"
    assert done_third["ended"] <= waited["job"]["started"], "moved up, it should have run first"
    assert job(server, first["id"])["state"] == "stopped"


def test_move_takes_top_bottom_and_an_index(server: Served) -> None:
    first = submit(server, "long.json")
    running(server, first["id"])
    a, b, c = (submit(server, "short.json")["id"] for _ in range(3))
    moves = [(a, "bottom", [b, c, a]), (a, "top", [a, b, c]), (c, 1, [a, c, b]), (b, 99, [a, c, b])]
    for job_id, to, order in moves:
        status, moved = server.call("POST", f"/api/jobs/{job_id}/move", {"to": to})
        assert status == 200, moved
        assert queued_ids(server) == order, f"move {to!r}"
        assert moved["position"] == order.index(job_id)


def test_a_cancelled_job_never_runs(server: Served) -> None:
    first = submit(server, "long.json")
    second = submit(server, "short.json")
    running(server, first["id"])
    status, cancelled = server.call("DELETE", f"/api/jobs/{second['id']}")
    assert (status, cancelled["state"]) == (200, "cancelled")
    assert queued_ids(server) == []
    server.call("POST", f"/api/jobs/{first['id']}/stop")
    wait_until(lambda: job(server, first["id"])["state"] == "stopped", "the job to stop")
    assert job(server, second["id"])["run_id"] is None
    listed = server.call("GET", "/api/jobs")[1]["finished"]
    assert [j["id"] for j in listed[:2]] == [first["id"], second["id"]]


def test_a_run_started_by_hand_is_refused_with_a_pointer_to_the_queue(server: Served) -> None:
    first = submit(server, "long.json")
    running(server, first["id"])
    status, reply = server.call("POST", "/api/runs", {"workflow": "short.json"})
    assert status == 409
    assert reply["error"]["code"] == "run_active"
    assert "POST /api/jobs" in reply["error"]["message"]


def test_an_inline_graph_runs_and_is_left_out_of_lists(server: Served, tmp_path: Path) -> None:
    first = submit(server, "long.json")
    graph = job(server, first["id"])["request"]["graph"]
    assert graph is None
    short = server.call("GET", "/api/workflows/short.json")[1]["workflow"]
    source = next(n for n in short["nodes"] if n["id"] == "src")
    source["params"]["n"] = 5
    inline = submit(server, "short.json", graph=short)
    assert inline["inline"] is True
    listed = server.call("GET", "/api/jobs")[1]["queued"]
    assert [(j["id"], j["request"]["graph"], j["inline"]) for j in listed] == [
        (inline["id"], None, True)
    ]
    assert job(server, inline["id"])["request"]["graph"] == short
    server.call("POST", f"/api/jobs/{first['id']}/stop")
    done = server.call("GET", f"/api/jobs/{inline['id']}?wait=60")[1]["job"]
    assert done["state"] == "completed", done["error"]
    assert done["counts"]["src"]["out"] == 5


def test_wait_answers_when_the_time_is_up(server: Served) -> None:
    first = submit(server, "long.json")
    running(server, first["id"])
    status, waited = server.call("GET", f"/api/jobs/{first['id']}?wait=0.3")
    assert status == 200
    assert (waited["ended"], waited["job"]["state"]) == (False, "running")


def test_a_job_that_could_not_start_is_refused_with_its_problems(server: Served) -> None:
    status, reply = server.call("POST", "/api/jobs", {"workflow": "broken.json"})
    assert (status, reply["error"]["code"]) == (422, "invalid_workflow"), reply
    assert "NoSuchNode" in json.dumps(reply["error"])
    body = {"workflow": "short.json", "overrides": {"src": {"n": "ten"}}}
    status, reply = server.call("POST", "/api/jobs", body)
    assert status == 422 and "'n'" in json.dumps(reply["error"]), reply
    assert queued_ids(server) == [] and server.call("GET", "/api/jobs")[1]["running"] is None


def test_a_job_whose_workflow_broke_while_it_waited_fails_and_the_queue_goes_on(
    server: Served, folder: Path
) -> None:
    first = submit(server, "long.json")
    running(server, first["id"])
    (folder / "workflows" / "later.json").write_text(
        (folder / "workflows" / "short.json").read_text()
    )
    waiting = submit(server, "later.json")
    after = submit(server, "short.json")
    (folder / "workflows" / "later.json").write_text(
        (folder / "workflows" / "broken.json").read_text()
    )
    server.call("POST", f"/api/jobs/{first['id']}/stop")
    ended = server.call("GET", f"/api/jobs/{waiting['id']}?wait=30")[1]["job"]
    assert ended["state"] == "failed"
    assert "could not start" in ended["error"] and "NoSuchNode" in ended["error"]
    done = server.call("GET", f"/api/jobs/{after['id']}?wait=30")[1]
    assert (done["ended"], done["job"]["state"]) == (True, "completed")


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("GET", "/api/jobs/nosuchjob", None, 404, "not_found"),
        ("DELETE", "/api/jobs/nosuchjob", None, 404, "not_found"),
        ("POST", "/api/jobs/nosuchjob/move", {"to": "up"}, 404, "not_found"),
        ("POST", "/api/jobs", {"overrides": {}}, 400, "bad_message"),
        ("POST", "/api/jobs", {"workflow": "missing.json"}, 404, "not_found"),
        ("POST", "/api/jobs", {"workflow": "../outside.json"}, 400, "bad_path"),
        ("POST", "/api/jobs", {"workflow": "short.json", "mode": "sometimes"}, 400, "bad_message"),
        ("GET", "/api/jobs/nosuchjob?wait=forever", None, 400, "bad_message"),
        ("GET", "/api/jobs/nosuchjob?wait=301", None, 400, "bad_message"),
    ],
)
def test_bad_requests_say_what_is_wrong(
    server: Served, method: str, path: str, body: Any, status: int, code: str
) -> None:
    got, reply = server.call(method, path, body)
    assert (got, reply["error"]["code"]) == (status, code), reply
    assert reply["error"]["message"]


def test_only_queued_jobs_move_or_cancel_and_only_running_ones_stop(server: Served) -> None:
    first = submit(server, "long.json")
    second = submit(server, "short.json")
    running(server, first["id"])
    status, reply = server.call("DELETE", f"/api/jobs/{first['id']}")
    assert (status, reply["error"]["code"]) == (409, "conflict")
    assert "/stop" in reply["error"]["message"]
    status, reply = server.call("POST", f"/api/jobs/{second['id']}/stop")
    assert status == 409 and "only the running job" in reply["error"]["message"]
    status, reply = server.call("POST", f"/api/jobs/{second['id']}/move", {"to": "sideways"})
    assert (status, reply["error"]["code"]) == (400, "bad_message")
    server.call("DELETE", f"/api/jobs/{second['id']}")
    status, reply = server.call("POST", f"/api/jobs/{second['id']}/cancel")
    assert status == 409 and "cancelled, not queued" in reply["error"]["message"]


def test_every_websocket_client_sees_the_queue(server: Served) -> None:
    seen = asyncio.run(_watch(server))
    assert seen[0]["type"] == "jobs", "a client should get the queue as it connects"
    assert any(
        m["running"] and m["running"]["request"]["workflow"] == "long.json" for m in seen[1:]
    )
    assert any(m["queued"] and m["queued"][0]["request"]["workflow"] == "short.json" for m in seen)


async def _watch(server: Served) -> list[dict[str, Any]]:
    """The `jobs` messages a websocket client gets while two jobs are added."""
    seen: list[dict[str, Any]] = []
    async with aiohttp.ClientSession() as http, http.ws_connect(server.url + "ws") as ws:
        await asyncio.to_thread(submit, server, "long.json")
        await asyncio.to_thread(submit, server, "short.json")
        while not any(m["queued"] for m in seen):
            message = await asyncio.wait_for(ws.receive_json(), 20)
            if message["type"] == "jobs":
                seen.append(message)
    return seen


def test_an_old_store_opens_with_an_empty_queue(tmp_path: Path) -> None:
    """A store made before the queue existed gets its table when the server opens it."""
    import sqlite3

    data = tmp_path / "data"
    data.mkdir()
    old = sqlite3.connect(data / "graphbook.sqlite")
    old.executescript(
        "CREATE TABLE runs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, "
        "status TEXT NOT NULL, config TEXT NOT NULL DEFAULT '{}', counts TEXT NOT NULL "
        "DEFAULT '{}', error TEXT, started REAL NOT NULL, ended REAL)"
    )
    old.close()
    folder = project(tmp_path)
    workflow(folder, "short.json", "Slow", n=1)
    served = serve(folder)
    try:
        assert served.call("GET", "/api/jobs")[1] == {"queued": [], "running": None, "finished": []}
        added = submit(served, "short.json")
        done = served.call("GET", f"/api/jobs/{added['id']}?wait=30")[1]
        assert done["job"]["state"] == "completed"
    finally:
        served.stop()


def test_jobs_an_earlier_version_stored_load_and_run(tmp_path: Path) -> None:
    """Job rows as the queue wrote them before (a request without `inputs`, one without
    `overrides` and `inputs`) are read back as the one run request and run."""
    from graphbook.store import JobRecord, Store

    folder = project(tmp_path)
    workflow(folder, "short.json", "Slow", n=1)
    (folder / "data").mkdir()
    store = Store(folder / "data" / "graphbook.sqlite")
    common: dict[str, Any] = {"workflow": "short.json", "mode": "all", "node": None, "graph": None}
    rows: dict[str, dict[str, Any]] = {
        "older": {**common, "continue_on_error": False, "retry_interrupted": False},
        "old": {**common, "continue_on_error": True, "overrides": {"src": {"n": 3}}},
    }
    for rank, (job_id, request) in enumerate(rows.items()):
        store.save_job(JobRecord(job_id, "queued", request, 1.0 + rank, rank))
    served = serve(folder)
    try:
        for job_id, stored in rows.items():
            done = served.call("GET", f"/api/jobs/{job_id}?wait=30")[1]
            assert done["job"]["state"] == "completed", done
            assert done["job"]["request"] == {**p.to_json(p.RunRequest("short.json")), **stored}
        assert done["job"]["counts"]["node"] == {"out": 3}, "the stored override held"
    finally:
        served.stop()
