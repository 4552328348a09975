"""Stop on `graphbook serve --ray` is the Stop of a local server: the run host is the Ray
driver, so node code that holds the GIL there is ended with the host, the actors it started
go with it (they belong to its Ray job), the run is recorded `stopped`, and the next run goes
to a fresh host on the same Ray and completes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fault_procs import alive, marks, project, serve, wait_until, workflow
from test_fault_stop import BOUND, answers_info, hog_workflow, host_of, record

STARTUP = 180.0
"""Seconds a host may take to join Ray and its actors to import and run a first task, on a
loaded machine."""


def test_stop_on_serve_ray_ends_a_node_holding_the_gil_and_takes_the_next_run(
    tmp_path: Path, ray_address: str, reap: list[int]
) -> None:
    pytest.importorskip("ray")
    folder = project(tmp_path)
    hog = hog_workflow(folder, "hog.json", arrays=True)
    quick = workflow(folder, "slow.json", "Slow", n=3)
    server = serve(folder, "--ray", ray_address, "--workers", "1")
    reap.append(server.process.pid)
    try:
        run = server.start(hog)
        wait_until(lambda: marks(folder, "hog"), "the node to take the GIL", STARTUP)
        host = host_of(server)
        actors = marks(folder, "arrays")
        assert actors and host not in actors, "the arrays were not loaded on a Ray actor"
        reap += actors
        assert answers_info(server) < 2.0
        began = time.monotonic()
        assert server.call("POST", "/api/runs/current/stop")[0] in (200, 202, 204)
        assert server.ended(run, timeout=BOUND) == "stopped"
        took = time.monotonic() - began
        assert took < BOUND, f"the stop took {took:.1f} s"
        wait_until(lambda: not alive(host), "the stopped run's host to end")
        wait_until(lambda: not any(map(alive, actors)), "the ended host's Ray actors to end")
        found = record(server, run)
        assert found["status"] == "stopped" and "did not stop" in found["error"]

        again = server.start(quick)
        assert server.ended(again, timeout=STARTUP) == "completed"
        loads = marks(folder, "load")
        assert len(loads) >= 1 and not set(loads) & {server.process.pid, host_of(server)}
        assert record(server, again)["status"] == "completed"
        assert server.process.poll() is None
    finally:
        err = server.stop()
    assert "Traceback" not in err, err
