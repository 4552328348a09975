"""`kill -9` of `graphbook run --ray` leaves no Ray process behind: the local Ray it started
dies with it. Ray's dashboard and runtime-env agents outlived the run by a
minute (they tell the dead GCS that the raylet died, with a fixed 60 s timeout); the watchdog
of graphbook/engine/ray/watchdog.py now kills them within a moment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fault_procs import alive, descendants, env, marks, project, wait_until, workflow

pytestmark = pytest.mark.chaos

STARTUP = 180.0
"""Seconds a local Ray may take to start and run its first task on a loaded machine."""
GONE = 15.0
"""Seconds within which every process of the killed run's Ray must be gone (it was 60 s)."""


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_kill_9_of_graphbook_run_on_ray_takes_its_ray_down(tmp_path: Path, reap: list[int]) -> None:
    pytest.importorskip("ray")
    folder = project(tmp_path)
    name = workflow(folder, "slow.json", "Slow", n=400)
    command = [sys.executable, "-m", "graphbook", "run", str(folder / "workflows" / name)]
    command += ["--nodes", str(folder / "nodes"), "--ray", "--workers", "1", "--quiet"]
    run = subprocess.Popen(command, cwd=folder, env=env(), stderr=subprocess.PIPE, text=True)
    reap.append(run.pid)
    wait_until(lambda: marks(folder, "load") or run.poll() is not None, "a Ray task", STARTUP)
    assert run.poll() is None, run.communicate()[1]

    def agents_up() -> list[int]:
        found = descendants(run.pid)
        names = " ".join(command_line(pid) for pid in found)
        return found if names.count("Agent") >= 2 else []

    everyone = wait_until(agents_up, "Ray's dashboard and runtime-env agents to be up")
    reap += everyone
    run.kill()
    run.communicate(timeout=30)
    wait_until(
        lambda: not [pid for pid in everyone if alive(pid)],
        f"the Ray processes of the killed run to end: {[command_line(p)[:60] for p in everyone]}",
        GONE,
    )
