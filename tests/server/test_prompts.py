"""Prompts: every client sees the question; an answer from any client resumes the node."""

from __future__ import annotations

from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook.workflow import Workflow


def labelling(n: int) -> dict[str, object]:
    wf = Workflow()
    src = wf.add("Numbers", id="src", n=n)
    wf.connect(src, wf.add("Label", id="label"))
    wf.connect(src, wf.add("Add", id="other"))
    return wf.to_json()


def test_a_prompt_round_trip_between_two_clients(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("label.json", labelling(2))
        alice, bob = await server.connect(), await server.connect()
        run_id = await server.run("label.json")
        asked = await alice.until(p.Prompt)
        assert (await bob.until(p.Prompt)).prompt_id == asked.prompt_id
        assert asked.node_id == "label" and asked.data == {"x": 0}
        assert asked.prompt["type"] == "selection"
        assert asked.prompt["options"]["choices"] == ["cat", "dog"]
        other = await alice.until(p.NodeFinished, lambda m: m.node_id == "other")
        assert other.counts == {"out": 2}, "the rest of the graph runs while a prompt waits"

        late = await server.connect()
        assert [q.prompt_id for q in late.of(p.Snapshot)[0].prompts] == [asked.prompt_id]

        route = f"/api/prompts/{asked.prompt_id}"
        status, refused = await server.post(route, {"answer": "horse"})
        assert status == 400 and "choices" in refused["error"]["message"]
        assert (await server.post(route, {"answer": "dog"}))[0] == 200
        answered = await alice.until(p.PromptAnswered)
        assert (answered.prompt_id, answered.answer) == (asked.prompt_id, "dog")

        second = await alice.until(p.Prompt)
        status, _ = await server.post(f"/api/prompts/{second.prompt_id}", {"answer": "cat"})
        assert status == 200
        status, again = await server.post(f"/api/prompts/{second.prompt_id}", {"answer": "cat"})
        assert status == 404 and again["error"]["code"] == "not_found"
        finished = await alice.until(p.RunFinished, lambda m: m.run_id == run_id)
        assert finished.status == "completed" and finished.counts["label"] == {"out": 2}
        status, item = await server.get("/api/outputs?workflow=label.json&node=label&index=0")
        assert item["item"] == {"x": 0, "label": "dog"}

    serving(scenario)


def test_stopping_a_run_that_waits_for_an_answer(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("label.json", labelling(1))
        socket = await server.connect()
        await server.run("label.json")
        await socket.until(p.Prompt)
        assert (await server.post("/api/runs/current/stop"))[0] == 200
        assert (await socket.until(p.RunFinished)).status == "stopped"
        _status, snapshot = await server.get("/api/runs/current")
        assert snapshot["prompts"] == []

    serving(scenario)
