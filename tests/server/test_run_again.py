"""A client that sees `run_finished` may start the next run at once: the run manager is free
before the message goes out."""

from __future__ import annotations

from server_harness import Serve, Server, Socket, chain

from graphbook import protocol as p

CYCLES = 30


async def finished(socket: Socket, run_id: str) -> None:
    await socket.until(p.RunFinished, lambda m: m.run_id == run_id)


def test_the_next_run_is_accepted_as_soon_as_run_finished_is_seen(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("quick.json", chain(n=1))
        socket = await server.connect()
        refused = []
        for _ in range(CYCLES):  # each started as run_finished arrives
            status, reply = await server.post("/api/runs", {"workflow": "quick.json"})
            if status != 202:
                refused.append(reply["error"]["message"])
                await server.idle()
                continue
            await finished(socket, reply["run_id"])
        assert not refused, f"{len(refused)} of {CYCLES} refused: {refused[0]}"

    serving(scenario)
