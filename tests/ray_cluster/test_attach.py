"""`graphbook run --ray ADDRESS` keeps its load and dump actors warm on the cluster after the
run: the next run of the same node code attaches to them (the same actors, the same outputs),
changed node code gets fresh actors, `--ray-keep 0` keeps none, and kept actors end by
themselves when their lease runs out. What is kept is read from the cluster itself (its named
actors), by a driver of its own (one for the module). (This module sorts before
test_cluster.py, whose last test takes node 2 down.)"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
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

import contextlib
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

OBSERVER = """
import json, sys, time
import ray

ray.init(address=sys.argv[1], logging_level="ERROR")
bound = float(sys.argv[2])

def kept(prefix):
    return sorted(
        (a["namespace"], a["name"])
        for a in ray.util.list_named_actors(all_namespaces=True)
        if a["namespace"].startswith(prefix)
    )

def answer(prefix, how):
    deadline = time.monotonic() + bound
    if how == "nodes":
        from ray._private import state

        names = {name for _, name in kept(prefix)}
        alive = state.state.actor_table(None, actor_state_name="ALIVE").values()
        found = {a["Name"]: a["Address"]["NodeID"] for a in alive if a["Name"] in names}
        return sorted(found.items())
    if how.startswith("kill:"):
        namespace, name = how[len("kill:"):].split("/")
        ray.kill(ray.get_actor(name, namespace=namespace), no_restart=True)
        while name in {n for _, n in kept(prefix)} and time.monotonic() < deadline:
            time.sleep(0.5)
        how = "list"
    if how == "kill":
        for namespace, name in kept(prefix):
            try:
                ray.kill(ray.get_actor(name, namespace=namespace), no_restart=True)
            except ValueError:
                pass
    while how != "list" and kept(prefix) and time.monotonic() < deadline:
        time.sleep(0.5)
    return kept(prefix)

print("ready", flush=True)
for line in sys.stdin:
    print(json.dumps(answer(*json.loads(line))), flush=True)
"""
"""A driver of its own on the cluster, one for the module, that answers on stdin: the kept
actors whose namespace starts with a prefix now (`list`), once there are none or at a deadline
(`gone`), after killing them (`kill`) or one of them (`kill:NAMESPACE/NAME`); or the node of
each (`nodes`)."""


class Observer:
    def __init__(self, cluster: Cluster) -> None:
        command = [sys.executable, "-c", OBSERVER, cluster.address, str(ENDED)]
        self.process = subprocess.Popen(
            command,
            env=cluster.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.answer(RUN)  # "ready": it has joined the cluster

    def ask(self, prefix: str, how: str) -> Any:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps([prefix, how]) + "\n")
        self.process.stdin.flush()
        return json.loads(self.answer(ENDED + RUN))

    def answer(self, timeout: float) -> str:
        out = self.process.stdout
        assert out is not None
        ready, _, _ = select.select([out], [], [], timeout)
        line = out.readline() if ready else ""
        if not line:
            self.process.kill()
            err = self.process.communicate()[1]
            raise AssertionError(f"the observing driver did not answer:\n{err[-3000:]}")
        return line

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.communicate("", timeout=RUN)


@pytest.fixture(scope="module")
def observer(cluster: Cluster) -> Iterator[Observer]:
    watching = Observer(cluster)
    try:
        yield watching
    finally:
        watching.close()


def kept(observer: Observer, prefix: str = "graphbook-run-", how: str = "list") -> set[str]:
    """The kept actors ("namespace/name") whose namespace starts with `prefix`."""
    return {"/".join(pair) for pair in observer.ask(prefix, how)}


def nodes_of(observer: Observer, namespace: str, kind: str) -> dict[str, str]:
    """The node id of each kept actor of `kind` ("load", "dump") in `namespace`, by name."""
    found = dict(observer.ask(namespace, "nodes"))
    return {name: node for name, node in found.items() if name.startswith(f"{kind}-")}


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


def run(
    cluster: Cluster,
    workflow: Path,
    *more: str,
    address: str | None = None,
    quiet: bool = True,
) -> tuple[str, list[dict[str, Any]]]:
    """Run the workflow on the cluster (at `address`, else its own; "": a local run without
    Ray) from its folder: what it said on stderr (and stdout, not `quiet`), and what it
    loaded (the file it writes is taken, so that the next run starts from none)."""
    command = [sys.executable, "-m", "graphbook", "run", str(workflow)]
    if address != "":
        command += ["--ray", address or cluster.address]
    if quiet:
        command.append("--quiet")
    result = subprocess.run(
        [*command, *more],
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
    said = result.stderr if quiet else result.stderr + result.stdout
    return said, sorted(loaded, key=lambda d: d["i"])


TWO_EACH = ("--workers", "2")
"""Exactly two load and two dump actors (by default the pool starts one of each and grows)."""


def without_pids(loaded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in d.items() if k != "pid"} for d in loaded]


def test_a_second_run_attaches_to_the_first_run_s_actors_and_keep_0_ends_them(
    cluster: Cluster, observer: Observer, tmp_path: Path
) -> None:
    workflow = project(tmp_path)
    before = kept(observer)
    said, first = run(cluster, workflow, *TWO_EACH)
    assert "actors kept 300 s after the run" in said, said[-3000:]
    assert "attached to" not in said
    mine = kept(observer) - before
    assert len(mine) == 4 and len(namespaces(mine)) == 1, mine  # 2 load, 2 dump

    said, second = run(cluster, workflow, *TWO_EACH)
    assert f"note: attached to 4 warm actors on {cluster.address}" in said, said[-3000:]
    assert kept(observer, namespaces(mine).pop()) == mine, "the same actors, none added"
    assert without_pids(second) == without_pids(first)
    assert [d["tag"] for d in second] == [f"helped-{i}" for i in range(8)]
    assert {d["pid"] for d in second} <= {d["pid"] for d in first}, "loaded by the same actors"

    said, third = run(cluster, workflow, "--ray-keep", "0", *TWO_EACH)
    assert f"note: attached to 4 warm actors on {cluster.address}" in said, said[-3000:]
    assert "actors kept" not in said
    assert without_pids(third) == without_pids(first)
    assert kept(observer, namespaces(mine).pop(), "gone") == set(), "--ray-keep 0 kept none"


def test_actors_missing_from_a_warm_pool_start_on_the_nodes_that_lack_them(
    cluster: Cluster, observer: Observer, tmp_path: Path
) -> None:
    """One kept load actor is gone (its node's, say): the next run attaches to the other and
    starts one in its place on the node that has none, not a second one beside the one left.
    Each of the two is killed in turn, so the node that turn placement would pick first is
    the one left in one of the rounds."""
    workflow = project(tmp_path)
    before = kept(observer)
    _, first = run(cluster, workflow, *TWO_EACH)
    mine = kept(observer) - before
    namespace = namespaces(mine).pop()
    try:
        loads = nodes_of(observer, namespace, "load")
        assert len(loads) == 2 and len(set(loads.values())) == 2, "one per node to begin with"
        for name in sorted(loads):
            kept(observer, "", f"kill:{namespace}/{name}")
            said, again = run(cluster, workflow, *TWO_EACH)
            assert f"note: attached to 3 warm actors on {cluster.address}" in said, said[-3000:]
            now = nodes_of(observer, namespace, "load")
            assert len(now) == 2 and len(set(now.values())) == 2, f"{name} gone: {now}"
            assert without_pids(again) == without_pids(first)
    finally:
        kept(observer, namespace, "kill")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_changed_node_code_gets_fresh_actors_which_end_when_their_lease_runs_out(
    cluster: Cluster, observer: Observer, tmp_path: Path
) -> None:
    workflow = project(tmp_path)
    before = kept(observer)
    _, first = run(cluster, workflow)
    old = kept(observer) - before
    try:
        helper(tmp_path, "changed")  # the helper beside the node file, which travels by itself
        said, second = run(cluster, workflow, "--ray-keep", "3")
        assert "attached to" not in said, "changed code never runs on the old actors"
        assert "actors kept 3 s after the run" in said, said[-3000:]
        assert [d["tag"] for d in second] == [f"changed-{i}" for i in range(8)]
        fresh = {d["pid"] for d in second}
        assert not fresh & {d["pid"] for d in first}, "loaded by new actors"
        wait_until(lambda: not any(map(alive, fresh)), "the lease of 3 s to run out", ENDED)
        assert kept(observer, namespaces(old).pop()) == old, "the first run's are still kept"
    finally:
        for namespace in namespaces(old):
            kept(observer, namespace, "kill")


def test_runs_through_ray_client_attach_to_the_same_actors_with_local_outputs(
    cluster: Cluster, observer: Observer, tmp_path: Path
) -> None:
    """`--ray ray://HOST:PORT` (Ray Client: the driver runs on the head, this process talks to
    it): the second run attaches to the first run's actors, and both load what a local run
    loads."""
    workflow = project(tmp_path)
    _, local = run(cluster, workflow, address="")
    before = kept(observer)
    said, first = run(cluster, workflow, *TWO_EACH, address=cluster.client)
    mine = kept(observer) - before
    try:
        assert "attached to" not in said, said[-3000:]
        assert "actors kept 300 s after the run" in said, said[-3000:]
        assert len(mine) == 4 and len(namespaces(mine)) == 1, mine
        said, second = run(cluster, workflow, *TWO_EACH, address=cluster.client, quiet=False)
        assert f"note: attached to 4 warm actors on {cluster.client}" in said, said[-3000:]
        told = " ".join(said.split())  # the terminal wraps long lines
        attached = f"] attached to 4 warm Ray actors on {cluster.client}, kept by an earlier run"
        assert attached in told and "warning:" not in told, "information in the run's log"
        assert kept(observer, namespaces(mine).pop()) == mine, "the same actors, none added"
        assert {d["pid"] for d in second} <= {d["pid"] for d in first}, "the same actors"
        assert without_pids(first) == without_pids(local) == without_pids(second)
    finally:
        for namespace in namespaces(mine):
            kept(observer, namespace, "kill")


HOLD = """
import json, sys
import ray
from graphbook.engine.ray.pool import RayPool

pool = RayPool(sys.argv[1], workers=1, ship=[sys.argv[2]], keep_after=60.0, lease=240.0)
pids = pool.pids("load") + pool.pids("dump")
job = str(ray.get_runtime_context().get_job_id())
print(json.dumps({"attached": pool.attached, "pids": pids, "job": job}), flush=True)
sys.stdin.readline()  # holds the pool until told
pool.close()
"""
"""A driver through Ray Client that holds its pool (one actor per kind) until told; its actors
outlive it by 240 s (a client job ends some seconds after its client)."""
GRACE = {"RAY_CLIENT_RECONNECT_GRACE_PERIOD": "3"}
"""The seconds the head waits for a Ray Client driver that went away to come back before it
ends its job: 3 s, not Ray's 30, so that a killed driver's job ends soon after it."""

JOB_ENDED = """
import sys, time
import ray
from ray._private import state

ray.init(address=sys.argv[1], logging_level="ERROR")
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    jobs = state.state.job_table()
    if any(str(job["JobID"]) == sys.argv[3] and job.get("IsDead") for job in jobs):
        break
    time.sleep(0.5)
else:
    sys.exit(f"job {sys.argv[3]} still runs")
"""
"""Wait until a job has ended (a Ray Client job ends some seconds after its client)."""


def wait_job_ended(cluster: Cluster, job: str) -> None:
    command = [sys.executable, "-c", JOB_ENDED, cluster.address, str(ENDED), job]
    result = subprocess.run(command, env=cluster.env, capture_output=True, text=True, timeout=RUN)
    assert result.returncode == 0, result.stderr[-3000:]


def hold(cluster: Cluster, code: Path) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    """Start a driver that holds its pool (a head that could not start its Ray Client server
    is tried again by the pool's connection itself)."""
    driver = subprocess.Popen(
        [sys.executable, "-c", HOLD, cluster.client, str(code)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**cluster.env, **GRACE},
    )
    assert driver.stdout is not None
    line = driver.stdout.readline()
    if not line:
        raise AssertionError(f"the driver failed:\n{driver.communicate()[1][-3000:]}")
    said: dict[str, Any] = json.loads(line)
    return driver, said


def test_a_killed_ray_client_driver_s_actors_are_taken_over(
    cluster: Cluster, tmp_path: Path
) -> None:
    """A driver through `ray://` cannot read Ray's job table itself: the next one still takes
    over the actors of one killed with kill -9, once its job has ended."""
    code = tmp_path / "code"  # its own code: no other test's kept actors run it
    code.mkdir()
    (code / "marker.py").write_text(f"TEST = {tmp_path.name!r}\n")
    first, said = hold(cluster, code)
    try:
        assert said["attached"] == 0 and len(said["pids"]) == 2
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=RUN)
        wait_job_ended(cluster, said["job"])
        second, again = hold(cluster, code)
        second.communicate("\n", timeout=RUN)
        assert again["attached"] == 2 and set(again["pids"]) == set(said["pids"]), again
    finally:
        for pid in said["pids"]:  # the actors run on this machine
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
