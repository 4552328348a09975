"""Paths and outputs on one Ray node: path parameters stay as in a local run, and dump actors
are pinned to the driver's node unless told they may run anywhere. What a cluster changes
(paths made absolute, files on the driver's disk, dumps on another node) is tested on a real
two-node cluster in tests/ray_cluster/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphbook import Workflow, batch, param, run_workflow, source, step
from graphbook.engine.ray.pool import RayBackend, RayPool
from graphbook.errors import GraphbookError


def seen(path: str) -> str:
    """A load function: the path as the actor was given it."""
    return path


@step("RayPaths/Folder")
@source()
@param("folder", "string", default="data/in", path=True)
@param("name", "string", default="data/in")
def folder_source(ctx: Any) -> Any:
    yield {"paths": [ctx.folder, ctx.name]}


@step("RayPaths/Seen")
@batch(2, "paths", load_fn=seen)
def seen_step(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    for output, d in zip(outputs, data, strict=True):
        d.setdefault("seen", []).append(output)


def paths_workflow() -> tuple[Workflow, str]:
    wf = Workflow()
    node = wf.add(seen_step)
    wf.connect(wf.add(folder_source), node)
    return wf, node.id


def test_on_one_node_path_values_are_as_in_a_local_run(
    ray_pool: RayPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The actors of a one-node Ray work in the driver's folder: nothing is rewritten, so the
    run's values (and files written from them) are byte for byte a local run's. On a cluster
    of several nodes they are made absolute (tests/ray_cluster/)."""
    monkeypatch.chdir(tmp_path)
    wf, node = paths_workflow()
    assert not ray_pool.ships
    on_ray = run_workflow(wf, pool=ray_pool, collect=True)
    assert on_ray.ok, on_ray.errors
    here = run_workflow(wf, collect=True)
    assert on_ray.output(node)[0]["seen"] == here.output(node)[0]["seen"] == ["data/in"] * 2


def test_dump_actors_run_on_the_driver_s_node_by_default(ray_address: str) -> None:
    import ray

    driver = ray.get_runtime_context().get_node_id()
    with RayPool(ray_address, workers=2) as pool:
        assert pool.dumps == "driver"
        nodes = {h.node.id for h in pool.fleet.actors["dump"] if h.node is not None}
        assert nodes == {driver}, "each dump actor is pinned to the driver's node"
    with RayPool(ray_address, workers=2, dumps="anywhere") as pool:
        assert pool.dumps == "anywhere"


def test_where_dumps_run_is_checked_and_carried_by_the_backend(ray_address: str) -> None:
    with pytest.raises(GraphbookError, match="dump actors run on 'driver' or 'anywhere'"):
        RayPool(ray_address, workers=1, dumps="elsewhere")
    assert RayBackend().dumps == "driver"
    with RayBackend(ray_address, workers=1, dumps="anywhere").pool() as pool:
        assert pool.dumps == "anywhere"
