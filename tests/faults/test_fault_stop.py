"""Stop always ends a run within a bound a person can see, whatever its node code does (blocked
in C, holding the GIL): the run host it runs in is ended, with its worker processes and their
shared memory; the run is recorded `stopped` with what its nodes did; the server answers
throughout and takes the next run, which plans its nodes from what is truly cached. On
`graphbook serve --ray` too: the run host is then the Ray driver."""

from __future__ import annotations

import json
import os
import random
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from fault_procs import Served, alive, marks, project, reaping, serve, wait_until, workflow

BOUND = 15.0
"""Generous over the promised STOP_GRACE (2 s) and a host's end, for a loaded machine."""
ANSWER = 2.0
"""Seconds within which /api/info must answer while a node holds the GIL."""
SHM = Path("/dev/shm")


def hog_workflow(folder: Path, name: str, arrays: bool = False) -> str:
    """Count(6) -> [Arrays: a worker load through shared memory ->] Hog (holds the GIL)."""
    from graphbook.workflow import Workflow

    wf = Workflow()
    mark = str(folder / "marks")
    previous = wf.add("Count", id="src", n=6, marks=mark)
    if arrays:
        node = wf.add("Arrays", id="arrays")
        wf.connect(previous, node)
        previous = node
    wf.connect(previous, wf.add("Hog", id="hog", marks=mark))
    (folder / "workflows" / name).write_text(json.dumps(wf.to_json()))
    return name


def chain(folder: Path, name: str, nodes: int, items: int = 3) -> str:
    """Count(items) -> Relay -> ... : `nodes` nodes in a line."""
    from graphbook.workflow import Workflow

    wf = Workflow()
    previous = wf.add("Count", id="n0", n=items, marks="")
    for i in range(1, nodes):
        node = wf.add("Relay", id=f"n{i}")
        wf.connect(previous, node)
        previous = node
    (folder / "workflows" / name).write_text(json.dumps(wf.to_json()))
    return name


def answers_info(server: Served) -> float:
    """Seconds /api/info took to answer (fails past ANSWER)."""
    began = time.monotonic()
    with urllib.request.urlopen(server.url + "api/info", timeout=ANSWER) as response:
        assert response.status == 200
    return time.monotonic() - began


def host_of(server: Served) -> int:
    """The run host's process id: the server's one run host."""
    from fault_procs import run_hosts

    found = wait_until(lambda: run_hosts(server.process.pid), "the run host to start")
    assert len(found) == 1, f"the server has run hosts {found}, not one"
    return int(found[0])


def record(server: Served, run_id: str) -> dict[str, Any]:
    status, history = server.call("GET", "/api/runs")
    assert status == 200
    return dict(next(r for r in history["runs"] if r["run_id"] == run_id))


def nodes_of(snapshot: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["node_id"]: node for node in snapshot["nodes"]}


def segments_of(pids: list[int]) -> list[str]:
    """Shared memory segments made by these processes (named `graphbook_<pool>_<pid>_<n>`)."""
    tags = {f"_{pid}_" for pid in pids}
    return [p.name for p in SHM.glob("graphbook_*") if any(tag in p.name for tag in tags)]


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
        host = host_of(server)
        assert server.call("POST", "/api/runs/current/stop")[0] in (200, 202, 204)
        assert server.ended(run, timeout=BOUND) == "stopped"
        wait_until(lambda: not alive(host), "the stopped run's host to end")
        assert server.ended(server.start(quick)) == "completed"
        found = record(server, run)
        assert found["status"] == "stopped" and "did not stop" in found["error"]
        assert server.process.poll() is None
    finally:
        err = server.stop()
    assert "left behind" not in err


@pytest.mark.parametrize("leave", [False, True], ids=["in-group", "left-group"])
def test_stop_ends_a_run_whose_node_forked_a_child_that_never_exits(
    tmp_path: Path, leave: bool
) -> None:
    """The fork holds the run host's pipe open: the run still ends `stopped`, the fork ends
    with the host's process group (one that left the group lives on, but holds nothing up),
    and the server takes the next run."""
    folder = project(tmp_path)
    forking = workflow(folder, "fork.json", "Fork", n=1)
    if leave:
        document = json.loads((folder / "workflows" / forking).read_text())
        next(n for n in document["nodes"] if n["id"] == "node")["params"]["leave"] = True
        (folder / "workflows" / forking).write_text(json.dumps(document))
    quick = workflow(folder, "slow.json", "Slow", n=1)
    server = serve(folder)
    forked: list[int] = []
    try:
        run = server.start(forking)
        forked += wait_until(lambda: marks(folder, "forked"), "the node's fork to start")
        wait_until(lambda: marks(folder, "fork"), "the node to block")
        assert server.call("POST", "/api/runs/current/stop")[0] in (200, 202, 204)
        assert server.ended(run, timeout=BOUND) == "stopped"
        if not leave:
            wait_until(lambda: not alive(forked[0]), "the fork to end with the run host")
        assert server.ended(server.start(quick)) == "completed"
    finally:
        with reaping() as pids:  # first: a live fork holds the server's output pipes open
            pids += forked
        server.stop()


def test_stop_ends_a_node_holding_the_gil_while_the_server_answers(tmp_path: Path) -> None:
    folder = project(tmp_path)
    hog = hog_workflow(folder, "hog.json")
    server = serve(folder)
    try:
        run = server.start(hog)
        wait_until(lambda: marks(folder, "hog"), "the node to take the GIL")
        assert answers_info(server) < ANSWER
        began = time.monotonic()
        assert server.call("POST", "/api/runs/current/stop")[0] in (200, 202, 204)
        assert answers_info(server) < ANSWER
        assert server.ended(run, timeout=BOUND) == "stopped"
        took = time.monotonic() - began
        assert took < BOUND, f"the stop took {took:.1f} s"
        status, details = server.call("GET", f"/api/runs/{run}/details")
        assert status == 200, details
        saved = nodes_of(details)
        assert saved["src"]["counts"].get("out", 0) >= 1, saved["src"]
        assert saved["hog"]["state"] in ("running", "stopped"), saved["hog"]
        assert record(server, run)["status"] == "stopped"
    finally:
        server.stop()


def test_a_stopped_host_leaves_no_worker_or_shared_memory(tmp_path: Path) -> None:
    folder = project(tmp_path)
    hog = hog_workflow(folder, "arrays.json", arrays=True)
    server = serve(folder, "--workers", "2")
    try:
        run = server.start(hog)
        wait_until(lambda: marks(folder, "hog"), "the node to take the GIL")
        host = host_of(server)
        from fault_procs import descendants

        everyone = [host, *descendants(host)]
        assert len(everyone) >= 2, "the run started no worker process"
        assert marks(folder, "arrays"), "no array went through a worker"
        assert server.call("POST", "/api/runs/current/stop")[0] in (200, 202, 204)
        assert server.ended(run, timeout=BOUND) == "stopped"
        wait_until(lambda: not any(alive(pid) for pid in everyone), f"{everyone} to end")
        wait_until(lambda: not segments_of(everyone), "their shared memory to be unlinked")
    finally:
        server.stop()


def test_the_run_after_a_stop_plans_from_what_is_truly_cached(tmp_path: Path) -> None:
    folder = project(tmp_path)
    kept = chain(folder, "kept.json", 4)
    other = chain(folder, "other.json", 3)
    hog = hog_workflow(folder, "hog.json")
    server = serve(folder)
    try:
        assert server.ended(server.start(kept)) == "completed"
        run = server.start(hog)
        wait_until(lambda: marks(folder, "hog"), "the node to take the GIL")
        server.call("POST", "/api/runs/current/stop")
        assert server.ended(run, timeout=BOUND) == "stopped"
        again = server.start(kept)
        assert server.ended(again) == "completed"
        nodes = nodes_of(server.last())
        causes = {node["cause"] for node in nodes.values()}
        assert causes == {"lost"}, nodes  # its outputs were in the host that was ended
        assert "was ended" in nodes["n3"]["reason"]
        assert nodes["n3"]["counts"] == {"out": 3}
        assert server.ended(server.start(kept)) == "completed"
        assert {n["action"] for n in nodes_of(server.last()).values()} == {"reuse"}
        assert server.ended(server.start(other)) == "completed"
        assert {n["cause"] for n in nodes_of(server.last()).values()} == {"new"}
    finally:
        server.stop()


def test_stop_at_random_moments_never_records_failed_nor_spoils_the_cache(
    tmp_path: Path,
) -> None:
    rng = random.Random(int(os.environ.get("GRAPHBOOK_CHAOS_SEED", "25")))
    folder = project(tmp_path)
    server = serve(folder)
    try:
        for i, nodes in enumerate([1, 40, 400, 1]):
            name = chain(folder, f"chain{i}.json", nodes)
            run = server.start(name)
            if rng.random() < 0.5:  # else at once
                started = lambda r=run: (server.last() or {}).get("run_id") == r  # noqa: E731
                wait_until(started, "the run to start")
            server.call("POST", "/api/runs/current/stop")
            assert server.ended(run, timeout=BOUND + nodes / 20) in ("stopped", "completed")
            assert record(server, run)["status"] != "failed"
            again = server.start(name)
            assert server.ended(again, timeout=BOUND + nodes / 4) == "completed"
            last = nodes_of(server.last())[f"n{nodes - 1}"]
            assert last["counts"] == {"out": 3}, last  # nothing reused that was not whole
    finally:
        server.stop()


RAY_STARTUP = 180.0
"""Seconds a host may take to join Ray and its actors to import and run a first task, on a
loaded machine."""


def stuck_and_hog(folder: Path, name: str) -> str:
    """Count(3) -> DumpHang (its dump blocks a dump actor in C) and -> Arrays (loads on a load
    actor) -> Hog (holds the host's GIL, once the pool has handed out the dumps and loads)."""
    from graphbook.workflow import Workflow

    wf = Workflow()
    mark = str(folder / "marks")
    src = wf.add("Count", id="src", n=3, marks=mark)
    wf.connect(src, wf.add("DumpHang", id="dump"))
    arrays = wf.add("Arrays", id="arrays")
    wf.connect(src, arrays)
    wf.connect(arrays, wf.add("Hog", id="hog", marks=mark))
    (folder / "workflows" / name).write_text(json.dumps(wf.to_json()))
    return name


def loads_now(folder: Path) -> set[int]:
    """The processes that ran load functions since the last call (their marks are taken)."""
    found = set()
    for path in (folder / "marks").glob("load.*"):
        found.add(int(path.suffix[1:]))
        path.unlink()
    return found


def test_stop_on_serve_ray_ends_the_host_keeps_idle_actors_and_takes_the_next_run(
    tmp_path: Path, ray_address: str, reap: list[int]
) -> None:
    """The host (Ray's driver) holding the GIL and a dump actor blocked in C: Stop ends both,
    the idle load actor stays warm and runs the next host's run, which completes, and the
    server's end takes the actors with it."""
    pytest.importorskip("ray")
    folder = project(tmp_path)
    stuck = stuck_and_hog(folder, "stuck.json")
    quick = workflow(folder, "slow.json", "Slow", n=6)
    server = serve(folder, "--ray", ray_address, "--workers", "1")
    reap.append(server.process.pid)
    try:
        run = server.start(stuck)
        wait_until(lambda: marks(folder, "hog") and marks(folder, "dump"), "hog and dump", 180)
        host, warm, blocked = host_of(server), set(marks(folder, "arrays")), marks(folder, "dump")
        reap += [*warm, *blocked]
        assert len(warm) == 1 and host not in warm and not warm & set(blocked), (warm, blocked)
        assert answers_info(server) < 2.0
        began = time.monotonic()
        assert server.call("POST", "/api/runs/current/stop")[0] in (200, 202, 204)
        assert server.ended(run, timeout=BOUND) == "stopped"
        took = time.monotonic() - began
        assert took < BOUND, f"the stop took {took:.1f} s"
        wait_until(lambda: not alive(host), "the stopped run's host to end")
        found = record(server, run)
        assert found["status"] == "stopped" and "did not stop" in found["error"]

        again = server.start(quick)
        assert server.ended(again, timeout=RAY_STARTUP) == "completed"
        wait_until(lambda: not any(map(alive, blocked)), "the blocked actor to be ended")
        assert loads_now(folder) == warm, "the next run did not go to the kept load actor"
        assert record(server, again)["status"] == "completed"
    finally:
        err = server.stop()
    wait_until(lambda: not any(map(alive, reap[1:])), "the server's actors to end with it")
    assert "Traceback" not in err, err


def test_actors_of_a_killed_serve_ray_end_when_their_lease_runs_out(
    tmp_path: Path, ray_address: str, reap: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray")
    monkeypatch.setenv("GRAPHBOOK_RAY_LEASE", "4")
    folder = project(tmp_path)
    quick = workflow(folder, "slow.json", "Slow", n=4)
    longer = workflow(folder, "longer.json", "Slow", n=30)
    server = serve(folder, "--ray", ray_address, "--workers", "1")
    reap.append(server.process.pid)
    try:
        assert server.ended(server.start(quick), timeout=RAY_STARTUP) == "completed"
        actors = loads_now(folder)
        reap += actors
        began = time.monotonic()  # 30 loads of 0.2 s: a run longer than the lease
        assert server.ended(server.start(longer), timeout=RAY_STARTUP) == "completed"
        assert time.monotonic() - began > 4 and loads_now(folder) == actors
        server.process.kill()
        wait_until(lambda: not any(map(alive, actors)), "the killed server's actors to end", 30)
    finally:
        server.stop()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_a_job_and_its_run_ended_by_the_servers_end_agree(
    tmp_path: Path, how: signal.Signals
) -> None:
    """SIGTERM or SIGINT to the server mid-run: the next server says the job and its run were
    both `interrupted`."""
    folder = project(tmp_path)
    slow = workflow(folder, "slow.json", "Slow", n=500)
    server = serve(folder)
    try:
        status, job = server.call("POST", "/api/jobs", {"workflow": slow})
        assert status in (200, 201, 202), job
        wait_until(lambda: marks(folder, "load"), "the job's run to be going")
        run = wait_until(
            lambda: server.call("GET", f"/api/jobs/{job['id']}")[1].get("run_id"), "its run"
        )
        server.process.send_signal(how)
        server.process.wait(30)
    finally:
        server.stop()
    again = serve(folder)
    try:
        assert again.call("GET", f"/api/jobs/{job['id']}")[1]["state"] == "interrupted"
        assert record(again, run)["status"] == "interrupted"
    finally:
        again.stop()
