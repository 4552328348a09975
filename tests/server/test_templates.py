"""Templates through the API: listed with their workflows, created into the workflows folder
with their sample data under the working directory, and then run as made."""

from __future__ import annotations

from pathlib import Path

import pytest
from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook import templates


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's working directory (where runs start and samples go): a folder of its own."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def test_templates_are_listed_created_and_run(serving: Serve, in_tmp: Path) -> None:
    async def scenario(server: Server) -> None:
        status, reply = await server.get("/api/templates")
        assert status == 200
        listed = p.from_json(p.TemplateList, reply).templates
        assert [t.name for t in listed] == [t.name for t in templates.TEMPLATES]
        for info in listed:
            assert info.title and info.description
            assert info.workflow["nodes"] and all("position" in n for n in info.workflow["nodes"])

        socket = await server.connect()
        name = templates.TEMPLATES[0].name
        status, reply = await server.post(f"/api/templates/{name}", {"path": "sub/mine.json"})
        assert status == 201, reply
        created = p.from_json(p.TemplateCreated, reply)
        assert created.path == "sub/mine.json"
        written = server.settings.workflows / "sub" / "mine.json"
        assert written.read_text() == templates.template(name).file.read_text()
        assert created.samples and all((in_tmp / s).exists() for s in created.samples)
        changed = await socket.until(p.WorkflowsChanged)
        assert (changed.path, changed.action) == ("sub/mine.json", "saved")
        status, listing = await server.get("/api/workflows")
        assert "sub/mine.json" in [f["path"] for f in listing["files"]]

        status, document = await server.get("/api/workflows/sub/mine.json")
        assert status == 200 and document["problems"] == []
        finished = await server.run_to_end(socket, "sub/mine.json")
        assert finished.status == "completed", finished

        # A second one beside it: the samples there already are kept, not written again.
        status, reply = await server.post(f"/api/templates/{name}", {"path": "again.json"})
        assert status == 201 and reply["samples"] == []

    serving(scenario)


def test_a_template_fills_a_workflow_file_with_no_nodes(serving: Serve, in_tmp: Path) -> None:
    async def scenario(server: Server) -> None:
        chosen = templates.TEMPLATES[0]
        server.save("new.json", {"nodes": [], "edges": []})
        body = {"path": "new.json", "fill": True}
        status, reply = await server.post(f"/api/templates/{chosen.name}", body)
        assert status == 201 and reply["path"] == "new.json"
        written = (server.settings.workflows / "new.json").read_text()
        assert written == chosen.file.read_text(encoding="utf-8")

    serving(scenario)


def test_what_the_templates_route_refuses(serving: Serve, in_tmp: Path) -> None:
    async def scenario(server: Server) -> None:
        name = templates.TEMPLATES[0].name
        status, reply = await server.post("/api/templates/no-such-thing", {"path": "x.json"})
        assert status == 404 and reply["error"]["code"] == "not_found"
        assert "no-such-thing" in reply["error"]["message"] and name in reply["error"]["message"]

        server.save("taken.json", {"nodes": [], "edges": []})
        before = (server.settings.workflows / "taken.json").read_text()
        status, reply = await server.post(f"/api/templates/{name}", {"path": "taken.json"})
        assert status == 409 and reply["error"]["code"] == "conflict"
        assert "taken.json" in reply["error"]["message"] and "another" in reply["error"]["message"]
        assert (server.settings.workflows / "taken.json").read_text() == before

        server.save("full.json", {"nodes": [{"id": "a", "type": "Split"}], "edges": []})
        full = (server.settings.workflows / "full.json").read_text()
        status, reply = await server.post(
            f"/api/templates/{name}", {"path": "full.json", "fill": True}
        )
        assert status == 409, "only a file with no nodes is filled"
        assert (server.settings.workflows / "full.json").read_text() == full

        for bad in ("../outside.json", "/abs.json", ".hidden.json"):
            status, reply = await server.post(f"/api/templates/{name}", {"path": bad})
            assert status == 400 and reply["error"]["code"] == "bad_path", bad
        assert not (server.settings.workflows.parent / "outside.json").exists()
        status, reply = await server.post(f"/api/templates/{name}", {"path": "notes.txt"})
        assert status == 400 and ".json" in reply["error"]["message"]
        status, reply = await server.post(f"/api/templates/{name}", {"file": "x.json"})
        assert status == 400 and reply["error"]["code"] == "bad_message"
        assert not list(in_tmp.iterdir()), "nothing is written for a refused request"

    serving(scenario)
