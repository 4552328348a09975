"""Chaos: `kill -9` the server with three jobs queued and one of them running. Restarted on the
same folders, the queue goes on in order: nothing queued is lost, and the job that was running
ends `interrupted`, or runs again first when its request asked for `retry_interrupted`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fault_procs import Served, project, serve, wait_until, workflow

from graphbook.store import Store

pytestmark = pytest.mark.chaos


def submit(server: Served, name: str, **body: Any) -> str:
    status, job = server.call("POST", "/api/jobs", {"workflow": name, **body})
    assert status == 201, job
    return str(job["id"])


def job(server: Served, job_id: str) -> dict[str, Any]:
    status, found = server.call("GET", f"/api/jobs/{job_id}")
    assert status == 200, found
    return dict(found)


def kill(server: Served) -> None:
    server.process.kill()
    server.process.wait(30)
    server.stop()  # reads its pipes to the end and closes them


@pytest.mark.parametrize("retry", [False, True], ids=["interrupted", "retried"])
def test_queued_jobs_survive_kill_9_and_run_in_order(
    tmp_path: Path, reap: list[int], retry: bool
) -> None:
    folder = project(tmp_path)
    workflow(folder, "first.json", "Slow", n=12)
    workflow(folder, "short.json", "Slow", n=2)
    server = serve(folder)
    reap.append(server.process.pid)
    first = submit(server, "first.json", retry_interrupted=retry)
    second = submit(server, "short.json", overrides={"src": {"n": 3}})
    third = submit(server, "short.json")
    store = Store(folder / "data" / "graphbook.sqlite")
    wait_until(lambda: store.get_job(first).run_id, "the first job's run to be recorded")
    kill(server)

    again = serve(folder)
    reap.append(again.process.pid)
    try:
        ended = {i: again.call("GET", f"/api/jobs/{i}?wait=60")[1] for i in (first, second, third)}
        assert all(e["ended"] for e in ended.values()), ended
        one, two, three = (ended[i]["job"] for i in (first, second, third))
        assert (two["state"], three["state"]) == ("completed", "completed"), (two, three)
        assert two["counts"]["src"]["out"] == 3, "the queued job lost its overrides"
        assert two["ended"] <= three["started"], "the queue did not keep its order"
        if retry:
            assert one["state"] == "completed" and one["attempts"] == 2
            assert one["ended"] <= two["started"], "a retried job goes back to the head"
        else:
            assert one["state"] == "interrupted" and one["attempts"] == 1
            assert "the server ended while it ran" in one["error"]
            assert one["ended"] <= two["started"]
    finally:
        again.stop()
