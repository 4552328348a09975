"""The websocket sends events and answers `ping`; runs are started and controlled over HTTP. A
client that sends a command the websocket no longer takes is told which route does it."""

from __future__ import annotations

import json
from typing import Any

from server_harness import Serve, Server, chain

from graphbook import protocol as p

MOVED: dict[str, tuple[dict[str, Any], str]] = {
    "run": ({"workflow": "chain.json"}, "POST /api/runs"),
    "pause": ({}, "POST /api/runs/current/pause"),
    "resume": ({}, "POST /api/runs/current/resume"),
    "step": ({"node": "a"}, "POST /api/runs/current/step"),
    "stop": ({}, "POST /api/runs/current/stop"),
    "answer": ({"prompt_id": "q", "answer": 1}, "POST /api/prompts/{prompt_id}"),
    "clear": ({"workflow": "chain.json"}, "POST /api/cache/clear"),
}


def test_a_run_command_over_the_websocket_is_refused_naming_the_http_route(
    serving: Serve,
) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain())
        socket = await server.connect()
        for name, (fields, route) in MOVED.items():
            await socket.ws.send_str(json.dumps({"type": name, "ref": name, **fields}))
            error = await socket.until(p.Error)
            assert error.code == "unknown_type" and route in error.message, error.message
        await socket.send(p.Ping("still"))
        assert (await socket.until(p.Pong)).ref == "still"
        assert socket.of(p.RunStarted) == [], "a refused command started a run"
        _status, current = await server.get("/api/runs/current")
        assert current["run"] is None

    serving(scenario)


def test_the_http_route_runs_what_the_websocket_no_longer_does(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain())
        socket = await server.connect()
        status, http = await server.post(
            "/api/runs", {"workflow": "chain.json", "mode": "until", "node": "a"}
        )
        assert status == 202 and set(http) == {"run_id"}
        started = await socket.until(p.RunStarted, lambda m: m.run_id == http["run_id"])
        assert (started.workflow, started.mode, started.node) == ("chain.json", "until", "a")
        assert [n.node_id for n in started.nodes] == ["src", "a"]

    serving(scenario)
