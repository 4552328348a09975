"""Past runs over the real server: a run opened again (what each node did, its logs and
errors), run again as it was (and what changed in its file since), and the metric curves of
training runs and searches from the run store."""

from __future__ import annotations

from typing import Any

from server_harness import Serve, Server, chain

from graphbook import protocol as p
from graphbook.server.metrics import MAX_METRIC_POINTS
from graphbook.store import Store


def _store(server: Server) -> Store:
    return Store(server.settings.data / "graphbook.sqlite")


async def _details(server: Server, run_id: str) -> dict[str, Any]:
    status, details = await server.get(f"/api/runs/{run_id}/details")
    assert status == 200, details
    p.from_json(p.RunDetails, details)  # the reply is the protocol's RunDetails
    return dict(details)


def test_a_past_run_opens_with_each_node_its_counts_seconds_logs_and_errors(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=5))
        document = chain(n=2)
        node = next(n for n in document["nodes"] if n["id"] == "a")
        node["type"], node["params"] = "Boom", {}
        server.save("boom.json", document)
        socket = await server.connect()
        done = (await server.run_to_end(socket, "chain.json")).run_id
        failed = (await server.run_to_end(socket, "boom.json")).run_id

        details = await _details(server, done)
        assert details["run"]["status"] == "completed" and details["run"]["kind"] == "workflow"
        nodes = {n["node_id"]: n for n in details["nodes"]}
        assert [n["state"] for n in nodes.values()] == ["done", "done", "done"]
        assert nodes["b"]["counts"] == {"out": 5} and nodes["b"]["seconds"] > 0
        assert [e["message"] for e in nodes["a"]["logs"]] == [f"x={i}" for i in range(5)]
        assert nodes["a"]["outputs"] == {}  # previews may point at images gone with the run
        assert details["rerun"] is True and details["changes"] == []
        assert details["config"] == {"mode": "all", "node": None}

        details = await _details(server, failed)
        nodes = {n["node_id"]: n for n in details["nodes"]}
        assert nodes["a"]["state"] == "failed"
        (error,) = nodes["a"]["errors"]
        assert error["error"]["type"] == "ValueError" and error["item"] == {"x": 0}
        assert "boom at 0" in error["error"]["traceback"]
        assert nodes["b"]["state"] == "stopped"  # started, ended by the failure upstream

        status, reply = await server.get("/api/runs/nope/details")
        assert status == 404 and "no run 'nope'" in reply["error"]["message"]

    serving(scenario)


def test_a_past_run_runs_again_as_it_was_and_says_what_changed_in_its_file(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=3, add=1))
        socket = await server.connect()
        first = (await server.run_to_end(socket, "chain.json")).run_id
        changed = chain(n=3, add=5)
        changed["nodes"][0]["position"] = {"x": 400, "y": 80}  # layout is not a change
        changed["nodes"].append({"id": "c", "type": "Add", "params": {"add": 1}})
        server.save("chain.json", changed)

        details = await _details(server, first)
        assert details["changes"] == ["node 'c' added", "a.add: 1 → 5"]

        status, reply = await server.post(f"/api/runs/{first}/rerun")
        assert status == 202, reply
        again = await socket.until(p.RunFinished, lambda m: m.run_id == reply["run_id"])
        await server.idle()
        assert again.status == "completed" and set(again.counts) == {"src", "a", "b"}
        status, item = await server.get("/api/outputs?workflow=chain.json&node=b&index=0")
        assert item["item"] == {"x": 11}  # 0 + 1 + 10: the parameter the first run had
        _status, listed = await server.get("/api/runs")
        assert [r["run_id"] for r in listed["runs"]] == [reply["run_id"], first]

        (server.settings.workflows / "chain.json").unlink()
        assert (await _details(server, first))["changes"] == ["the file no longer exists"]

    serving(scenario)


def _train_run(store: Store, name: str, losses: list[float], hparams: dict[str, Any]) -> str:
    run_id = store.start_run("train", name, {"hparams": hparams, "seed": 1})
    rows: list[tuple[str, int, dict[str, Any]]] = []
    for step, loss in enumerate(losses, start=1):
        rows.append(("training", step * 10, {"loss": loss, "note": "text is not plotted"}))
        if step % 2 == 0:
            rows.append(("validation", step * 10, {"validation_loss": loss * 1.1, "acc": 0.5}))
    store.report_metric_rows(run_id, rows)
    store.finish_run(run_id, "completed", {"batches_completed": len(losses) * 10})
    return run_id


def test_training_runs_and_searches_are_listed_with_their_metric_curves(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        store = _store(server)
        search = store.start_run("search", "search:train.py", {"trials": [{"lr": 0.1}]})
        trials = [
            _train_run(
                store,
                f"search:train.py#trial-{i}",
                [1.0 / (i + s) for s in range(1, 5)],
                {"lr": lr},
            )
            for i, lr in enumerate([0.1, 0.01])
        ]
        lone = _train_run(store, "alone", [float("nan"), 2.0], {"lr": 1})

        _status, listed = await server.get("/api/runs")
        runs = {r["run_id"]: r for r in listed["runs"]}
        assert runs[search]["kind"] == "search"
        assert [runs[t]["search"] for t in trials] == [search, search]
        assert runs[trials[1]]["params"] == {"lr": 0.01} and runs[trials[1]]["metrics"] == 6
        assert runs[lone]["search"] is None
        status, only = await server.get("/api/runs?kind=train")
        assert status == 200 and {r["kind"] for r in only["runs"]} == {"train"}
        status, reply = await server.get("/api/runs?kind=trains")
        assert status == 400 and "workflow, train, search, batch" in reply["error"]["message"]

        status, metrics = await server.get(f"/api/runs/{trials[0]}/metrics")
        assert status == 200
        got = p.from_json(p.RunMetrics, metrics)
        series = {(s.group, s.name): s for s in got.series}
        assert set(series) == {
            ("training", "loss"),
            ("validation", "validation_loss"),
            ("validation", "acc"),
        }
        assert series["training", "loss"].steps == [10, 20, 30, 40]
        assert series["training", "loss"].values == [1.0, 0.5, 1 / 3, 0.25]
        assert series["validation", "validation_loss"].steps == [20, 40]

        _status, metrics = await server.get(f"/api/runs/{lone}/metrics")
        loss = next(s for s in metrics["series"] if s["name"] == "loss")
        assert loss["values"] == [None, 2.0]  # NaN is a gap, not a point

        status, several = await server.get(f"/api/metrics?runs={trials[1]},{trials[0]}")
        assert status == 200 and [r["run_id"] for r in several["runs"]] == trials[::-1]
        assert several["runs"][0]["name"] == "search:train.py#trial-1"
        status, reply = await server.get(f"/api/metrics?runs={trials[0]},nope")
        assert status == 404 and "nope" in reply["error"]["message"]
        status, reply = await server.get("/api/metrics")
        assert status == 400 and "?runs=ID,ID" in reply["error"]["message"]

        status, reply = await server.post(f"/api/runs/{lone}/rerun")
        assert status == 409 and "train run (run its script again)" in reply["error"]["message"]

    serving(scenario)


def test_a_long_series_is_thinned_to_its_shape_keeping_the_last_point(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        store = _store(server)
        run_id = store.start_run("train", "long", {})
        total = MAX_METRIC_POINTS * 3 + 7
        store.report_metric_rows(
            run_id, [("training", i, {"loss": 1.0 / (i + 1)}) for i in range(total)]
        )
        _status, metrics = await server.get(f"/api/runs/{run_id}/metrics")
        (series,) = metrics["series"]
        assert len(series["steps"]) <= MAX_METRIC_POINTS
        assert series["steps"][0] == 0 and series["steps"][-1] == total - 1
        assert series["dropped"] == total - len(series["steps"])

    serving(scenario)
