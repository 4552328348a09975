"""Overrides in the server's run command (HTTP and websocket): the outputs of the same values
saved in the file, kept in the run record and reused by "run again"; bad ones refused."""

from __future__ import annotations

from server_harness import Serve, Server, chain

from graphbook import protocol as p
from graphbook.store import Store


async def _first_b(server: Server, name: str) -> object:
    _status, item = await server.get(f"/api/outputs?workflow={name}&node=b&index=0")
    return item["item"]


def test_overrides_over_http_and_websocket_run_as_the_saved_values(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=3))
        server.save("saved.json", chain(n=3, add=5))
        socket = await server.connect()
        await server.run_to_end(socket, "saved.json")
        expected = await _first_b(server, "saved.json")
        assert expected == {"x": 15}

        over = {"a": {"add": 5}}
        done = await server.run_to_end(socket, "chain.json", overrides=over)
        assert done.status == "completed"
        assert await _first_b(server, "chain.json") == expected
        record = Store(server.settings.data / "graphbook.sqlite").get_run(done.run_id)
        assert record.config["overrides"] == over and record.config["params"]["a"] == {"add": 5}
        graph_nodes = {n["id"]: n for n in record.config["graph"]["nodes"]}
        assert graph_nodes["a"]["params"] == {"add": 1}  # the file's own, overrides beside it

        await server.run_to_end(socket, "chain.json")  # the file's values again
        assert await _first_b(server, "chain.json") == {"x": 11}
        status, reply = await server.post(f"/api/runs/{done.run_id}/rerun")
        assert status == 202, reply
        await socket.until(p.RunFinished, lambda m: m.run_id == reply["run_id"])
        await server.idle()
        assert await _first_b(server, "chain.json") == expected  # run again: the overrides too

    serving(scenario)


def test_bad_overrides_are_refused_naming_what_is_wrong(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain(n=3))
        before = (server.settings.workflows / "chain.json").read_text()
        for overrides, words in [
            ({"ghost": {"add": 1}}, ["'ghost'", "the nodes are"]),
            ({"a": {"add": "many"}}, ["node 'a'", "'add'", "whole number"]),
            ({"a": {"nope": 1}}, ["node 'a'", "no parameter 'nope'"]),
            ({"a": 3}, ["run.overrides.a", "expected an object"]),
        ]:
            status, reply = await server.post(
                "/api/runs", {"workflow": "chain.json", "overrides": overrides}
            )
            assert status in (400, 422), reply
            for word in words:
                assert word in reply["error"]["message"], reply
        _status, listed = await server.get("/api/runs")
        assert listed["runs"] == []
        assert (server.settings.workflows / "chain.json").read_text() == before

    serving(scenario)
