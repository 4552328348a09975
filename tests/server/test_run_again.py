"""A client that sees `run_finished` may start the next run at once: the session is free
before the message goes out (over the websocket and over HTTP)."""

from __future__ import annotations

import functools

from server_harness import Serve, Server, Socket, chain

from graphbook import protocol as p

CYCLES = 30


def replies(message: object, ref: str) -> bool:
    return isinstance(message, p.Ack | p.Error) and message.ref == ref


async def finished(socket: Socket, run_id: str) -> None:
    await socket.until(p.RunFinished, lambda m: m.run_id == run_id)


def test_the_next_run_is_accepted_as_soon_as_run_finished_is_seen(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("quick.json", chain(n=1))
        socket = await server.connect()
        refused = []
        for i in range(CYCLES):
            await socket.send(p.Run("quick.json", ref=f"ws{i}"))
            reply = await socket.until(object, functools.partial(replies, ref=f"ws{i}"))
            if isinstance(reply, p.Error):
                refused.append(reply.message)
                await server.idle()
                continue
            await finished(socket, reply.result["run_id"])
        for _ in range(CYCLES):  # the same over HTTP, started as the message arrives
            status, reply = await server.post("/api/runs", {"workflow": "quick.json"})
            if status != 202:
                refused.append(reply["error"]["message"])
                await server.idle()
                continue
            await finished(socket, reply["run_id"])
        assert not refused, f"{len(refused)} of {2 * CYCLES} refused: {refused[0]}"

    serving(scenario)
