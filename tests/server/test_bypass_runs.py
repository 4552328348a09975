"""Bypassed and muted nodes and a re-triggered source, through the server's run request."""

from __future__ import annotations

from typing import Any

from server_harness import Serve, Server, chain

from graphbook import protocol as p


def with_mode(document: dict[str, Any], node_id: str, mode: str) -> dict[str, Any]:
    next(n for n in document["nodes"] if n["id"] == node_id)["mode"] = mode
    return document


def test_a_saved_bypass_is_honoured_and_a_muted_node_refuses_to_be_run_up_to(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", with_mode(chain(n=3), "a", "bypass"))
        socket = await server.connect()
        finished = await server.run_to_end(socket, "chain.json")
        assert finished.counts == {"src": {"out": 3}, "b": {"out": 3}}
        _status, item = await server.get("/api/outputs?workflow=chain.json&node=b&index=0")
        assert item["item"] == {"x": 10}  # 0 + 10: a added nothing
        started = socket.of(p.RunStarted)[-1]
        assert [n.node_id for n in started.nodes] == ["src", "b"]
        muted = with_mode(chain(n=3), "b", "mute")
        body = {"workflow": "chain.json", "mode": "until", "node": "b", "graph": muted}
        status, reply = await server.post("/api/runs", body)
        assert status == 400
        assert "node 'b' is muted, so it does not run" in reply["error"]["message"]

    serving(scenario)


def test_a_retriggered_source_runs_again_with_what_it_feeds_and_is_in_the_history(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=4))
        socket = await server.connect()
        await server.run_to_end(socket, "chain.json")
        socket.seen.clear()
        finished = await server.run_to_end(socket, "chain.json", mode="trigger", node="src")
        plans = {m.node_id: m.cause for m in socket.of(p.NodePlan)}
        assert plans == {"src": "triggered", "a": "upstream_runs", "b": "upstream_runs"}
        assert {m.node_id for m in socket.of(p.NodeStarted)} == {"src", "a", "b"}
        assert finished.status == "completed" and finished.counts["b"] == {"out": 4}
        _status, history = await server.get("/api/runs")
        latest = history["runs"][0]
        assert (latest["mode"], latest["node"], latest["status"]) == ("trigger", "src", "completed")
        body = {"workflow": "chain.json", "mode": "trigger"}
        status, reply = await server.post("/api/runs", body)
        assert status == 400 and 'mode "trigger" needs the node' in reply["error"]["message"]

    serving(scenario)
