"""`graphbook run --ray ADDRESS` on a two-node cluster whose second node shares no disk with
the driver: code in the nodes folder reaches every node, errors say where they happened, and a
node lost mid-run (kill -9 of its raylet) fails no item. Tests run in this order: the last one
takes node 2 down."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cluster_procs import Cluster, wait_until

pytestmark = pytest.mark.ray_cluster

ROOT = Path(__file__).resolve().parents[2]
RUN = 240.0
"""Seconds a run on the cluster may take on a loaded machine (Ray's start-up included)."""
BOTH_NODES = ("--workers", "2")
"""Two actors of each kind: more than the two nodes' CPUs can reserve, so they reserve none
and go one to each node (by default the pool starts one of each, grown as work waits). Runs
that look for both nodes last a few seconds, so that the later actor to start gets work too."""

NODES = '''"""Nodes for the cluster tests: where each item ran, with a helper module beside them."""

import json
import os
import time
from typing import Any

import cluster_helper

from graphbook import param, source, step
from graphbook.decorators import batch


@step("Cluster/Count")
@source()
@param("n", "int", default=8)
@param("folder", "string", default="")
@param("pause", "float", default=0.0)
@param("fail_on_node2", "boolean", default=False)
@param("data", "string", default="data", path=True)
def count(ctx: Any) -> Any:
    for i in range(ctx.n):
        x = {"i": i, "folder": ctx.folder, "pause": ctx.pause, "fail": ctx.fail_on_node2}
        yield {"x": {**x, "data": ctx.data}}


def where(item: dict) -> dict:
    import ray

    time.sleep(item["pause"])
    sees = os.path.isdir(item["folder"])
    if item["fail"] and not sees:
        raise ValueError(f"item {item['i']} cannot run here")
    node = ray.get_runtime_context().get_node_id()
    tag = cluster_helper.tag(item["i"])
    return {"i": item["i"], "tag": tag, "node": node, "sees": sees, "data": item["data"]}


@step("Cluster/Where")
@param("out", "string", default="where.jsonl")
@batch(2, "x", load_fn=where, runs_on_driver=True)
def where_step(ctx: Any, outputs: list, items: list, data: list) -> None:
    with open(ctx.out, "a") as lines:
        for output in outputs:
            lines.write(json.dumps(output) + "\\n")


def write_one(folder: str, record: dict, fail: bool) -> None:
    import ray

    sees = os.path.isdir(record["folder"])
    if fail and not sees:
        raise ValueError(f"item {record['i']} cannot be written here")
    node = ray.get_runtime_context().get_node_id()
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{record['i']}.json"), "w") as out:
        json.dump({**record, "dump_node": node, "dump_sees": sees}, out)


@step("Cluster/WriteEach")
@param("out", "string", default="out")
@param("fail_dumps_on_node2", "boolean", default=False)
@batch(2, "x", load_fn=where, dump_fn=write_one)
def write_each(ctx: Any, outputs: list, items: list, data: list) -> list:
    fail = ctx.fail_dumps_on_node2
    return [(ctx.out, {**o, "folder": x["folder"]}, fail) for o, x in zip(outputs, items)]
'''

HELPER = """def tag(i: int) -> str:
    return f"helped-{i}"
"""


def project(
    folder: Path, n: int, pause: float = 0.0, fail: bool = False, **write_each: Any
) -> Path:
    """A project folder with the nodes (and their helper) and a workflow Count -> Where (with
    `write_each`: Count -> WriteEach, whose dump function writes a file per item)."""
    from graphbook.workflow import Workflow

    (folder / "custom_nodes").mkdir(parents=True)
    (folder / "custom_nodes" / "cluster_nodes.py").write_text(NODES)
    (folder / "custom_nodes" / "cluster_helper.py").write_text(HELPER)
    wf = Workflow()
    src = wf.add("Count", id="src", n=n, folder=str(folder), pause=pause, fail_on_node2=fail)
    sink = wf.add("WriteEach", id="write", **write_each) if write_each else wf.add("Where")
    wf.connect(src, sink)
    (folder / "wf.json").write_text(json.dumps(wf.to_json()))
    return folder / "wf.json"


def start_run(cluster: Cluster, workflow: Path, *more: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "graphbook", "run", str(workflow), "--ray", cluster.address]
    return subprocess.Popen(
        [*command, "--quiet", *more],
        cwd=workflow.parent,
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(run: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        _, err = run.communicate(timeout=RUN)
    except subprocess.TimeoutExpired:
        run.kill()
        _, err = run.communicate()
        raise AssertionError(f"the run did not end in {RUN:.0f} s:\n{err[-3000:]}") from None
    return run.returncode, err


def lines(folder: Path) -> list[dict[str, Any]]:
    out = folder / "where.jsonl"
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]


def test_a_helper_module_beside_the_node_file_imports_on_every_node(
    cluster: Cluster, tmp_path: Path
) -> None:
    workflow = project(tmp_path, n=24, pause=0.3)
    rc, err = finish(start_run(cluster, workflow, *BOTH_NODES))
    assert rc == 0, err[-3000:]
    assert f"note: on the Ray cluster at {cluster.address}: 2 nodes, 2 CPUs" in err
    done = lines(tmp_path)
    assert sorted(d["i"] for d in done) == list(range(24))
    assert all(d["tag"] == f"helped-{d['i']}" for d in done)
    assert {d["sees"] for d in done} == {True, False}, "actors ran on both nodes"
    assert len({d["node"] for d in done}) == 2


def test_a_driver_without_the_cluster_s_token_is_told_auth(
    cluster: Cluster, tmp_path: Path
) -> None:
    workflow = project(tmp_path, n=2)
    command = [sys.executable, "-m", "graphbook", "run", str(workflow), "--ray", cluster.address]
    env = {**cluster.env, "RAY_AUTH_MODE": "disabled"}
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=RUN)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "auth: the cluster uses token authentication" in result.stderr
    assert "RAY_AUTH_MODE=token" in result.stderr and "Traceback" not in result.stderr


def test_an_error_on_another_node_names_the_node_and_its_host(
    cluster: Cluster, tmp_path: Path
) -> None:
    workflow = project(tmp_path, n=8, fail=True)
    rc, err = finish(start_run(cluster, workflow, "--continue-on-error", *BOTH_NODES))
    assert rc == 1
    assert "cannot run here (on Ray node " in err, err[-3000:]
    assert f" on {os.uname().nodename})" in err
    assert all(d["sees"] for d in lines(tmp_path)), "items that ran on the head are through"


def test_the_image_example_runs_from_a_clean_folder_on_shared_storage(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Relative paths (data/shapes, out/) mean the driver's folder; actors on node 2 read the
    images there because the folder is on storage both nodes share; the predictions are
    written on the driver."""
    clean = cluster.shared / tmp_path.name
    clean.mkdir()
    shutil.copy(ROOT / "workflows" / "image_classification.json", clean)
    command = [sys.executable, "-m", "graphbook", "run", "image_classification.json", "--quiet"]
    command += ["--ray", cluster.address, "--set", "images.count=96"]
    result = subprocess.run(
        command, cwd=clean, env=cluster.env, capture_output=True, text=True, timeout=RUN
    )
    assert result.returncode == 0, result.stderr[-3000:]
    predictions = (clean / "out" / "shapes_predictions.jsonl").read_text().splitlines()
    assert len(predictions) == 24 and len(list((clean / "data" / "shapes").glob("*.jpg"))) == 96


def run_with_log(cluster: Cluster, workflow: Path, *more: str) -> tuple[int, str]:
    """Run it showing the run's log (not --quiet): the return code, stdout and stderr."""
    command = [sys.executable, "-m", "graphbook", "run", str(workflow), "--ray", cluster.address]
    result = subprocess.run(
        [*command, *more],
        cwd=workflow.parent,
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=RUN,
    )
    return result.returncode, result.stdout + result.stderr


def written(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


def test_files_a_dump_function_writes_land_on_the_driver_by_default(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Node 2 loads items but cannot see the project folder: every file the dump function
    writes (to the relative folder out/) is in the driver's folder all the same, and a
    parameter declared as a path (`data`) reached every actor absolute."""
    workflow = project(tmp_path, n=24, pause=0.3, out="out")
    rc, log = run_with_log(cluster, workflow, *BOTH_NODES)
    assert rc == 0, log[-3000:]
    files = written(tmp_path / "out")
    assert sorted(f["i"] for f in files) == list(range(24)), "every file on the driver's disk"
    assert {f["sees"] for f in files} == {True, False}, "node 2 did some of the loads"
    assert {f["dump_sees"] for f in files} == {True}
    assert len({f["dump_node"] for f in files}) == 1, "every dump ran on the driver's node"
    data = str(tmp_path / "data")
    assert {f["data"] for f in files} == {data}, "a path parameter reaches node 2 absolute"
    assert log.count("dump functions run on the driver's node (Ray node ") == 1, log[-3000:]
    told = re.search(r"^(.*)\[\w+\] dump functions run on the driver's node", log, re.M)
    assert told is not None and told[1] == "", "information: not a warning"
    assert f" on {os.uname().nodename}): the files they write land on its disk" in log


def test_through_ray_client_the_run_s_log_says_where_dump_files_land(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Through Ray Client the driver runs on the head: dump functions write there (here the
    same machine as this test), and the run says so."""
    workflow = project(tmp_path, n=4, out="out")
    command = [sys.executable, "-m", "graphbook", "run", str(workflow), "--ray", cluster.client]
    result = subprocess.run(
        [*command, "--ray-keep", "0"],
        cwd=tmp_path,
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=RUN,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(f["i"] for f in written(tmp_path / "out")) == list(range(4))
    told = " ".join(result.stdout.split())  # the terminal wraps long lines
    where = f"through Ray Client that is the node that serves {cluster.client}, not this machine"
    assert where in told, told[-3000:]


def test_with_ray_dumps_anywhere_dumps_run_on_every_node_and_errors_say_where(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Outputs on storage both nodes share: dumps run on node 2 too, and a dump that fails
    there names the node and its host."""
    shared = cluster.shared / f"{tmp_path.name}-out"
    workflow = project(tmp_path, n=40, pause=0.05, out=str(shared), fail_dumps_on_node2=True)
    more = ("--ray-dumps", "anywhere", "--continue-on-error", *BOTH_NODES)
    rc, log = run_with_log(cluster, workflow, *more)
    assert rc == 1, log[-3000:]
    assert "dump functions run on any node of the Ray cluster (--ray-dumps anywhere)" in log
    assert "cannot be written here (on Ray node " in log, "a dump failed on node 2"
    assert f" on {os.uname().nodename})" in log
    files = written(shared)
    assert files and {f["dump_sees"] for f in files} == {True}, "the head's dumps are through"


N_LOST = 120
"""Items of each run that loses node 2: a load takes 0.25 s, so both runs are still going
when each has done items on node 2, whichever starts first."""


def finished_files(folder: Path) -> list[dict[str, Any]]:
    """The files a dump function has written so far (one being written is left out)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return found


def test_a_node_lost_mid_run_fails_no_item(cluster: Cluster, tmp_path: Path) -> None:
    """Two runs at once when node 2 goes down: one whose batch step runs on the driver
    (`runs_on_driver`), and one whose batch step runs on stage actors (the default on a
    cluster), losing a replica and the loads kept on node 2. Every item gets through, once."""
    here = project(tmp_path / "driver", n=N_LOST, pause=0.25)
    staged = project(tmp_path / "staged", n=N_LOST, pause=0.25, out="out")
    runs = [start_run(cluster, here, *BOTH_NODES), start_run(cluster, staged, *BOTH_NODES)]

    def on_node2() -> bool:
        loaded = [d for d in lines(here.parent) if not d["sees"]]
        written_ = [f for f in finished_files(staged.parent / "out") if not f["sees"]]
        return bool(loaded and written_)

    def ended() -> bool:
        return any(run.poll() is not None for run in runs)

    wait_until(lambda: on_node2() or ended(), "items done on node 2 in both runs", RUN)
    gone = [finish(run) for run in runs if run.poll() is not None]
    assert not gone, f"both runs were still going when node 2 went down: {gone}"
    os.kill(cluster.raylet(cluster.node2), signal.SIGKILL)
    errs = []
    for run in runs:
        rc, err = finish(run)
        assert rc == 0, err[-3000:]
        errs.append(err)
    struck = r"^warning: \[\w+\] Ray node \w{8} on .+ is not used any more: it died"
    assert any(re.search(struck, err, re.M) for err in errs), "a warning, shown with --quiet too"
    done = lines(here.parent)
    assert sorted(d["i"] for d in done) == list(range(N_LOST)), "every item through, once"
    assert [d for d in done if d["sees"]], "the rest ran on the head"
    files = written(staged.parent / "out")
    assert sorted(f["i"] for f in files) == list(range(N_LOST)), "every staged item through"
