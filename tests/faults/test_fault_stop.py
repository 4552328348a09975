"""Stop always ends a run within a bound a person can see, even when node code is blocked in C
in the run's own thread, and the server then takes new runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_procs import marks, project, serve, wait_until, workflow

BOUND = 15.0
"""Generous over the promised STOP_GRACE + ABANDON_GRACE (5 s), for a loaded machine."""


@pytest.mark.parametrize("workers", ["0", "1"])
def test_stop_ends_a_run_stuck_in_c_and_the_server_takes_new_runs(
    tmp_path: Path, workers: str
) -> None:
    folder = project(tmp_path)
    stuck = workflow(folder, "stuck.json", "Stuck")
    quick = workflow(folder, "slow.json", "Slow", n=2)
    server = serve(folder, "--workers", workers)
    try:
        run = server.start(stuck)
        wait_until(lambda: marks(folder, "stuck"), "the node to block")
        assert server.call("POST", "/api/runs/current/stop")[0] in (200, 202, 204)
        assert server.ended(run, timeout=BOUND) == "stopped"
        assert server.ended(server.start(quick)) == "completed"
        status, history = server.call("GET", "/api/runs")
        assert status == 200
        record = next(r for r in history["runs"] if r["run_id"] == run)
        assert record["status"] == "stopped" and "did not stop" in record["error"]
        assert server.process.poll() is None
    finally:
        err = server.stop()
    assert "left behind" in err
