"""Websocket commands answer as their HTTP routes do: a refused run names every problem."""

from __future__ import annotations

from server_harness import Serve, Server, chain

from graphbook import protocol as p


def test_a_run_of_an_invalid_workflow_over_the_websocket_lists_its_problems(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        document = chain()
        nodes = {n["id"]: n for n in document["nodes"]}
        nodes["a"]["type"] = "Ad"
        nodes["b"]["params"]["add"] = "ten"
        server.save("bad.json", document)
        _status, http = await server.post("/api/runs", {"workflow": "bad.json"})
        socket = await server.connect()
        await socket.send(p.Run("bad.json", ref="1"))
        error = await socket.until(p.Error, lambda m: m.ref == "1")
        assert error.code == "invalid_workflow"
        assert [p.to_json(pr) for pr in error.problems] == http["error"]["problems"]
        by_node = {pr.node_id: pr for pr in error.problems}
        assert set(by_node) == {"a", "b"}
        assert "unknown node type 'Ad'" in by_node["a"].message
        assert "Add" in by_node["a"].fix
        assert "add" in by_node["b"].message and by_node["b"].fix

    serving(scenario)


def test_other_refusals_carry_no_problems(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        socket = await server.connect()
        await socket.send(p.Run("nope.json", ref="2"))
        error = await socket.until(p.Error, lambda m: m.ref == "2")
        assert error.code == "not_found" and error.problems == []

    serving(scenario)


def test_a_run_started_over_the_websocket_is_acknowledged_as_http_does(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain())
        socket = await server.connect()
        status, http = await server.post("/api/runs", {"workflow": "chain.json"})
        assert status == 202 and set(http) == {"run_id"}
        await socket.until(p.RunFinished, lambda m: m.run_id == http["run_id"])
        await server.idle()
        await socket.send(p.Run("chain.json", mode="until", node="a", ref="3"))
        ack = await socket.until(p.Ack, lambda m: m.ref == "3")
        assert set(ack.result) == {"run_id"}
        started = await socket.until(p.RunStarted, lambda m: m.run_id == ack.result["run_id"])
        assert (started.workflow, started.mode, started.node) == ("chain.json", "until", "a")
        assert [n.node_id for n in started.nodes] == ["src", "a"]

    serving(scenario)
