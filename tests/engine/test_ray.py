"""The Ray backend: load and dump functions on Ray actors, everything else as in a local run.

The engine's end-to-end tests also run on Ray (the `backend` fixture); these cover what only
Ray has: actors that die, retries, a stop while actors work, prompts, and the missing extra.
Tests that need Ray take the session's (`ray_address`, `ray_pool`), skipped without Ray."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import torch

from graphbook import (
    Workflow,
    batch,
    build_graph,
    log_metric,
    param,
    resource,
    run_workflow,
    source,
    step,
)
from graphbook.cli import main
from graphbook.cli.run import workers_count, workers_of
from graphbook.engine.executor import Executor, RunControl
from graphbook.engine.pool import Done, Failed
from graphbook.engine.ray import connection
from graphbook.engine.ray.models import actor_params, wants_gpu
from graphbook.engine.ray.pool import RayBackend, RayPool
from graphbook.events import Event, Prompt, PromptAnswered
from graphbook.nodes import library_registry
from graphbook.stacking import stack
from graphbook.steps import PromptStep


def die_on_three(path: str) -> int:
    """Kill the actor running it on item 3; a file counts the deaths."""
    if path.endswith("/3"):
        with open(path + ".deaths", "a") as deaths:
            deaths.write("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return int(path.rsplit("/", 1)[1])


def die_once_on_three(path: str) -> int:
    if path.endswith("/3") and not os.path.exists(path + ".deaths"):
        die_on_three(path)
    return int(path.rsplit("/", 1)[1])


@step("Ray/Loads")
@batch(2, "items", load_fn=die_on_three)
def loads(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    for value, d in zip(outputs, data, strict=True):
        d["value"] = value


@step("Ray/LoadsOnce")
@batch(2, "items", load_fn=die_once_on_three)
def loads_once(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    for value, d in zip(outputs, data, strict=True):
        d["value"] = value


def dying_workflow(folder: Path, items: list[int], node_kind: Any = loads) -> tuple[Workflow, str]:
    wf = Workflow()
    node = wf.add(node_kind)
    wf.connect(wf.add(source_of(folder, items)), node)
    return wf, node.id


def source_of(folder: Path, items: list[int]) -> Any:
    @step("Ray/Paths")
    @source()
    def paths(ctx: Any) -> Any:
        for i in items:
            yield {"items": [f"{folder}/{i}"]}

    return paths


def test_an_actor_killed_mid_task_fails_that_item_and_the_run_goes_on(
    ray_address: str, tmp_path: Path
) -> None:
    wf, node = dying_workflow(tmp_path, list(range(8)))
    with RayPool(ray_address, workers=1) as pool:
        result = run_workflow(wf, pool=pool, continue_on_error=True, collect=True)
        assert len(result.errors) == 1, result.errors
        error = result.errors[0]
        assert error.node_id == node and error.error.type == "WorkerDied"
        assert "actor running this task died" in error.error.message
        assert error.item == f"{tmp_path}/3", "the item that killed its actor, none other"
        assert [d["value"] for d in result.output(node)] == [0, 1, 2, 4, 5, 6, 7]
        again = run_workflow(dying_workflow(tmp_path, [0, 1])[0], pool=pool)
        assert again.ok, "a new actor took its place"


def test_with_retries_the_item_of_a_dead_actor_runs_again(ray_address: str, tmp_path: Path) -> None:
    wf, node = dying_workflow(tmp_path, [3], loads_once)
    with RayPool(ray_address, workers=1, retries=1) as pool:
        result = run_workflow(wf, pool=pool, collect=True)
    assert result.ok, result.errors
    assert [d["value"] for d in result.output(node)] == [3]
    assert (tmp_path / "3.deaths").read_text() == "x", "the actor did die, once"


def outcomes_of(pool: RayPool, fn: Any, xs: Any) -> list[Any]:
    """Each x through a lane of `fn` on the pool, the outcomes in order."""
    lane = pool.lane(fn, 16)
    for x in xs:
        lane.submit(None, (x,))
    outcomes: list[Any] = []
    deadline = time.monotonic() + 120  # actors may still be starting on a busy machine
    while lane.in_flight and time.monotonic() < deadline:
        pool.wait(0.1)
        outcomes += [outcome for _, outcome in lane.take_ready()]
    lane.close()
    return outcomes


def test_the_pool_keeps_order_and_returns_errors_as_values(ray_pool: RayPool) -> None:
    def tenfold(x: int) -> int:
        if x == 4:
            raise ValueError("no fours")
        return x * 10

    outcomes = outcomes_of(ray_pool, tenfold, range(8))
    assert [o.value for o in outcomes if isinstance(o, Done)] == [0, 10, 20, 30, 50, 60, 70]
    failed = [o for o in outcomes if isinstance(o, Failed)]
    assert outcomes.index(failed[0]) == 4
    assert "no fours" in failed[0].error.traceback and "tenfold" in failed[0].error.traceback


def tensors(seed: int) -> dict[str, Any]:
    """Tensors of every kind a load function might return, the same for the same seed."""
    generator = torch.Generator().manual_seed(seed)
    image = torch.rand(3, 224, 224, generator=generator)
    return {
        "image": image,
        "transposed": image[0].t(),
        "half": image[:, :8].to(torch.bfloat16),
        "labels": torch.arange(seed, seed + 5),
        "mask": image[0, 0] > 0.5,
        "grad": torch.ones(4, requires_grad=True),
        "array": image[1].numpy() * 2,
        "nested": [(image[2, :2], {"scalar": torch.tensor(seed)})],
    }


def test_tensors_come_back_equal_in_every_dtype_and_layout(ray_pool: RayPool) -> None:
    lane = ray_pool.lane(tensors, 8)
    for seed in range(3):
        lane.submit(seed, (seed,))
    outcomes: list[Any] = []
    deadline = time.monotonic() + 120
    while lane.in_flight and time.monotonic() < deadline:
        ray_pool.wait(0.1)
        outcomes += [outcome for _, outcome in lane.take_ready()]
    lane.close()
    assert len(outcomes) == 3 and all(isinstance(o, Done) for o in outcomes), outcomes
    for seed, outcome in enumerate(outcomes):
        got, expected = outcome.value, tensors(seed)
        for key in ("image", "transposed", "half", "labels", "mask", "grad"):
            assert got[key].dtype == expected[key].dtype, key
            assert torch.equal(got[key].detach(), expected[key].detach()), key
        assert got["grad"].requires_grad
        assert (got["array"] == expected["array"]).all()
        assert torch.equal(got["nested"][0][0], expected["nested"][0][0])
        assert got["nested"][0][1]["scalar"].item() == seed
    first = outcomes[0].value["image"]
    first.add_(1)  # a node may write into what its load function returned
    assert torch.equal(first, tensors(0)["image"] + 1)
    assert torch.equal(outcomes[1].value["image"], tensors(1)["image"]), "only its own tensor"


def slow_load(item: int) -> int:
    time.sleep(0.01)
    return item


def test_stop_ends_a_never_ending_run_while_actors_work(ray_pool: RayPool) -> None:
    control = RunControl()

    @step("Ray/Forever")
    @source()
    def forever(ctx: Any) -> Any:
        i = 0
        while True:
            i += 1
            yield {"items": [i]}

    @step("Ray/Slow")
    @batch(4, "items", load_fn=slow_load)
    def slow(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
        if max(items) >= 50:
            threading.Thread(target=control.stop).start()

    wf = Workflow()
    wf.connect(wf.add(forever), wf.add(slow))
    result = run_workflow(wf, pool=ray_pool, control=control)
    assert result.status == "stopped"
    assert run_workflow(wf_counting(), pool=ray_pool).ok, "the pool still works after a stop"


def wf_counting() -> Workflow:
    wf = Workflow()
    wf.connect(wf.add(source_of(Path("/nowhere"), [0, 1, 2])), wf.add(plain_batch))
    return wf


@step("Ray/Plain")
@batch(2, "items", load_fn=len)
def plain_batch(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    pass


class Ask(PromptStep):
    def get_prompt(self, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "bool", "msg": f"keep {data['items'][0]}?", "def": True, "options": {}}

    def on_prompt_response(self, data: dict[str, Any], response: Any) -> None:
        data["kept"] = response

    def route(self, data: dict[str, Any]) -> str | None:
        return "out" if data["kept"] else None


def test_a_prompt_after_a_ray_batch_is_answered_through_the_event_stream(
    ray_pool: RayPool,
) -> None:
    events: list[Event] = []

    def prompter(node_id: str, question: dict[str, Any], data: dict[str, Any]) -> Future[Any]:
        answer: Future[Any] = Future()
        answer.set_result(data["items"][0].endswith(("0", "2")))
        return answer

    wf = Workflow()
    b = wf.add(plain_batch)
    ask = wf.add(Ask, id="ask")
    wf.connect(wf.add(source_of(Path("/p"), [0, 1, 2])), b)
    wf.connect(b, ask)
    graph = build_graph(wf, library_registry())
    result = Executor(ray_pool, collect=True, prompter=prompter).run(graph, events.append)
    assert result.ok, result.errors
    assert [d["items"] for d in result.output("ask")] == [["/p/0"], ["/p/2"]]
    assert len([e for e in events if isinstance(e, Prompt)]) == 3
    assert len([e for e in events if isinstance(e, PromptAnswered)]) == 3


def test_without_ray_the_cli_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    workflow = tmp_path / "wf.json"
    Workflow().save(workflow)
    assert main(["run", str(workflow), "--ray"]) == 2
    assert "pip install 'graphbook[ray]'" in capsys.readouterr().err


def test_ray_ship_needs_ray_and_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = tmp_path / "wf.json"
    Workflow().save(workflow)
    assert main(["run", str(workflow), "--ray-ship", str(tmp_path)]) == 2
    assert "--ray-ship applies to Ray actors: add --ray" in capsys.readouterr().err
    missing = str(tmp_path / "lib")
    assert main(["run", str(workflow), "--ray", "--ray-ship", missing]) == 2
    assert f"cannot ship {missing!r} to the Ray cluster: it is not a folder" in (
        capsys.readouterr().err
    )


def test_ray_keep_is_for_a_cluster_s_actors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = tmp_path / "wf.json"
    Workflow().save(workflow)
    assert main(["run", str(workflow), "--ray-keep", "60"]) == 2
    assert "--ray-keep applies to Ray actors: add --ray" in capsys.readouterr().err
    assert main(["run", str(workflow), "--ray", "--ray-keep", "60"]) == 2
    said = " ".join(capsys.readouterr().err.split())  # as wrapped to the terminal's width
    assert "--ray-keep keeps actors on a Ray cluster (--ray ADDRESS or --ray auto)" in said
    assert main(["run", str(workflow), "--ray", "auto", "--ray-keep", "-1"]) == 2
    assert "expected 0 or more seconds, got -1" in capsys.readouterr().err


def test_ray_without_workers_has_one_actor_per_kind_per_cpu_of_the_cluster(
    ray_address: str,
) -> None:
    import ray

    assert workers_of(None, RayBackend("auto")) == 0, "the pool asks the cluster, not this machine"
    assert workers_of(None, "local") == workers_count("auto")
    assert workers_of(3, RayBackend("auto")) == 3
    cpus = int(ray.cluster_resources()["CPU"])  # type: ignore[no-untyped-call]
    with RayPool(ray_address, workers=0) as pool:
        assert pool.workers == cpus


def test_a_local_ray_started_for_a_run_does_not_print_ray_s_auth_notice(tmp_path: Path) -> None:
    workflow = tmp_path / "wf.json"
    Workflow().save(workflow)
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE")}
    command = [sys.executable, "-m", "graphbook", "run", str(workflow), "--ray"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert "Token authentication" not in result.stderr + result.stdout


# -- models on actors ----------------------------------------------------------------------------


class PidNet(torch.nn.Module):
    """Answers each row with the id of the process it runs in; dies on a row of -1 once."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(1))
        self.marker = marker

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool((x == -1).any()) and not os.path.exists(self.marker):
            Path(self.marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return torch.full((len(x),), float(os.getpid())) * self.scale


@resource("Ray/PidModel")
@param("device", "string", default="cpu")
@param("marker", "string", default="")
def pid_model(ctx: Any) -> torch.nn.Module:
    if ctx.marker == "fail":
        raise OSError("no weights here")
    return PidNet(ctx.marker)


@step("Ray/Ask")
@batch(2, "items")
@param("model", "resource")
def ask_model(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    device = next(ctx.model.parameters()).device
    pids = ctx.model(torch.tensor(items, dtype=torch.float32).to(device))
    for d, pid in zip(data, pids.tolist(), strict=True):
        d["pid"] = int(pid)


def model_workflow(items: list[int], marker: str = "") -> tuple[Workflow, str, str]:
    @step("Ray/Items")
    @source()
    def numbers(ctx: Any) -> Any:
        for item in items:
            yield {"items": [item]}

    wf = Workflow()
    model = wf.add(pid_model, marker=marker)
    node = wf.add(ask_model, model=model)
    wf.connect(wf.add(numbers), node)
    return wf, node.id, model.id


def test_a_model_runs_on_its_own_actor_and_node_code_is_unchanged(ray_address: str) -> None:
    wf, node, _ = model_workflow([1, 2, 3, 4, 5])
    with RayPool(ray_address, workers=1, models_on_actors=True) as pool:
        result = run_workflow(wf, pool=pool, collect=True)
    assert result.ok, result.errors
    pids = {d["pid"] for d in result.output(node)}
    assert len(pids) == 1 and os.getpid() not in pids, "one actor, not the driver, ran the model"
    here = run_workflow(wf, pool=pool_for_driver_models(ray_address), collect=True)
    assert {d["pid"] for d in here.output(node)} == {os.getpid()}, "CPU models stay here"


def pool_for_driver_models(ray_address: str) -> RayPool:
    return RayPool(ray_address, workers=1)


def test_a_model_actor_that_dies_fails_its_batch_and_is_rebuilt(
    ray_address: str, tmp_path: Path
) -> None:
    wf, node, _ = model_workflow([1, 2, -1, 4, 5, 6], marker=str(tmp_path / "died"))
    with RayPool(ray_address, workers=1, models_on_actors=True) as pool:
        result = run_workflow(wf, pool=pool, collect=True, continue_on_error=True)
    assert (tmp_path / "died").exists()
    assert len(result.errors) == 1 and result.errors[0].node_id == node
    assert result.errors[0].error.type == "WorkerDied"
    assert "model 'PidModel'" in result.errors[0].error.message
    assert [d["items"] for d in result.output(node)] == [[1], [2], [5], [6]]
    assert len({d["pid"] for d in result.output(node)}) == 2, "the model was built again"


def test_a_resource_failing_on_its_actor_fails_as_its_node(ray_address: str) -> None:
    wf, _, model = model_workflow([1], marker="fail")
    with RayPool(ray_address, workers=1, models_on_actors=True) as pool:
        result = run_workflow(wf, pool=pool)
    assert result.status == "failed"
    assert [e.node_id for e in result.errors] == [model]
    assert "no weights here" in result.errors[0].error.traceback
    assert "pid_model" in result.errors[0].error.traceback, "the traceback is the actor's"


@pytest.mark.parametrize(
    ("device", "gpus", "asks"),
    [
        ("cuda", 0, True),
        ("cuda:1", 0, True),
        ("auto", 2, True),
        ("auto", 0, False),
        ("cpu", 2, False),
    ],
)
def test_a_model_asks_ray_for_a_gpu_when_its_device_is_cuda(
    device: str, gpus: float, asks: bool
) -> None:
    assert wants_gpu({"device": device}, gpus) is asks
    if asks:
        assert actor_params({"device": device}, True)["device"] == "cuda", "Ray shows one GPU"


def hang_forever(x: int) -> int:
    threading.Event().wait()
    return x


def test_after_a_stop_only_the_busy_actors_are_replaced(ray_address: str) -> None:
    """The server's Ray pool outlives a Stop: an actor stuck in the stopped run's task is
    replaced, the idle one is kept warm, and the pool runs the next run's tasks."""
    with RayPool(ray_address, workers=2) as pool:
        before = set(pool.pids("load"))
        stuck = pool.lane(hang_forever, 4)
        stuck.submit(None, (1,))
        pool.wait(0.05)  # hands the task to an actor
        assert pool.stats().load.running == 1
        assert pool.recycle_busy() == 1
        after = set(pool.pids("load"))
        assert len(after) == 2 and len(after & before) == 1, (before, after)
        lane = pool.lane(len, 4)
        lane.submit(None, ("abc",))
        outcomes: list[Any] = []
        deadline = time.monotonic() + 120
        while not outcomes and time.monotonic() < deadline:
            pool.wait(0.1)
            outcomes += [outcome for _, outcome in lane.take_ready()]
        assert outcomes == [Done(3)]


def read_text(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def test_a_relative_path_missed_where_the_drivers_folder_is_missing_says_why(
    ray_address: str, tmp_path: Path
) -> None:
    """An actor on a node without the driver's folder (no shared disk) cannot find a relative
    path: its error names the folder relative paths mean and how to share it."""
    from graphbook.engine.ray.actor import TaskActor
    from graphbook.engine.ray.transfer import pack, unpack

    ray: Any = pytest.importorskip("ray")
    missing = str(tmp_path / "only-on-the-driver")  # as if the driver ran there
    actor = ray.remote(num_cpus=0)(TaskActor).remote(0, missing)
    try:
        ray.get(actor.learn.remote(0, ray.cloudpickle.dumps(read_text)))
        packed = ray.get(actor.run.remote(0, pack([("data/shapes/1.jpg",), (__file__,)])))
        missed, found = unpack(packed)
    finally:
        ray.kill(actor)
    assert isinstance(missed, Failed) and missed.error.type == "FileNotFoundError"
    assert f"the driver's folder {missing}" in missed.error.message
    assert "mount it at the same path on every node" in missed.error.message
    assert isinstance(found, Done) and "read_text" in found.value  # absolute paths work


def test_metrics_reported_on_an_actor_come_back_with_the_outcome(ray_pool: RayPool) -> None:
    def measured(x: int) -> int:
        log_metric("seen", x)
        if x == 2:
            raise ValueError("no twos")
        return x

    outcomes = outcomes_of(ray_pool, measured, range(4))
    seen = [[values for values, _ in outcome.metrics] for outcome in outcomes]
    assert seen == [[{"seen": float(x)}] for x in range(4)]
    assert isinstance(outcomes[2], Failed)


SLABS: list[tuple[bool, bool, list[int]]] = []


def plane(path: str) -> torch.Tensor:
    return torch.full((3, 16, 16), int(path.rsplit("/", 1)[1]), dtype=torch.uint8)


@step("Ray/Planes")
@batch(4, "items", load_fn=plane)
def planes(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    stacked = stack(outputs)
    views = all(o.data_ptr() == stacked[n].data_ptr() for n, o in enumerate(outputs))
    laid_out = getattr(outputs, "stacked", None) is not None
    SLABS.append((laid_out, views, [int(o[0, 0, 0]) for o in outputs]))


def test_a_batch_loaded_on_actors_arrives_as_one_slab_in_the_object_store(
    ray_pool: RayPool, tmp_path: Path
) -> None:
    SLABS.clear()
    wf = Workflow()
    wf.connect(wf.add(source_of(tmp_path, list(range(8)))), wf.add(planes))
    assert run_workflow(wf, pool=ray_pool).ok
    assert [s[2] for s in SLABS] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert all(stacked and views for stacked, views, _ in SLABS), "rows of one slab, no copy"


class FlakyHead:
    """Stands in for the `ray` module at a head whose Ray Client proxy fails to start a
    driver's server `failures` times (a loaded head, which a test cannot make on purpose)."""

    def __init__(self, failures: int, why: str) -> None:
        self.failures, self.why, self.tries = failures, why, 0

    def init(self, **_: Any) -> None:
        self.tries += 1
        if self.tries <= self.failures:
            raise ConnectionAbortedError(self.why)


STARTING_FAILED = (
    "Initialization failure from server:\nTraceback (most recent call last):\n"
    "RuntimeError: Starting Ray client server failed. See ray_client_server_23001.err"
)


def test_joining_through_ray_client_tries_again_when_the_head_could_not_start_its_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(connection, "CLIENT_BACKOFF", 0.0)
    head = FlakyHead(failures=2, why="Initialization failure from server:\n")
    connection._join(head, "ray://127.0.0.1:10001", None)  # type: ignore[arg-type]
    assert head.tries == 3

    head = FlakyHead(failures=3, why=STARTING_FAILED)
    with pytest.raises(ConnectionAbortedError) as failed:
        connection._join(head, "ray://127.0.0.1:10001", None)  # type: ignore[arg-type]
    assert head.tries == connection.CLIENT_TRIES
    said = connection._why(failed.value)
    assert said.startswith("Initialization failure from server: RuntimeError: Starting Ray client")

    head = FlakyHead(failures=1, why=STARTING_FAILED)
    with pytest.raises(ConnectionAbortedError):  # not through Ray Client: not Ray Client's failure
        connection._join(head, "127.0.0.1:6379", None)  # type: ignore[arg-type]
    assert head.tries == 1
