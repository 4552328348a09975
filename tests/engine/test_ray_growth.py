"""The Ray pool sizes its actors by the work waiting: a slow load grows its actors from the
minimum toward the maximum, a slow consumer does not, `workers=N` stays exactly N; the run's
log says once what the pool did. On the session's Ray (2 CPUs); the limits and reservations
as the command line gives them, without Ray."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from graphbook import Workflow, batch, param, run_workflow, source, step
from graphbook.cli import main
from graphbook.engine.ray.pool import RayBackend, RayPool
from graphbook.engine.ray.sizing import Limits
from graphbook.events import Event, NodeLog
from graphbook.server.settings import ServerSettings

SIZES = re.compile(r"load actors: (\d+)(?: -> (\d+))? on (\d+) nodes? \(max (\d+)\)")


def slow_load(i: int) -> int:
    time.sleep(0.3)
    return i * 10


def fast_load(i: int) -> int:
    return i * 10


@step("Growth/Count")
@source()
@param("n", "int", default=8)
def count(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"items": [i]}


@step("Growth/SlowLoads")
@batch(2, "items", load_fn=slow_load)
def slow_loads(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    for value, d in zip(outputs, data, strict=True):
        d["value"] = value


@step("Growth/SlowConsumer")
@batch(2, "items", load_fn=fast_load)
def slow_consumer(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    time.sleep(1.0)  # the model: the slowest stage
    for value, d in zip(outputs, data, strict=True):
        d["value"] = value


def run(pool: RayPool, node: Any, n: int) -> tuple[list[int], list[str]]:
    """The values the node put out, in order, and the info lines of the run's log."""
    wf = Workflow()
    sink = wf.add(node, id="sink")
    wf.connect(wf.add(count, id="src", n=n), sink)
    events: list[Event] = []
    result = run_workflow(wf, pool=pool, collect=True, sink=events.append)
    assert result.ok, result.errors
    notes = [e.message for e in events if isinstance(e, NodeLog) and e.level == "info"]
    return [d["value"] for d in result.output("sink")], notes


def sizes(notes: list[str]) -> tuple[int, int, int]:
    """(actors at the start, the most, the maximum) from the run's one note on load actors."""
    said = [m for note in notes for m in [SIZES.search(note)] if m]
    assert len(said) == 1, f"said once: {notes}"
    first, peak, _, most = said[0].groups()
    return int(first), int(peak or first), int(most)


def test_a_slow_load_grows_its_actors_from_the_minimum_toward_the_maximum(
    ray_address: str,
) -> None:
    with RayPool(ray_address, actors=Limits(1, 3), actor_cpus=0.5) as pool:
        values, notes = run(pool, slow_loads, 40)
        assert values == [i * 10 for i in range(40)], "every item through, in order"
        first, peak, most = sizes(notes)
        assert (first, most) == (1, 3)
        assert 1 < peak <= 3, notes
        assert pool.stats().load.workers <= 3


def test_a_fast_load_feeding_a_slow_consumer_does_not_grow(ray_address: str) -> None:
    with RayPool(ray_address, actors=Limits(1, 3), actor_cpus=0.5) as pool:
        values, notes = run(pool, slow_consumer, 8)
        assert values == [i * 10 for i in range(8)]
        assert sizes(notes) == (1, 1, 3), notes


def test_workers_n_is_exactly_n_however_slow_the_load(ray_address: str) -> None:
    with RayPool(ray_address, workers=2) as pool:
        values, notes = run(pool, slow_loads, 24)
        assert values == [i * 10 for i in range(24)]
        assert sizes(notes) == (2, 2, 2), notes
        assert pool.stats().load.workers == 2


def test_actors_that_would_not_fit_reserve_nothing_and_the_run_says_so(
    ray_address: str,
) -> None:
    """Two of each kind at 1 CPU each cannot fit the session's 2-CPU Ray: the run does not
    wait for room that never comes."""
    with RayPool(ray_address, workers=2, actor_cpus=1.0) as pool:
        values, notes = run(pool, slow_loads, 4)
        assert values == [0, 10, 20, 30]
        assert any("they reserve none, as --ray-actor-cpus 0 would" in n for n in notes), notes


def test_limits_and_reservations_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = tmp_path / "wf.json"
    Workflow().save(workflow)
    assert main(["run", str(workflow), "--ray-actors", "1:4"]) == 2
    assert "--ray-actors applies to Ray actors: add --ray" in capsys.readouterr().err
    assert main(["run", str(workflow), "--ray-actor-cpus", "0.5"]) == 2
    assert "--ray-actor-cpus applies to Ray actors: add --ray" in capsys.readouterr().err
    command = ["run", str(workflow), "--ray", "auto", "--workers", "2", "--ray-actors", "1:4"]
    assert main(command) == 2
    assert "give one of them" in capsys.readouterr().err
    assert main(["run", str(workflow), "--ray", "auto", "--ray-actors", "5:2"]) == 2
    assert "the maximum of actors (2) is below the minimum (5)" in capsys.readouterr().err
    assert main(["serve", "--ray", "--ray-actor-cpus", "-1"]) == 2
    assert "expected 0 or more CPUs, got -1" in capsys.readouterr().err
    settings = ServerSettings(ray="auto", ray_actors=Limits(2, 6), ray_actor_cpus=0.5)
    backend = settings.backend
    assert isinstance(backend, RayBackend)
    assert (backend.actors, backend.actor_cpus) == (Limits(2, 6), 0.5)
