"""A stage grows to `replicas` while full batches wait, and waits for a replica Ray placed that
is still starting (one node, stages forced on). A module of its own: idle replicas that another
module's pool keeps hold their CPU, and this needs both of the session Ray's 2 CPUs (its pools'
load and dump actors reserve none)."""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path
from typing import Any

import pytest

from graphbook import Workflow, batch, param, run_workflow, source, step
from graphbook.engine.ray import preload
from graphbook.engine.ray import stage as ray_stage
from graphbook.engine.ray.pool import RayPool
from graphbook.events import Event, NodeLog


@step("Grow/Numbers")
@source()
def numbers(ctx: Any) -> Any:
    for i in range(20):
        yield {"items": [i]}


WAIT = 90.0
"""Seconds from the first batch that batches wait for the replicas they expect (a new one
imports torch first)."""


@step("Grow/Slow")
@batch(2, "items")
@param("folder", "string", default="")
@param("replicas", "int", default=1)
def slow(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    """Holds its replica until `replicas` replicas have run a batch (each leaves its pid in
    `folder`), so that batches queue behind it: the stage's cue to grow."""
    began = Path(ctx.folder, "began")
    if not began.exists():
        began.write_text(str(time.time()))
    Path(ctx.folder, f"pid-{os.getpid()}").touch()
    deadline = float(began.read_text() or time.time()) + WAIT  # one bound for the whole run
    while len(list(Path(ctx.folder).glob("pid-*"))) < ctx.replicas and time.time() < deadline:
        time.sleep(0.05)
    for d in data:
        d["pid"] = os.getpid()


def test_the_stage_grows_to_its_replicas_while_full_batches_wait(
    ray_address: str, tmp_path: Path
) -> None:
    """One node: one replica at first; `replicas=2` lets a second start while batches queue
    behind a slow on_item_batch, and both run batches. `replicas=1` never adds one."""
    pids = {}
    for replicas in (1, 2):
        folder = tmp_path / str(replicas)
        folder.mkdir()
        wf = Workflow()
        node = wf.add(slow, id="slow", folder=str(folder), replicas=replicas)
        wf.connect(wf.add(numbers), node)
        with RayPool(ray_address, workers=1, stages="on", replicas=replicas, actor_cpus=0) as pool:
            result = run_workflow(wf, pool=pool, collect=True)
        assert result.ok, result.errors
        pids[replicas] = {d["pid"] for d in result.output("slow")}
    assert len(pids[1]) == 1
    assert len(pids[2]) == 2, "a second replica started and took batches"


def test_a_replica_placed_but_slow_to_start_is_waited_for(
    ray_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replica Ray placed that is still importing what the step uses (torch takes seconds on
    a busy machine) is waited for: no warning that none could be placed, and no replica
    reserving nothing beside it. The step here is in a module slow to import off the driver,
    counted among the slow modules a replica imports as it starts."""
    package = tmp_path / "slowpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    # Longer than Ray's own wait to place a replica (20 s), so that a replica placed but
    # importing would be taken for one that could not be placed. (A Ray worker process took
    # 2 s to start here idle, and over 8 s, the wait this test once set, with browser tests
    # beside it.)
    start = ray_stage.PLACE_WAIT + 2.0
    (package / "slowstart.py").write_text(SLOW_STEP.format(pid=os.getpid(), start=start))
    monkeypatch.syspath_prepend(str(tmp_path))
    slow_start = importlib.import_module("slowpkg.slowstart").slow_start
    monkeypatch.setattr(preload, "SLOW", (*preload.SLOW, "slowpkg.slowstart"))
    wf = Workflow()
    wf.connect(wf.add(numbers), wf.add(slow_start, id="slow"))
    events: list[Event] = []
    with RayPool(ray_address, workers=1, stages="on", actor_cpus=0, ship=[package]) as pool:
        result = run_workflow(wf, pool=pool, collect=True, sink=events.append)
    assert result.ok, result.errors
    warned = [e.message for e in events if isinstance(e, NodeLog) and e.level == "warning"]
    assert not warned
    assert len({d["pid"] for d in result.output("slow")}) == 1, "one replica, the slow one"


SLOW_STEP = """
import os, time

from graphbook import batch, step

if os.getpid() != {pid}:  # off the driver: a module slow to import
    time.sleep({start})


@step("Grow/SlowStart")
@batch(2, "items")
def slow_start(ctx, outputs, items, data):
    for d in data:
        d["pid"] = os.getpid()
"""
