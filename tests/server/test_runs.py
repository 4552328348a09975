"""Runs over the real server: streamed end to end, snapshots, partial re-runs, control."""

from __future__ import annotations

import asyncio

from server_harness import Serve, Server, chain

from graphbook import protocol as p


def test_a_run_streams_end_to_end(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=5))
        socket = await server.connect()
        finished = await server.run_to_end(socket, "chain.json")
        assert finished.status == "completed" and finished.errors == 0
        assert finished.counts == {"src": {"out": 5}, "a": {"out": 5}, "b": {"out": 5}}
        kinds = [m.type for m in socket.seen]
        assert kinds.index("run_started") < kinds.index("node_plan") < kinds.index("node_started")
        assert kinds[-1] == "run_finished"
        logs = [m.message for m in socket.of(p.NodeLog) if m.node_id == "a"]
        assert logs == [f"x={i}" for i in range(5)]
        outputs = socket.of(p.NodeOutput)
        assert {"node_id": "b", "preview": {"x": 11}} in [
            {"node_id": o.node_id, "preview": o.preview} for o in outputs
        ]
        status, item = await server.get("/api/outputs?workflow=chain.json&node=b&index=4")
        assert status == 200 and item["item"] == {"x": 15} and item["total"] == 5

    serving(scenario)


def test_a_client_connecting_mid_run_gets_a_snapshot(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("slow.json", chain(n=400, delay=0.01))
        first = await server.connect()
        run_id = await server.run("slow.json")
        await first.until(p.NodeProgress, lambda m: m.node_id == "b" and m.counts["out"] > 0)
        late = await server.connect()
        snapshot = late.of(p.Snapshot)[0]
        assert snapshot.run is not None and snapshot.run.run_id == run_id
        assert snapshot.run.status == "running"
        nodes = {n.node_id: n for n in snapshot.run.nodes}
        assert nodes["b"].state == "running" and nodes["b"].counts["out"] > 0
        assert nodes["a"].logs and nodes["a"].action == "run"
        progress = await late.until(p.NodeProgress, lambda m: m.node_id == "b")
        assert progress.counts["out"] >= nodes["b"].counts["out"]
        status, _ = await server.post("/api/runs/current/stop")
        assert status == 200
        finished = await late.until(p.RunFinished)
        assert finished.status == "stopped"

    serving(scenario)


def test_a_parameter_change_reruns_only_what_changed(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=5, add=1))
        socket = await server.connect()
        await server.run_to_end(socket, "chain.json")
        socket.seen.clear()
        finished = await server.run_to_end(socket, "chain.json", graph=chain(n=5, add=2))
        plans = {m.node_id: (m.action, m.cause) for m in socket.of(p.NodePlan)}
        assert plans == {
            "src": ("reuse", "unchanged"),
            "a": ("run", "params"),
            "b": ("run", "upstream"),
        }
        reason = next(m.reason for m in socket.of(p.NodePlan) if m.node_id == "a")
        assert "add" in reason
        assert {m.node_id for m in socket.of(p.NodeStarted)} == {"a", "b"}
        cached = [m for m in socket.of(p.NodeFinished) if m.status == "cached"]
        assert [(m.node_id, m.counts) for m in cached] == [("src", {"out": 5})]
        assert finished.counts["b"] == {"out": 5}
        _status, item = await server.get("/api/outputs?workflow=chain.json&node=b&index=0")
        assert item["item"] == {"x": 12}

    serving(scenario)


def test_clearing_a_node_clears_downstream_and_files_do_not_share_a_cache(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        server.save("one.json", chain())
        server.save("two.json", chain())
        socket = await server.connect()
        await server.run_to_end(socket, "one.json")
        socket.seen.clear()
        await server.run_to_end(socket, "two.json")
        assert {m.cause for m in socket.of(p.NodePlan)} == {"new"}
        status, cleared = await server.post(
            "/api/cache/clear", {"workflow": "one.json", "node": "a"}
        )
        assert status == 200 and cleared["nodes"] == ["a", "b"]
        await socket.until(p.CacheCleared)
        socket.seen.clear()
        await server.run_to_end(socket, "one.json")
        plans = {m.node_id: m.cause for m in socket.of(p.NodePlan)}
        assert plans == {"src": "unchanged", "a": "cleared", "b": "cleared"}

    serving(scenario)


def test_run_until_a_node_and_step_by_step(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=3))
        socket = await server.connect()
        finished = await server.run_to_end(socket, "chain.json", mode="until", node="a")
        assert set(finished.counts) == {"src", "a"}
        socket.seen.clear()
        status, _ = await server.post("/api/cache/clear", {"workflow": "chain.json"})
        assert status == 200
        run_id = await server.run("chain.json", mode="step", node="b")
        paused = await socket.until(p.RunPaused)
        assert (paused.reason, paused.node_id) == ("step", "b")
        _status, snapshot = await server.get("/api/runs/current")
        nodes = {n["node_id"]: n for n in snapshot["run"]["nodes"]}
        assert snapshot["run"]["status"] == "paused" and nodes["b"]["received"] == 1
        assert (await server.post("/api/runs/current/step", {"node": "b"}))[0] == 200
        await socket.until(
            p.RunPaused, lambda m: m.run_id == run_id and len(socket.of(p.RunPaused)) == 2
        )
        assert (await server.post("/api/runs/current/resume"))[0] == 200
        finished = await socket.until(p.RunFinished)
        assert finished.status == "completed" and finished.counts["b"] == {"out": 3}

    serving(scenario)


def test_pause_and_resume(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("slow.json", chain(n=50, delay=0.005))
        socket = await server.connect()
        await server.run("slow.json")
        await socket.until(p.NodeStarted)
        status, _ = await server.post("/api/runs/current/pause")
        assert status == 200
        assert (await socket.until(p.RunPaused)).reason == "pause"
        _status, first = await server.get("/api/runs/current")
        await asyncio.sleep(0.3)  # paused a while: the run's clock stands still meanwhile
        _status, later = await server.get("/api/runs/current")
        assert later["run"]["seconds"] == first["run"]["seconds"]
        assert later["run"]["paused_at"] is not None
        status, _ = await server.post("/api/runs/current/resume")
        await socket.until(p.RunResumed)
        finished = await socket.until(p.RunFinished)
        assert finished.status == "completed" and finished.paused >= 0.3
        _status, history = await server.get("/api/runs")
        record = history["runs"][0]
        assert record["paused"] == finished.paused
        assert record["ended"] - record["started"] >= finished.seconds + finished.paused - 0.05
        await server.idle()  # the run's thread hands back just after its last message
        status, reply = await server.post("/api/runs/current/pause")
        assert status == 409 and reply["error"]["code"] == "no_run"

    serving(scenario)


def test_node_errors_arrive_on_the_node_with_their_traceback(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        document = chain(n=2)
        node = next(n for n in document["nodes"] if n["id"] == "a")
        node["type"], node["params"] = "Boom", {}
        server.save("boom.json", document)
        socket = await server.connect()
        finished = await server.run_to_end(socket, "boom.json")
        assert finished.status == "failed"
        error = socket.of(p.NodeError)[0]
        assert error.node_id == "a" and error.error.type == "ValueError"
        assert "boom at 0" in error.error.traceback and error.item == {"x": 0}
        _status, history = await server.get("/api/runs")
        assert history["runs"][0]["status"] == "failed"
        assert "boom at 0" in history["runs"][0]["error"]

    serving(scenario)


def test_after_clearing_the_cache_a_reloaded_page_forgets_the_cleared_nodes(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        document = chain(n=2)
        node = next(n for n in document["nodes"] if n["id"] == "a")
        node["type"], node["params"] = "Boom", {}
        server.save("boom.json", document)
        socket = await server.connect()
        await server.run_to_end(socket, "boom.json")
        before = (await server.connect()).of(p.Snapshot)[0].run
        assert before is not None
        assert {n.node_id: n.state for n in before.nodes}["a"] == "failed"
        status, _ = await server.post("/api/cache/clear", {"workflow": "boom.json", "node": "a"})
        assert status == 200
        await socket.until(p.CacheCleared)
        after = (await server.connect()).of(p.Snapshot)[0].run
        assert after is not None and after.status == "failed"
        nodes = {n.node_id: n for n in after.nodes}
        assert nodes["src"] == before.nodes[0], "a node not cleared keeps what the run showed"
        assert (nodes["a"].state, nodes["a"].counts, nodes["a"].errors) == ("waiting", {}, [])

    serving(scenario)


def test_a_run_failing_before_its_nodes_start_ends_with_the_error_on_its_node(
    serving: Serve,
) -> None:
    """A Number of 2.5 fits an int parameter's wire but not its value: the source fails as it
    is built, before anything runs; the error lands on it and the run's record ends failed."""

    async def scenario(server: Server) -> None:
        document = chain(n=2)
        document["nodes"].append(
            {"id": "num", "type": "Number", "params": {"val": 2.5}, "position": {"x": 0, "y": 0}}
        )
        document["edges"].append(
            {"source": "num", "output": "resource", "target": "src", "input": "n"}
        )
        server.save("early.json", document)
        socket = await server.connect()
        finished = await server.run_to_end(socket, "early.json")
        assert (finished.status, finished.errors) == ("failed", 1)
        [error] = socket.of(p.NodeError)
        assert error.node_id == "src" and error.error.type == "ParamError"
        assert "parameter 'n' expects a whole number" in error.error.message
        [ended] = [m for m in socket.of(p.NodeFinished) if m.node_id == "src"]
        assert (ended.status, ended.errors) == ("failed", 1)
        _status, history = await server.get("/api/runs")
        record = history["runs"][0]
        assert record["status"] == "failed" and record["ended"] is not None
        assert record["error"].startswith("node 'src': ")

    serving(scenario)


def test_a_wire_whose_types_cannot_match_is_refused_naming_the_node_and_the_fix(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        document = chain(n=2)
        document["nodes"].append(
            {"id": "txt", "type": "Text", "params": {"val": "3"}, "position": {"x": 0, "y": 0}}
        )
        document["edges"].append(
            {"source": "txt", "output": "resource", "target": "a", "input": "add"}
        )
        body = {"workflow": "wired.json", "graph": document}
        status, reply = await server.post("/api/runs", body)
        assert status == 422 and reply["error"]["code"] == "invalid_workflow"
        [problem] = reply["error"]["problems"]
        assert problem["node_id"] == "a"
        assert problem["message"] == (
            "parameter 'add' expects a whole number, but resource 'txt' (Text) gives a string"
        )
        assert problem["fix"].startswith("delete the wire and give 'add' a value")

    serving(scenario)


def test_an_invalid_workflow_is_refused_with_its_problems(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        document = chain()
        next(n for n in document["nodes"] if n["id"] == "a")["type"] = "Ad"
        server.save("bad.json", document)
        status, reply = await server.post("/api/runs", {"workflow": "bad.json"})
        assert status == 422 and reply["error"]["code"] == "invalid_workflow"
        problem = reply["error"]["problems"][0]
        assert problem["node_id"] == "a" and "Add" in problem["fix"]
        status, reply = await server.post("/api/runs", {"workflow": "nope.json"})
        assert status == 404

    serving(scenario)


def test_history_survives_a_restart(serving: Serve) -> None:
    run_ids: list[str] = []

    async def first(server: Server) -> None:
        server.save("chain.json", chain())
        socket = await server.connect()
        run_ids.append((await server.run_to_end(socket, "chain.json")).run_id)

    async def second(server: Server) -> None:
        status, history = await server.get("/api/runs")
        assert [r["run_id"] for r in history["runs"]] == run_ids
        record = history["runs"][0]
        assert record["status"] == "completed" and record["workflow"] == "chain.json"
        assert record["counts"]["b"] == {"out": 5} and record["params"]["a"] == {"add": 1}
        status, one = await server.get(f"/api/runs/{run_ids[0]}")
        assert status == 200 and one["run_id"] == run_ids[0]

    serving(first)
    serving(second)


def test_runs_with_worker_processes(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        document = chain(n=10)
        next(n for n in document["nodes"] if n["id"] == "b").update(type="Squares", params={})
        server.save("squares.json", document)
        socket = await server.connect()
        finished = await server.run_to_end(socket, "squares.json")
        assert finished.status == "completed" and finished.counts["b"] == {"out": 10}
        _, item = await server.get("/api/outputs?workflow=squares.json&node=b&index=3")
        assert item["item"] == {"x": 4, "square": 16}
        _, stats = await server.get("/api/system")
        assert stats["pool"]["workers"] == 2
        cache = stats["cache"]  # the outputs just read are held in the run host's cache
        assert cache["entries"] > 0 and 0 < cache["used_bytes"] <= cache["budget_bytes"]

    serving(scenario, workers=2)


def test_runs_on_ray_look_like_local_runs(serving: Serve, ray_address: str) -> None:
    async def scenario(server: Server) -> None:
        document = chain(n=10)
        next(n for n in document["nodes"] if n["id"] == "b").update(type="Squares", params={})
        server.save("squares.json", document)
        socket = await server.connect()
        run_id = await server.run("squares.json")
        # Ray actors start with the pool; on a busy machine importing torch takes a while
        finished = await socket.next(timeout=180)
        while not (isinstance(finished, p.RunFinished) and finished.run_id == run_id):
            finished = await socket.next(timeout=180)
        await server.idle()
        assert finished.status == "completed" and finished.counts["b"] == {"out": 10}
        _, item = await server.get("/api/outputs?workflow=squares.json&node=b&index=3")
        assert item["item"] == {"x": 4, "square": 16}
        assert [m.message for m in socket.of(p.NodeLog) if m.node_id == "a"][:2] == ["x=0", "x=1"]
        _, stats = await server.get("/api/system")
        assert stats["pool"]["workers"] == 1 and stats["pool"]["load"]["workers"] == 1

    serving(scenario, workers=1, ray=ray_address)


def test_a_workflows_last_run_is_kept_after_others_run_and_after_a_restart(
    serving: Serve,
) -> None:
    """A page opening a workflow again (after a reload, when another workflow ran since) gets
    its last run: live from the server's view (logs, outputs), or after a restart from the
    run store (status, counts, and each node's time and last logs, saved as the run ended)."""

    async def first(server: Server) -> None:
        server.save("one.json", chain(n=4))
        server.save("two.json", chain(n=2))
        socket = await server.connect()
        ran = await server.run_to_end(socket, "one.json")
        await server.run_to_end(socket, "two.json")
        status, last = await server.get("/api/runs/last?workflow=one.json")
        assert status == 200 and last["source"] == "live"
        run = last["run"]
        assert (run["run_id"], run["status"]) == (ran.run_id, "completed")
        nodes = {n["node_id"]: n for n in run["nodes"]}
        assert nodes["b"]["counts"] == {"out": 4} and "out" in nodes["b"]["outputs"]
        assert [entry["message"] for entry in nodes["a"]["logs"]] == [f"x={i}" for i in range(4)]
        _status, current = await server.get("/api/runs/last?workflow=two.json")
        assert current["run"]["nodes"][0]["counts"] == {"out": 2}
        _status, never = await server.get("/api/runs/last?workflow=three.json")
        assert never == {"workflow": "three.json", "run": None, "source": None}
        status, bad = await server.get("/api/runs/last?workflow=../x.json")
        assert status == 400, bad

    async def after_restart(server: Server) -> None:
        _status, last = await server.get("/api/runs/last?workflow=one.json")
        assert last["source"] == "history"
        run = last["run"]
        assert run["status"] == "completed" and run["seconds"] > 0
        nodes = {n["node_id"]: (n["state"], n["counts"]) for n in run["nodes"]}
        assert nodes == {
            "src": ("done", {"out": 4}),
            "a": ("done", {"out": 4}),
            "b": ("done", {"out": 4}),
        }
        # What each node did was saved as the run ended: its time and last logs come back too.
        kept = {n["node_id"]: n for n in run["nodes"]}
        assert [entry["message"] for entry in kept["a"]["logs"]] == [f"x={i}" for i in range(4)]
        assert kept["b"]["seconds"] > 0 and kept["b"]["outputs"] == {}

    serving(first)
    serving(after_restart)
