"""`graphbook run --ray ADDRESS` keeps its load and dump actors warm on the cluster after the
run: the next run of the same node code attaches to them (the same actors, the same outputs),
changed node code gets fresh actors, `--ray-keep 0` keeps none, and kept actors end by
themselves when their lease runs out. What is kept is read from the cluster itself (its named
actors), by a driver of its own. (This module sorts before test_cluster.py, whose last test
takes node 2 down.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cluster_procs import Cluster, wait_until

pytestmark = pytest.mark.ray_cluster

RUN = 240.0
"""Seconds a run on the cluster may take on a loaded machine (Ray's start-up included)."""
ENDED = 120.0
"""Seconds kept actors may take to end once they should (killed, or their lease run out)."""

NODES = '''"""Nodes for the warm-actor tests ({marker}): which actor loaded each item."""

import json
import os
from typing import Any

import warm_helper

from graphbook import param, source, step
from graphbook.decorators import batch


@step("Warm/Count")
@source()
@param("n", "int", default=8)
def count(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {{"x": i}}


def load(i: int) -> dict:
    return {{"i": i, "tag": warm_helper.tag(i), "pid": os.getpid()}}


@step("Warm/Write")
@batch(2, "x", load_fn=load, runs_on_driver=True)
def write(ctx: Any, outputs: list, items: list, data: list) -> None:
    with open("loaded.jsonl", "a") as lines:
        for output in outputs:
            lines.write(json.dumps(output) + "\\n")
'''

HELPER = """def tag(i: int) -> str:
    return f"{word}-{{i}}"
"""

ACTORS = """
import json, sys, time
import ray

address, prefix, how, bound = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
ray.init(address=address, logging_level="ERROR")

def kept():
    return sorted(
        (a["namespace"], a["name"])
        for a in ray.util.list_named_actors(all_namespaces=True)
        if a["namespace"].startswith(prefix)
    )

deadline = time.monotonic() + bound
if how == "kill":
    for namespace, name in kept():
        try:
            ray.kill(ray.get_actor(name, namespace=namespace), no_restart=True)
        except ValueError:
            pass
while how != "list" and kept() and time.monotonic() < deadline:
    time.sleep(0.5)
print(json.dumps(kept()))
"""
"""A driver of its own that lists the kept actors whose namespace starts with a prefix: now
(`list`), once there are none or at a deadline (`gone`), or after killing them (`kill`)."""


def kept(cluster: Cluster, prefix: str = "graphbook-run-", how: str = "list") -> set[str]:
    """The kept actors ("namespace/name") whose namespace starts with `prefix`."""
    command = [sys.executable, "-c", ACTORS, cluster.address, prefix, how, str(ENDED)]
    result = subprocess.run(
        command, env=cluster.env, capture_output=True, text=True, timeout=RUN + ENDED
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return {"/".join(pair) for pair in json.loads(result.stdout.splitlines()[-1])}


def namespaces(actors: set[str]) -> set[str]:
    return {actor.split("/")[0] for actor in actors}


def project(folder: Path, word: str = "helped") -> Path:
    """Nodes (unique to this test: no other test's kept actors run them), their helper, and a
    workflow Count(8) -> Write."""
    from graphbook.workflow import Workflow

    (folder / "custom_nodes").mkdir(parents=True)
    (folder / "custom_nodes" / "warm_nodes.py").write_text(NODES.format(marker=folder.name))
    helper(folder, word)
    wf = Workflow()
    wf.connect(wf.add("Count", id="src", n=8), wf.add("Write", id="write"))
    (folder / "wf.json").write_text(json.dumps(wf.to_json()))
    return folder / "wf.json"


def helper(folder: Path, word: str) -> None:
    (folder / "custom_nodes" / "warm_helper.py").write_text(HELPER.format(word=word))


def run(cluster: Cluster, workflow: Path, *more: str) -> tuple[str, list[dict[str, Any]]]:
    """Run the workflow on the cluster from its folder: what it said, and what it loaded
    (the file it writes is taken, so that the next run starts from none)."""
    command = [sys.executable, "-m", "graphbook", "run", str(workflow), "--ray", cluster.address]
    result = subprocess.run(
        [*command, "--quiet", *more],
        cwd=workflow.parent,
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=RUN,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = workflow.parent / "loaded.jsonl"
    loaded = [json.loads(line) for line in out.read_text().splitlines()]
    out.unlink()
    return result.stderr, sorted(loaded, key=lambda d: d["i"])


def without_pids(loaded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in d.items() if k != "pid"} for d in loaded]


def test_a_second_run_attaches_to_the_first_run_s_actors_and_keep_0_ends_them(
    cluster: Cluster, tmp_path: Path
) -> None:
    workflow = project(tmp_path)
    before = kept(cluster)
    said, first = run(cluster, workflow)
    assert "actors kept 300 s after the run" in said, said[-3000:]
    assert "attached to" not in said
    mine = kept(cluster) - before
    assert len(mine) == 4 and len(namespaces(mine)) == 1, mine  # 2 load, 2 dump: one per CPU

    said, second = run(cluster, workflow)
    assert f"note: attached to 4 warm actors on {cluster.address}" in said, said[-3000:]
    assert kept(cluster, namespaces(mine).pop()) == mine, "the same actors, none added"
    assert without_pids(second) == without_pids(first)
    assert [d["tag"] for d in second] == [f"helped-{i}" for i in range(8)]
    assert {d["pid"] for d in second} <= {d["pid"] for d in first}, "loaded by the same actors"

    said, third = run(cluster, workflow, "--ray-keep", "0")
    assert f"note: attached to 4 warm actors on {cluster.address}" in said, said[-3000:]
    assert "actors kept" not in said
    assert without_pids(third) == without_pids(first)
    assert kept(cluster, namespaces(mine).pop(), "gone") == set(), "--ray-keep 0 kept none"


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_changed_node_code_gets_fresh_actors_which_end_when_their_lease_runs_out(
    cluster: Cluster, tmp_path: Path
) -> None:
    workflow = project(tmp_path)
    before = kept(cluster)
    _, first = run(cluster, workflow)
    old = kept(cluster) - before
    try:
        helper(tmp_path, "changed")  # the helper beside the node file, which travels by itself
        said, second = run(cluster, workflow, "--ray-keep", "3")
        assert "attached to" not in said, "changed code never runs on the old actors"
        assert "actors kept 3 s after the run" in said, said[-3000:]
        assert [d["tag"] for d in second] == [f"changed-{i}" for i in range(8)]
        fresh = {d["pid"] for d in second}
        assert not fresh & {d["pid"] for d in first}, "loaded by new actors"
        wait_until(lambda: not any(map(alive, fresh)), "the lease of 3 s to run out", ENDED)
        assert kept(cluster, namespaces(old).pop()) == old, "the first run's are still kept"
    finally:
        for namespace in namespaces(old):
            kept(cluster, namespace, "kill")
