"""Actors kept for the next driver (`graphbook run --ray ADDRESS`), between real drivers: each
one a process of its own on the session's Ray, holding its pool until told to close it. Two
drivers at once never share actors; the actors of a driver killed with `kill -9` are taken
over by the next one; a driver that keeps none ends the actors it used."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DRIVER = """
import json, sys
from graphbook.engine.ray_pool import RayPool

pool = RayPool(sys.argv[1], workers=1, ship=[sys.argv[2]], keep_after=float(sys.argv[3]))
pids = pool.pids("load") + pool.pids("dump")
print(json.dumps({"attached": pool.attached, "pids": pids, "namespace": pool.keep}), flush=True)
sys.stdin.readline()  # holds the pool until told
pool.close()
"""
ROOT = Path(__file__).resolve().parents[2]
BOUND = 180.0
"""Seconds a driver may take to join Ray and start (or attach to) its actors, under load."""


class Driver:
    def __init__(self, address: str, code: Path, keep: float) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
        self.process = subprocess.Popen(
            [sys.executable, "-c", DRIVER, address, str(code), str(keep)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # the pool is made, or the driver failed
        if not line:
            raise AssertionError(f"the driver failed:\n{self.process.communicate()[1][-3000:]}")
        said: dict[str, Any] = json.loads(line)
        self.attached: int = said["attached"]
        self.pids: set[int] = set(said["pids"])

    def close(self) -> None:
        _, err = self.process.communicate("\n", timeout=BOUND)
        assert self.process.returncode == 0, err[-3000:]


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def wait_gone(pids: set[int]) -> None:
    deadline = time.monotonic() + BOUND
    while any(map(alive, pids)):
        assert time.monotonic() < deadline, f"actors {pids} still run"
        time.sleep(0.1)


@pytest.fixture
def drivers() -> Iterator[list[Driver]]:
    made: list[Driver] = []
    yield made
    for driver in made:
        if driver.process.poll() is None:
            driver.process.kill()
            driver.process.communicate()


def test_two_drivers_at_once_do_not_share_and_a_killed_driver_s_actors_are_taken_over(
    ray_address: str, tmp_path: Path, drivers: list[Driver]
) -> None:
    code = tmp_path / "code"  # its own code: no other test's kept actors run it
    code.mkdir()
    (code / "marker.py").write_text(f"TEST = {tmp_path.name!r}\n")
    first = Driver(ray_address, code, keep=60)
    drivers.append(first)
    assert first.attached == 0 and len(first.pids) == 2

    second = Driver(ray_address, code, keep=0)  # while the first holds its actors
    drivers.append(second)
    assert second.attached == 0, "another running driver's actors are not attached to"
    assert not second.pids & first.pids
    second.close()
    wait_gone(second.pids)  # keep 0: its actors end with it
    assert all(map(alive, first.pids)), "the first driver's actors were left alone"

    first.process.send_signal(signal.SIGKILL)
    first.process.wait(timeout=BOUND)
    third = Driver(ray_address, code, keep=0)
    drivers.append(third)
    assert third.attached == 2 and third.pids == first.pids, "a killed driver's, taken over"
    third.close()
    wait_gone(first.pids)
