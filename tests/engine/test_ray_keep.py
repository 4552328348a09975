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
from graphbook.engine.ray.pool import RayPool

pool = RayPool(sys.argv[1], workers=1, ship=[sys.argv[2]], keep_after=float(sys.argv[3]))
pids = pool.pids("load") + pool.pids("dump")
namespace = pool.detached.namespace
print(json.dumps({"attached": pool.attached, "pids": pids, "namespace": namespace}), flush=True)
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


MODEL_DRIVER = """
import json, os, sys
import torch
from graphbook import Workflow, batch, param, resource, run_workflow, source, step
from graphbook.engine.ray.pool import RayPool
from graphbook.events import NodeLog


class PidNet(torch.nn.Module):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(scale), requires_grad=False)

    def forward(self, x):
        return torch.full((len(x),), float(os.getpid())) * self.scale


@resource("Keep/PidModel")
@param("device", "string", default="cpu")
@param("scale", "float", default=1.0)
@param("trains", "boolean", default=False)
def pid_model(ctx):
    return PidNet(ctx.scale)


@step("Keep/Items")
@source()
def numbers(ctx):
    for item in range(4):
        yield {"items": [item]}


@step("Keep/Ask")
@batch(2, "items")
@param("model", "resource")
def ask(ctx, outputs, items, data):
    for d, value in zip(data, ctx.model(torch.tensor(items, dtype=torch.float32)).tolist()):
        d["value"] = value


wf = Workflow()
model = wf.add(pid_model, id="model", scale=float(sys.argv[3]), trains=sys.argv[5] == "1")
node = wf.add(ask, id="ask", model=model)
wf.connect(wf.add(numbers, id="items"), node)
said = []
pool = RayPool(sys.argv[1], workers=1, ship=[sys.argv[2]], keep_after=float(sys.argv[4]),
               models_on_actors=True)
result = run_workflow(
    wf, pool=pool, collect=True,
    sink=lambda e: said.append([e.level, e.message]) if isinstance(e, NodeLog) else None,
)
values = sorted({d["value"] for d in result.output("ask")})
print(json.dumps({"ok": result.ok, "values": values, "said": said}), flush=True)
pool.close()
"""
"""A driver that runs a model on an actor of its own (models_on_actors), kept for the next:
what the model answered (its actor's pid times `scale`) and what the run's log said."""


def run_model(
    address: str, code: Path, scale: float, keep: float, trains: bool = False
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    command = [sys.executable, "-c", MODEL_DRIVER, address, str(code), str(scale), str(keep)]
    command.append("1" if trains else "0")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=BOUND)
    assert done.returncode == 0, done.stderr[-3000:]
    said: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["ok"], said
    return said


def test_a_model_actor_is_kept_for_the_next_run_with_the_same_parameters(
    ray_address: str, tmp_path: Path
) -> None:
    code = tmp_path / "code"  # its own code: no other test's kept actors run it
    code.mkdir()
    (code / "marker.py").write_text(f"TEST = {tmp_path.name!r}\n")
    first = run_model(ray_address, code, 1.0, keep=60)
    [pid] = first["values"]
    assert pid != os.getpid() and alive(int(pid)), "built on an actor, which is kept"
    notice = "model 'PidModel': attached to its warm Ray actor, kept by an earlier run"
    assert not [m for _, m in first["said"] if "attached" in m]

    second = run_model(ray_address, code, 1.0, keep=60)
    assert second["values"] == [pid], "the same actor: the model was not built again"
    assert [level for level, m in second["said"] if m.startswith(notice)] == ["info"]

    changed = run_model(ray_address, code, 2.0, keep=0)
    [value] = changed["values"]
    assert value / 2 != pid, "changed parameters: a new actor builds the model"
    assert not [m for _, m in changed["said"] if m.startswith(notice)]
    assert alive(int(pid)), "the first model's actor is left to its lease"

    last = run_model(ray_address, code, 1.0, keep=0)
    assert last["values"] == [pid]
    wait_gone({int(pid), int(value / 2)})  # keep 0: ended with the run that used it

    [trained] = run_model(ray_address, code, 1.0, keep=60, trains=True)["values"]
    [anew] = run_model(ray_address, code, 1.0, keep=0, trains=True)["values"]
    assert anew != trained, "a model in train mode is built anew, as a local run would"
    wait_gone({int(trained), int(anew)})


def test_warm_actors_are_taken_one_node_at_a_time() -> None:
    from graphbook.engine.ray.detached import Attached, spread

    warm = [Attached(None, "a1", "a"), Attached(None, "a2", "a"), Attached(None, "b1", "b")]
    assert [w.name for w in spread(warm, 2)] == ["a1", "b1"], "one of each node first"
    assert [w.name for w in spread(warm, 5)] == ["a1", "b1", "a2"]
