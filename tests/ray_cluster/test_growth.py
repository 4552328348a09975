"""A node that joins a Ray cluster mid-run gets the pool's actors, as when an autoscaler adds
one for the actors that found no room: a run starts on a head alone whose CPUs its first actors
reserve, the actor it adds as work waits is pending, a second `ray start` joins, and load tasks
run there. Its own cluster (a head of 2 CPUs, then a node of 2), every process stopped by its
process group, never `ray stop`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cluster_procs import (
    Popen,
    cluster_env,
    start_head,
    start_node,
    stop_node,
    wait_started,
    wait_until,
)

pytestmark = pytest.mark.ray_cluster

RUN = 300.0
"""Seconds the run may take on a loaded machine, node 2's start included."""
ITEMS = 1500
"""Enough that the run, slow while the gate is shut, outlasts node 2's start."""

NODES = '''"""Items that load slowly while a gate file exists, saying which Ray node loaded them."""

import json
import os
import time
from typing import Any

from graphbook import param, source, step
from graphbook.decorators import batch


@step("Grow/Count")
@source()
@param("n", "int", default=8)
@param("gate", "string", default="")
def count(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"x": {"i": i, "gate": ctx.gate}}


def load(item: dict) -> dict:
    import ray

    if os.path.exists(item["gate"]):
        time.sleep(0.2)
    node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"
    return {"i": item["i"], "square": item["i"] ** 2, "node": node}


@step("Grow/Write")
@batch(4, "x", load_fn=load)
def write(ctx: Any, outputs: list, items: list, data: list) -> None:
    with open("loaded.jsonl", "a") as lines:
        for output in outputs:
            lines.write(json.dumps(output) + "\\n")
'''


@dataclass
class Head:
    address: str
    env: dict[str, str]
    head: Popen
    folders: list[Path]
    nodes: list[Popen] = field(default_factory=list)

    def join(self, cpus: int) -> None:
        """A second node joins, as an autoscaler would add one."""
        folder = Path(tempfile.mkdtemp(prefix="gb-rayg-"))
        self.folders.append(folder)
        node = start_node(self.address, folder, self.env, cpus=cpus)
        self.nodes.append(node)
        wait_started("joining node", node, folder)


@pytest.fixture(scope="module")
def head() -> Iterator[Head]:
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'graphbook[ray]'")
    env = cluster_env()
    folder = Path(tempfile.mkdtemp(prefix="gb-rayg-"))
    process, address = start_head(folder, env, cpus=2)
    running = Head(address, env, process, [folder])
    try:
        wait_started("head", process, folder)
        yield running
    finally:
        for node in [*running.nodes, process]:
            stop_node(node)
        for made in running.folders:
            shutil.rmtree(made, ignore_errors=True)


def project(folder: Path, gate: Path) -> Path:
    from graphbook.workflow import Workflow

    (folder / "custom_nodes").mkdir(parents=True)
    (folder / "custom_nodes" / "grow_nodes.py").write_text(NODES)
    wf = Workflow()
    wf.connect(wf.add("Count", id="src", n=ITEMS, gate=str(gate)), wf.add("Write", id="write"))
    (folder / "wf.json").write_text(json.dumps(wf.to_json()))
    return folder / "wf.json"


def loaded(folder: Path) -> list[dict[str, Any]]:
    out = folder / "loaded.jsonl"
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]


def graphbook_run(workflow: Path, env: dict[str, str], *more: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "graphbook", "run", str(workflow), *more]
    log = (workflow.parent / "run.log").open("w")
    return subprocess.Popen(
        command, cwd=workflow.parent, env=env, stdout=log, stderr=subprocess.STDOUT, text=True
    )


def finish(run: subprocess.Popen[str], log: Path) -> str:
    try:
        run.wait(timeout=RUN)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
        said = log.read_text()[-3000:]
        raise AssertionError(f"the run did not end in {RUN:.0f} s:\n{said}") from None
    said = log.read_text()
    assert run.returncode == 0, said[-3000:]
    return said


def test_a_node_that_joins_mid_run_gets_load_actors(head: Head, tmp_path: Path) -> None:
    gate = tmp_path / "slow"
    gate.touch()
    workflow = project(tmp_path / "cluster", gate)
    more = ("--ray", head.address, "--ray-actors", "1:4", "--ray-keep", "0")
    run = graphbook_run(workflow, head.env, *more)

    def going() -> bool:
        assert run.poll() is None, (workflow.parent / "run.log").read_text()[-3000:]
        return bool(loaded(workflow.parent))

    wait_until(going, "the first items loaded on the head", RUN)
    head.join(cpus=2)

    def on_two_nodes() -> bool:
        assert run.poll() is None, "the run ended before node 2 loaded anything"
        return len({d["node"] for d in loaded(workflow.parent)}) == 2

    wait_until(on_two_nodes, "an item loaded on the node that joined", RUN)
    gate.unlink()  # the rest at full speed
    said = finish(run, workflow.parent / "run.log")
    done = loaded(workflow.parent)
    assert [d["i"] for d in done] == list(range(ITEMS)), "every item through, once, in order"
    sizes = re.search(r"load actors: 1 -> (\d) on 2 nodes \(max 4\)", said)
    assert sizes is not None and 2 <= int(sizes.group(1)) <= 4, said[-3000:]

    local = project(tmp_path / "local", gate)
    finish(graphbook_run(local, head.env, "--workers", "0"), local.parent / "run.log")
    without_node = [{k: v for k, v in d.items() if k != "node"} for d in done]
    assert without_node == [
        {k: v for k, v in d.items() if k != "node"} for d in loaded(local.parent)
    ], "the same outputs as a local run"
