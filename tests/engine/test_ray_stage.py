"""Stage actors on one node (`--ray-stages on`): a batch step's on_item_batch runs on a Ray
actor holding a replica of the step, fed its loads' values where they were made, and the run
is the local run all the same (dicts, dumps, logs, metrics, errors). Off by default on one
node. The two-node cases are in tests/ray_cluster/test_stages.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from graphbook import Workflow, batch, param, run_workflow, source, step
from graphbook.cli import main
from graphbook.engine.ray.pool import RayPool
from graphbook.engine.ray.stage_actor import update_dicts
from graphbook.events import Event, NodeLog, NodeMetrics
from graphbook.logs import log_metric
from graphbook.steps import BatchStep

ROOT = Path(__file__).resolve().parents[2]
STAGE_NOTICE = "on_item_batch runs on Ray stage actors"


@pytest.fixture(scope="module")
def staged(ray_address: str) -> Iterator[RayPool]:
    """One actor per kind, and stage actors for every batch step (forced on: one node)."""
    with RayPool(ray_address, workers=1, stages="on") as pool:
        yield pool


@step("Stage/Numbers")
@source()
@param("n", "int", default=10)
def numbers(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"items": [i, i + 100], "n": i}


def decode(i: int) -> torch.Tensor:
    """Stands in for decoding an image: 3x224x224 floats, 602 KB."""
    return torch.full((3, 224, 224), float(i))


def write(folder: str, i: int, total: float) -> None:
    os.makedirs(folder, exist_ok=True)
    Path(folder, f"{i}.txt").write_text(repr(total))


@step("Stage/Score")
@batch(4, "items", load_fn=decode, dump_fn=write)
@param("out", "string", default="out")
def score(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> list[Any]:
    ctx.log(f"a batch of {len(items)}")
    log_metric("items", len(items))
    for d, x in zip(data, outputs, strict=True):
        d.setdefault("means", []).append(float(x.mean()))
        d["pid"] = os.getpid()
    return [(ctx.out, i, float(x.sum())) for i, x in zip(items, outputs, strict=True)]


@step("Stage/Fails")
@batch(4, "items", load_fn=decode)
def fails(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    if 7 in items:
        raise ValueError(f"no batch with 7 please: {items}")


class OnDriver(BatchStep):
    """Needs the driver (`runs_on_driver`): its on_item_batch runs there whatever the pool."""

    runs_on_driver = True

    def __init__(self) -> None:
        super().__init__(batch_size=4, item_key="items")

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
        for d in data:
            d["pid"] = os.getpid()


def scoring(folder: Path, n: int = 10) -> Workflow:
    wf = Workflow()
    wf.connect(wf.add(numbers, n=n), wf.add(score, id="score", out=str(folder)))
    return wf


def files(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(folder.iterdir())}


def without_pid(dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in d.items() if k != "pid"} for d in dicts]


def test_on_item_batch_runs_on_a_stage_actor_and_the_run_is_the_local_run(
    staged: RayPool, tmp_path: Path
) -> None:
    events: list[Event] = []
    result = run_workflow(scoring(tmp_path / "ray"), pool=staged, collect=True, sink=events.append)
    local = run_workflow(scoring(tmp_path / "local"), workers=0, collect=True)
    assert result.ok and local.ok, result.errors
    dicts = result.output("score")
    assert without_pid(dicts) == without_pid(local.output("score"))
    assert dicts[0]["means"] == [0.0, 100.0], "fields on_item_batch set reached the driver"
    pids = {d["pid"] for d in dicts}
    assert len(pids) == 1 and os.getpid() not in pids, "a stage actor ran on_item_batch"
    assert files(tmp_path / "ray") == files(tmp_path / "local"), "every dump, as locally"
    logs = [e.message for e in events if isinstance(e, NodeLog) and e.node_id == "score"]
    assert logs.count("a batch of 4") == 5, logs
    assert STAGE_NOTICE in logs[0], "the node's log says where on_item_batch runs"
    warned = [e for e in events if isinstance(e, NodeLog) and e.level == "warning"]
    assert not warned, "a step that keeps nothing on self is not warned about"
    rows = [r for e in events if isinstance(e, NodeMetrics) for r in e.rows]
    assert sum(r.values["items"] for r in rows) == 20, "metrics it reported came back"


def test_the_driver_receives_no_decoded_tensor(staged: RayPool, ray_pool: RayPool) -> None:
    """Loads keep their values where they were made: what the driver reads back per item is
    a few hundred bytes with stages, the whole 602 KB tensor without (on one node, the
    default)."""
    per_item = {}
    for name, pool in {"stages": staged, "default": ray_pool}.items():
        before = pool.timings.received
        result = run_workflow(scoring(Path("/tmp/unused"), n=8), pool=pool, collect=True)
        assert result.ok, result.errors
        per_item[name] = (pool.timings.received - before) / 16
    assert per_item["stages"] < 2_000, per_item
    assert per_item["default"] > 3 * 224 * 224 * 4, per_item


def test_stages_are_off_by_default_on_one_node(ray_pool: RayPool, tmp_path: Path) -> None:
    events: list[Event] = []
    result = run_workflow(scoring(tmp_path), pool=ray_pool, collect=True, sink=events.append)
    assert result.ok, result.errors
    assert {d["pid"] for d in result.output("score")} == {os.getpid()}
    assert not [e for e in events if isinstance(e, NodeLog) and STAGE_NOTICE in e.message]


def test_an_error_in_on_item_batch_shows_on_its_node_with_its_traceback(
    staged: RayPool,
) -> None:
    wf = Workflow()
    wf.connect(wf.add(numbers, n=10), wf.add(fails, id="fails"))
    result = run_workflow(wf, pool=staged, continue_on_error=True, collect=True)
    assert [e.node_id for e in result.errors] == ["fails"]
    error = result.errors[0].error
    assert error.type == "ValueError" and "no batch with 7 please" in error.message
    assert 'raise ValueError(f"no batch with 7 please' in error.traceback
    assert "in fails" in error.traceback, "the traceback is the stage actor's own"
    assert len(result.output("fails")) == 8, "the dicts of the failed batch stop there"


def test_a_step_that_runs_on_the_driver_stays_there(staged: RayPool) -> None:
    wf = Workflow()
    wf.connect(wf.add(numbers, n=4), wf.add(OnDriver, id="here"))
    events: list[Event] = []
    result = run_workflow(wf, pool=staged, collect=True, sink=events.append)
    assert result.ok, result.errors
    assert {d["pid"] for d in result.output("here")} == {os.getpid()}
    logs = [e.message for e in events if isinstance(e, NodeLog)]
    assert any("runs on_item_batch on the driver (runs_on_driver = True)" in m for m in logs)


class Tally(BatchStep):
    """Keeps a tally on self across batches: on replicas, each keeps its own."""

    def __init__(self) -> None:
        super().__init__(batch_size=2, item_key="items")
        self.seen: list[int] = []
        self.prepared = False

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
        self.prepared = True  # set up on the first call: not state that is lost
        self.seen.extend(items)


def test_state_kept_on_self_by_a_replica_is_a_warning_naming_it(staged: RayPool) -> None:
    wf = Workflow()
    wf.connect(wf.add(numbers, n=4), wf.add(Tally, id="tally"))
    events: list[Event] = []
    result = run_workflow(wf, pool=staged, collect=True, sink=events.append)
    assert result.ok, result.errors
    warned = [e.message for e in events if isinstance(e, NodeLog) and e.level == "warning"]
    assert len(warned) == 1 and "changed self.seen on its Ray stage actor" in warned[0], warned
    assert "runs_on_driver = True" in warned[0] and "prepared" not in warned[0]


def graphbook(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "graphbook", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_image_example_writes_the_same_predictions_with_stage_actors(
    tmp_path: Path, ray_address: str
) -> None:
    workflow = str(ROOT / "workflows/image_classification.json")
    nodes = str(ROOT / "custom_nodes")
    shown = {}
    outputs = {}
    ray = ["--ray", ray_address, "--ray-stages", "on", "--workers", "1"]
    for name, args in {"local": ["--workers", "2"], "ray": ray}.items():
        (tmp_path / name).mkdir()
        result = graphbook("run", workflow, "--nodes", nodes, *args, cwd=tmp_path / name)
        assert result.returncode == 0, result.stderr
        shown[name] = result.stdout
        outputs[name] = (tmp_path / name / "out/shapes_predictions.jsonl").read_text()
    assert outputs["local"] == outputs["ray"] and len(outputs["local"].splitlines()) == 60
    assert STAGE_NOTICE in shown["ray"] and STAGE_NOTICE not in shown["local"]
    accuracy = [line for line in shown["local"].splitlines() if "] accuracy " in line]
    assert accuracy and accuracy[0] in shown["ray"], "the same accuracy, logged on the driver"


def test_the_stage_flags_need_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workflow = tmp_path / "wf.json"
    Workflow().save(workflow)
    assert main(["run", str(workflow), "--ray-stages", "on"]) == 2
    assert "--ray-stages applies to Ray actors: add --ray" in capsys.readouterr().err
    assert main(["run", str(workflow), "--ray-replicas", "2"]) == 2
    assert "--ray-replicas applies to Ray actors: add --ray" in capsys.readouterr().err
    assert main(["run", str(workflow), "--ray", "--ray-stages", "maybe"]) == 2
    assert "invalid choice: 'maybe'" in capsys.readouterr().err


def test_a_dict_is_updated_in_place_as_the_stage_actor_left_it() -> None:
    """What the nodes downstream hold (the dict, its items' list, an item) stays the same
    object and ends equal to the actor's copy, keys in the actor's order."""
    item = {"value": "a.jpg", "label": "circle"}
    items = [item, {"value": "b.jpg"}]
    data = {"images": items, "gone": 1, "n": 2}
    theirs = {"n": 2, "images": [{**item, "prediction": "circle"}, {"value": "b.jpg"}], "new": 3}
    update_dicts([data, data], [theirs, theirs])
    assert data == theirs and list(data) == list(theirs)
    assert data["images"] is items and items[0] is item, "the same objects, changed"
    assert item == {"value": "a.jpg", "label": "circle", "prediction": "circle"}


@step("Stage/Slow")
@batch(2, "items", load_fn=decode)
def slow(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    import time

    time.sleep(0.3)
    for d in data:
        d["pid"] = os.getpid()


def test_the_next_run_on_the_pool_takes_the_idle_replicas(staged: RayPool, tmp_path: Path) -> None:
    """A server's runs share one pool: the replicas a run leaves idle serve the next run's
    stage (another step), which loads its own step into them; the pool's end ends them."""
    first = run_workflow(scoring(tmp_path / "first"), pool=staged, collect=True)
    wf = Workflow()
    wf.connect(wf.add(numbers, n=10), wf.add(slow, id="slow"))
    second = run_workflow(wf, pool=staged, collect=True)
    assert first.ok and second.ok, (first.errors, second.errors)
    ran = {d["pid"] for d in first.output("score")}
    assert {d["pid"] for d in second.output("slow")} == ran, "the same actor, warm"
    assert [r.actor for r in staged.spares], "left idle for the run after"
