"""Metrics of served workflow runs: what a node reports with `log_metric` (in the run host and
in its worker processes) and the engine's figures of each node and the run are recorded in the
run store, listed with the run and served as its metric curves, as training runs' are; a job
from the queue's too."""

from __future__ import annotations

from pathlib import Path

from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook.workflow import Workflow

NODES = """
from typing import Any
from graphbook import batch, log_metric, step


def halve(item: int) -> float:
    log_metric("half", item / 2)
    return item / 2


@step("Test/Metered")
@batch(2, "x", load_fn=halve)
def metered(ctx: Any, outputs: list[float], items: list[int], data: list[dict]) -> None:
    log_metric("batch_sum", sum(outputs))
"""


def test_a_served_run_records_its_nodes_metrics_and_serves_them(
    serving: Serve, tmp_path: Path
) -> None:
    (tmp_path / "nodes").mkdir()
    (tmp_path / "nodes" / "metered.py").write_text(NODES)
    wf = Workflow()
    wf.connect(wf.add("Numbers", id="src", n=4), wf.add("Metered", id="m"))

    async def scenario(server: Server) -> None:
        server.save("metered.json", wf.to_json())
        socket = await server.connect()
        run_id = (await server.run_to_end(socket, "metered.json")).run_id
        assert not socket.of(p.NodeMetrics), "browsers read metrics from the store"

        _status, listed = await server.get("/api/runs")
        [run] = [r for r in listed["runs"] if r["run_id"] == run_id]
        assert run["kind"] == "workflow" and run["metrics"] > 0

        status, reply = await server.get(f"/api/runs/{run_id}/metrics")
        assert status == 200
        series = {(s.group, s.name): s for s in p.from_json(p.RunMetrics, reply).series}
        assert series["m", "half"].steps == [0, 1, 2, 3]
        assert series["m", "half"].values == [0.0, 0.5, 1.0, 1.5]
        assert series["m", "batch_sum"].values == [0.5, 2.5]
        assert series["m", "items_out"].values == [4.0] and series["m", "items_out"].steps == [4]
        assert series["src", "items_out"].values == [4.0]
        assert series["run", "items"].values == [4.0]

        server.save("job.json", wf.to_json())  # another file: no cached outputs to reuse
        status, job = await server.post("/api/jobs", {"workflow": "job.json"})
        assert status == 201, job
        _status, waited = await server.get(f"/api/jobs/{job['id']}?wait=20")
        job = waited["job"]
        assert job["state"] == "completed", job
        _status, reply = await server.get(f"/api/runs/{job['run_id']}/metrics")
        names = {(s["group"], s["name"]) for s in reply["series"]}
        assert {("m", "half"), ("m", "batch_sum"), ("run", "items")} <= names, "a job's too"

    serving(scenario, workers=2)
