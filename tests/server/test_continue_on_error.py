"""continue_on_error in the run request, over HTTP and the websocket: a failing node reports
each error and the run goes on to the end; without it the first error ends the run."""

from __future__ import annotations

from typing import Any

from server_harness import Serve, Server, chain


def failing(n: int = 3) -> dict[str, Any]:
    document = chain(n=n)
    node = next(n for n in document["nodes"] if n["id"] == "a")
    node["type"], node["params"] = "Boom", {}
    return document


def test_continue_on_error_over_http(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("boom.json", failing())
        socket = await server.connect()
        stopped = await server.run_to_end(socket, "boom.json")
        assert stopped.status == "failed" and stopped.errors == 1

        went_on = await server.run_to_end(socket, "boom.json", continue_on_error=True)
        assert went_on.status == "completed" and went_on.errors == 3
        assert went_on.counts["src"]["out"] == 3

        status, record = await server.get(f"/api/runs/{went_on.run_id}")
        assert status == 200 and record["status"] == "completed"
        status, reply = await server.post(
            "/api/runs", {"workflow": "boom.json", "continue_on_error": "yes"}
        )
        assert status == 400 and "continue_on_error" in reply["error"]["message"]

    serving(scenario)
