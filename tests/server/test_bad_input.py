"""A thousand and more generated bad inputs over HTTP and the websocket: each gets a clear
error, the server keeps serving, and no saved file changes."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from server_harness import Serve, Server, chain
from yarl import URL

from graphbook import protocol as p

SEED = 20260601
DEEP = b"[" * 100_000 + b"]" * 100_000

TARGETS = [
    ("POST", "/api/runs"),
    ("PUT", "/api/workflows/keep.json"),
    ("PUT", "/api/workflows/%2e%2e/keep.json"),
    ("PATCH", "/api/workflows/keep.json"),
    ("POST", "/api/cache/clear"),
    ("POST", "/api/prompts/nope"),
    ("POST", "/api/runs/current/step"),
    ("POST", "/api/runs/current/jump"),
    ("PUT", "/api/settings"),
    ("GET", "/api/outputs?workflow=keep.json&node=zz&index=x"),
    ("GET", "/api/outputs?workflow=../keep.json&node=src"),
    ("GET", "/api/media/mem/nope"),
    ("GET", "/api/media/file/nowhere/a.png"),
    ("GET", "/api/runs/nope"),
    ("DELETE", "/api/workflows/missing.json"),
    ("GET", "/api/workflows/keep.txt"),
    ("POST", "/api/catalog"),
]

BAD_FIELDS: list[dict[str, Any]] = [
    {"workflow": 5},
    {"workflow": None},
    {"workflow": "keep.json", "mode": "sideways"},
    {"workflow": "keep.json", "mode": "until"},
    {"workflow": "keep.json", "mode": "step", "node": 5},
    {"workflow": "keep.json", "node": "ghost"},
    {"workflow": "../outside.json"},
    {"workflow": "keep.json", "graph": [1, 2]},
    {"workflow": "keep.json", "graph": {"format": "graphbook.workflow", "version": 7}},
    {"path": "/etc/passwd"},
    {"path": 12},
    {"answer": None, "extra": [1]},
    {"cache_budget_bytes": "lots"},
    {"node": {"a": 1}},
    {},
]


CLEAR_BODIES = [
    b'{"workflow": 5}',
    b'{"workflow": "../keep.json"}',
    b'{"workflow": "keep.json", "node": 3}',
    b'{"node": "a"}',
    b"[]",
    b"",
]


def body_for(path: str, rng: random.Random) -> bytes:
    """A bad body; clearing has its own, since clearing with extra fields is fine."""
    return rng.choice(CLEAR_BODIES) if path == "/api/cache/clear" else random_bytes(rng)


def random_bytes(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if kind == 1:
        text = json.dumps(rng.choice(BAD_FIELDS))
        return text[: rng.randrange(1, max(2, len(text)))].encode()
    if kind == 2:
        return rng.choice([b"", b"null", b"[]", b'"x"', b"1e999999", b"\xff\xfe", DEEP])
    if kind == 3:
        return json.dumps(rng.choice(BAD_FIELDS)).encode()
    if kind == 4:
        return json.dumps({"workflow": "keep.json", "mode": rng.random()}).encode()
    return "".join(chr(rng.randrange(0x20, 0x2FFF)) for _ in range(50)).encode("utf-8", "replace")


def bad_frames(rng: random.Random, count: int) -> list[str | bytes]:
    frames: list[str | bytes] = []
    types = [*p.CLIENT_TYPES, *p.MOVED_TO_HTTP, "jump", "", "RUN", "hello"]
    for _ in range(count):
        kind = rng.randrange(5)
        if kind == 0:
            frames.append(random_bytes(rng).decode("utf-8", "replace") or "?")
        elif kind == 1:
            frames.append(json.dumps({"type": rng.choice(types), **rng.choice(BAD_FIELDS)}))
        elif kind == 2:
            frames.append(json.dumps(rng.choice([[], 1, None, "run", {"no": "type"}])))
        elif kind == 3:
            frames.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))))
        else:
            frames.append(json.dumps({"type": "answer", "prompt_id": rng.random(), "answer": 1}))
    return frames


def valid_by_chance(frame: str | bytes) -> bool:
    """A generated frame that happens to be a valid message (a bare `ping`, say)."""
    try:
        p.decode_client(frame)
    except p.ProtocolError:
        return False
    return True


def test_a_thousand_bad_inputs_then_a_normal_run(serving: Serve) -> None:
    rng = random.Random(SEED)

    async def scenario(server: Server) -> None:
        server.save("keep.json", chain())
        kept = (server.settings.workflows / "keep.json").read_bytes()
        statuses = await send_http(server, rng, 700)
        assert all(400 <= s < 500 for s in statuses), sorted(set(statuses))
        assert len(statuses) == 700

        socket = await server.connect()
        frames = [f for f in bad_frames(rng, 800) if not valid_by_chance(f)]
        assert len(frames) >= 600
        for frame in frames:
            await (
                socket.ws.send_bytes(frame)
                if isinstance(frame, bytes)
                else socket.ws.send_str(frame)
            )
        errors = 0
        while errors < len(frames):
            message = await socket.next()
            assert not isinstance(message, p.Pong), f"a bad frame was accepted: {message}"
            errors += isinstance(message, p.Error)
        assert len(statuses) + len(frames) >= 1000

        assert (server.settings.workflows / "keep.json").read_bytes() == kept
        assert [f.name for f in server.settings.workflows.iterdir()] == ["keep.json"]
        finished = await server.run_to_end(socket, "keep.json")
        assert finished.status == "completed" and finished.counts["b"] == {"out": 5}

    serving(scenario, max_body=1 << 20)


async def send_http(server: Server, rng: random.Random, count: int) -> list[int]:
    targets = [rng.choice(TARGETS) for _ in range(count)]
    requests = [(target, body_for(target[1], rng)) for target in targets]
    limit = asyncio.Semaphore(8)

    async def one(target: tuple[str, str], body: bytes) -> int:
        method, path = target
        async with (
            limit,
            server.http.request(
                method, URL(server.url + path, encoded=True), data=body
            ) as response,
        ):
            if response.status >= 400:
                reply = await response.json()
                assert reply["error"]["code"] and reply["error"]["message"], reply
            return response.status

    return list(await asyncio.gather(*(one(t, b) for t, b in requests)))
