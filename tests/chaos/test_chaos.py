"""Chaos: kill the server, the CLI, workers and batch processes at random moments, in a loop,
and check that nothing is lost or left behind: no live worker, the port free, every saved file
whole, the run store readable, every batch's output committed exactly once.

Each test makes `GRAPHBOOK_CHAOS_ROUNDS` kills (3 by default: about a minute in all); a failure
prints its seed, and `GRAPHBOOK_CHAOS_SEED=SEED` replays the same choices."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fault_procs import (
    Served,
    alive,
    descendants,
    env,
    listening,
    marks,
    project,
    serve,
    wait_until,
    workflow,
)

from graphbook.workflow import Workflow
from tests.batch_process.outcome import JOBS, assert_complete, outcome

pytestmark = pytest.mark.chaos


def document(version: int) -> dict[str, object]:
    """A workflow file whose every node says which save wrote it (a few hundred KiB)."""
    wf = Workflow()
    for i in range(300):
        wf.add("Count", id=f"n{i}", label=f"save {version}", n=version, marks="x" * 500)
    return wf.to_json()


def version_of(path: Path) -> int:
    """The save that wrote `path`; fails unless the file is whole and of a single save."""
    data = json.loads(path.read_text())
    versions = {node["params"]["label"] for node in data["nodes"]}
    assert len(versions) == 1 and len(data["nodes"]) == 300, f"{path} mixes saves: {versions}"
    return int(versions.pop().split()[1])


def saving(
    server: Served, name: str, start: int, acked: list[int], tried: list[int]
) -> threading.Thread:
    """Save `name` again and again from another thread until the server dies; `acked` gets
    every version the server confirmed, `tried` every version sent (the last may be in flight
    when the server dies, and may or may not be on disk)."""

    def loop() -> None:
        version = start
        while True:
            tried.append(version)
            try:
                status, _ = server.call("PUT", f"/api/workflows/{name}", document(version))
            except OSError:
                return
            if status == 200:
                acked.append(version)
            version += 1

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def all_gone(pids: list[int], what: str) -> None:
    wait_until(lambda: not any(alive(pid) for pid in pids), f"{what} {pids} to end")


def test_kill_the_server_and_its_workers_at_random(
    tmp_path: Path, rounds: int, rng: random.Random, reap: list[int]
) -> None:
    folder = project(tmp_path)
    slow = workflow(folder, "slow.json", "Slow", n=40)
    hang = workflow(folder, "hang.json", "Hang", n=40)
    saved = folder / "workflows" / "saved.json"
    port, acked, tried = 0, [0], [0]
    for round_ in range(rounds):
        server = serve(folder, "--workers", "2", port=port)
        port = server.port
        reap.append(server.process.pid)
        server.start(rng.choice([slow, hang]))
        wait_until(lambda: marks(folder, "load"), "a worker to take a task")
        saver = saving(server, "saved.json", 1000 * (round_ + 1), acked, tried)
        action = rng.choice(["kill-worker", "term-worker", "stop", "nothing"])
        workers = server.workers()
        if action in ("kill-worker", "term-worker") and workers:
            os.kill(rng.choice(workers), signal.SIGKILL if action == "kill-worker" else 15)
        elif action == "stop":
            server.call("POST", "/api/runs/current/stop")
        time.sleep(rng.uniform(0.0, 1.0))
        assert server.process.poll() is None, f"round {round_}: {action} ended the server"
        everyone = server.workers()
        reap += everyone
        server.process.kill()
        server.process.wait(30)
        saver.join(30)
        all_gone(everyone, f"round {round_} ({action}): the server's workers")
        wait_until(lambda free=port: not listening(free), f"port {port} to be free")
        if saved.exists():  # the last save confirmed, or the one in flight when it was killed
            found = version_of(saved)
            assert found in (acked[-1], tried[-1]), (found, acked[-3:], tried[-3:])
            acked.append(found)
        else:
            assert acked == [0], "a confirmed save is on disk"
        for mark in (folder / "marks").iterdir():
            mark.unlink()
    last = serve(folder, port=port)
    reap.append(last.process.pid)
    try:
        status, runs = last.call("GET", "/api/runs")
        assert status == 200 and len(runs["runs"]) == rounds
        assert {r["status"] for r in runs["runs"]} <= {"interrupted", "stopped", "failed"}
        assert not list((folder / "workflows").glob(".*.tmp")), "killed saves are cleaned"
    finally:
        last.stop()
    assert not descendants(last.process.pid)


def test_kill_graphbook_run_at_random(
    tmp_path: Path, rounds: int, rng: random.Random, reap: list[int]
) -> None:
    folder = project(tmp_path)
    name = workflow(folder, "slow.json", "Slow", n=40)
    command = [sys.executable, "-m", "graphbook", "run", str(folder / "workflows" / name)]
    command += ["--nodes", str(folder / "nodes"), "--workers", "2", "--quiet"]
    for round_ in range(rounds):
        run = subprocess.Popen(command, cwd=folder, env=env(), stderr=subprocess.PIPE, text=True)
        reap.append(run.pid)
        wait_until(lambda: marks(folder, "load"), "a worker to take a task")
        time.sleep(rng.uniform(0.0, 1.0))
        workers = descendants(run.pid)
        reap += workers
        signum = rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
        run.send_signal(signum)
        _, err = run.communicate(timeout=60)
        all_gone(workers, f"round {round_} ({signum.name}): the workers")
        if signum != signal.SIGKILL and run.returncode != 0:  # it may have finished first
            assert run.returncode == 128 + signum, err
            assert "Traceback" not in err, err
        for mark in (folder / "marks").iterdir():
            mark.unlink()


def test_kill_a_batch_job_at_random_then_resume(
    tmp_path: Path, rounds: int, rng: random.Random, reap: list[int]
) -> None:
    home = tmp_path / "home"
    items, batch = 300, 2
    command = [sys.executable, str(JOBS), "--items", str(items), "--batch-size", str(batch)]
    command += ["--interval", "5", "--workers", "2"]
    job_env = {**env(), "GRAPHBOOK_HOME": str(home)}
    for round_ in range(rounds + 1):
        last = round_ == rounds  # only its stderr is read: a killed job's DataLoader workers
        # hold a pipe open until their own watchdog sees the parent gone
        stderr = subprocess.PIPE if last else subprocess.DEVNULL
        job = subprocess.Popen(
            command, env=job_env, stdout=subprocess.DEVNULL, stderr=stderr, text=True
        )
        reap.append(job.pid)
        if not last:
            wait_until(lambda j=job: list(home.glob("batch/*")) or j.poll() is not None, "a start")
            time.sleep(rng.uniform(0.0, 1.5))
            loaders = descendants(job.pid)
            reap += loaders
            job.kill()
            job.wait(timeout=60)
            all_gone(loaders, f"round {round_}: the job's DataLoader workers")
        else:
            _, err = job.communicate(timeout=180)
            assert job.returncode == 0, err[-3000:]
    assert_complete(outcome(home), items, batch)
