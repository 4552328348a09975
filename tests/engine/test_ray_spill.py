"""When Ray's object store spills to disk during a run, the run's log says so, once, with how
to avoid it (spilling made a run 6x slower, and nothing said why). The run uses a Ray of its
own, with a small object store, in a process of its own: the session's Ray is left alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import json
import ray
from graphbook import Workflow, batch, param, run_workflow, source, step
from graphbook.engine.ray import notices
from graphbook.engine.ray.pool import RayPool
from graphbook.events import NodeLog

notices.SPILL_CHECK = 0.0  # look at every wait, not every 10 s
ray.init(address="local", num_cpus=1, object_store_memory=100 * 2**20, include_dashboard=False)

HELD = []


def fill(item):
    import numpy
    import ray

    HELD.append(ray.put(numpy.ones(20 * 2**20, dtype="uint8")))  # kept: the store fills up
    return item["i"]


@step("Spill/Count")
@source()
@param("n", "int", default=12)
def count(ctx):
    for i in range(ctx.n):
        yield {"x": {"i": i}}


@step("Spill/Fill")
@batch(1, "x", load_fn=fill)
def fill_step(ctx, loaded, items, data):
    pass


wf = Workflow()
wf.connect(wf.add(count), wf.add(fill_step))
warnings = []


def sink(event):
    if isinstance(event, NodeLog) and event.level == "warning":
        warnings.append(event.message)


pool = RayPool(workers=1)
result = run_workflow(wf, pool=pool, sink=sink)
print(json.dumps({"ok": result.ok, "warnings": warnings}))
pool.close()
ray.shutdown()
"""


def test_a_run_whose_object_store_spills_says_so_once(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("RAY_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ok"], report
    spilled = [w for w in report["warnings"] if "spilled" in w]
    assert len(spilled) == 1, report["warnings"]
    assert "object-store-memory" in spilled[0] and "MiB" in spilled[0]
