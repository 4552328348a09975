"""Workflow files through the API: list, read (any format), write atomically, rename, delete."""

from __future__ import annotations

import json
from pathlib import Path

from server_harness import Serve, Server, chain

from graphbook import protocol as p

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_write_read_list_rename_delete(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        socket = await server.connect()
        status, written = await server.put("/api/workflows/sub/one.json", chain())
        assert status == 200 and written["problems"] == [] and written["path"] == "sub/one.json"
        assert (await socket.until(p.WorkflowsChanged)).action == "saved"
        on_disk = server.settings.workflows / "sub" / "one.json"
        assert on_disk.read_text().startswith('{\n  "format": "graphbook.workflow"')
        status, listing = await server.get("/api/workflows")
        assert [f["path"] for f in listing["files"]] == ["sub/one.json"]

        status, document = await server.get("/api/workflows/sub/one.json")
        doc = p.from_json(p.WorkflowDocument, document)
        assert doc.source_format == "graphbook" and doc.hash == written["hash"]
        assert {n["id"] for n in doc.workflow["nodes"]} == {"src", "a", "b"}

        status, reply = await server.put(
            "/api/workflows/sub/one.json", chain(n=9), headers={"If-Match": "stale"}
        )
        assert status == 409 and reply["error"]["code"] == "conflict"
        status, _ = await server.put(
            "/api/workflows/sub/one.json", chain(n=9), headers={"If-Match": doc.hash}
        )
        assert status == 200 and '"n": 9' in on_disk.read_text()

        status, renamed = await server.request(
            "PATCH", "/api/workflows/sub/one.json", json={"path": "two.json"}
        )
        assert status == 200 and renamed["path"] == "two.json" and not on_disk.exists()
        moved = await socket.until(p.WorkflowsChanged, lambda m: m.action == "renamed")
        assert (moved.path, moved.to) == ("sub/one.json", "two.json")
        server.save("three.json", chain())
        status, _ = await server.request(
            "PATCH", "/api/workflows/two.json", json={"path": "three.json"}
        )
        assert status == 409

        status, _ = await server.request("DELETE", "/api/workflows/two.json")
        assert status == 204 and not (server.settings.workflows / "two.json").exists()
        status, _ = await server.get("/api/workflows/two.json")
        assert status == 404
        leftovers = [q.name for q in server.settings.workflows.rglob(".*")]
        assert leftovers == [], "atomic writes leave no temporary files"

    serving(scenario)


def test_graphbook_files_and_invalid_workflows_still_open(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        source = (FIXTURES / "graphbook013_simple_workflow.json").read_text()
        (server.settings.workflows / "old.json").write_text(source)
        status, document = await server.get("/api/workflows/old.json")
        assert status == 200 and document["source_format"] == "graphbook0"
        assert document["workflow"]["format"] == "graphbook.workflow"
        assert any("MyFirstStep" in pr["message"] for pr in document["problems"])

        broken = chain()
        broken["edges"].append({"source": "b", "output": "out", "target": "ghost", "input": "in"})
        status, reply = await server.put("/api/workflows/broken.json", broken)
        assert status == 200 and reply["problems"][0]["node_id"] == "b"

    serving(scenario)


def test_a_bad_write_leaves_the_saved_file_intact(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("keep.json", chain())
        before = (server.settings.workflows / "keep.json").read_bytes()
        for body in ([1, 2], {"format": "graphbook.workflow", "version": 99}, {"nodes": 3}):
            status, reply = await server.put("/api/workflows/keep.json", body)
            assert status == 400 and reply["error"]["code"] == "invalid_workflow", body
        status, reply = await server.request(
            "PUT",
            "/api/workflows/keep.json",
            data=b"{not json",
            headers={"Content-Type": "application/json"},
        )
        assert status == 400 and reply["error"]["code"] == "bad_json"
        status, reply = await server.put("/api/workflows/keep.txt", chain())
        assert status == 400 and reply["error"]["code"] == "bad_path"
        assert (server.settings.workflows / "keep.json").read_bytes() == before
        assert json.loads(before)["nodes"]

    serving(scenario)


def test_groups_are_saved_in_the_file_and_read_back(serving: Serve) -> None:
    group = {
        "id": "adders",
        "label": "Adding",
        "position": {"x": -20, "y": 10.5},
        "size": {"width": 400, "height": 220},
        "nodes": ["b", "a"],
    }

    async def scenario(server: Server) -> None:
        body = {**chain(), "groups": [{**group, "nodes": ["b", "a", "ghost"]}]}
        status, written = await server.put("/api/workflows/grouped.json", body)
        assert status == 200 and written["problems"] == []
        saved = {**group, "nodes": ["a", "b"]}
        assert written["workflow"]["groups"] == [saved]
        text = (server.settings.workflows / "grouped.json").read_text()
        assert json.loads(text)["groups"] == [saved] and "ghost" not in text
        status, document = await server.get("/api/workflows/grouped.json")
        assert status == 200 and document["workflow"]["groups"] == [saved]

        status, reply = await server.put("/api/workflows/bad.json", {**chain(), "groups": {}})
        assert status == 400 and "'groups' must be a list" in reply["error"]["message"]
        status, plain = await server.put("/api/workflows/plain.json", chain())
        assert "groups" not in plain["workflow"]

    serving(scenario)


def test_a_symlink_leading_outside_is_listed_as_refused(serving: Serve, tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "secret.json"
    outside.parent.mkdir()
    outside.write_text(json.dumps(chain()))

    async def scenario(server: Server) -> None:
        server.save("kept.json", chain())
        (server.settings.workflows / "link.json").symlink_to(outside)
        (server.settings.workflows / "loop.json").symlink_to("loop.json")
        status, listing = await server.get("/api/workflows")
        assert status == 200, listing
        assert [f["path"] for f in listing["files"]] == ["kept.json"]
        assert [r["path"] for r in listing["refused"]] == ["link.json", "loop.json"]
        assert str(outside.parent) not in json.dumps(listing)
        assert (await server.get("/api/workflows/link.json"))[0] == 400

    serving(scenario)


def test_a_workflow_file_added_or_removed_on_disk_is_announced(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        socket = await server.connect()
        folder = server.settings.workflows
        (folder / "copied.json").write_text(json.dumps(chain(n=2)))
        added = await socket.until(p.WorkflowsListed, lambda m: "copied.json" in m.added)
        assert added.removed == []
        (folder / "copied.json").unlink()
        removed = await socket.until(p.WorkflowsListed, lambda m: bool(m.removed))
        assert removed.removed == ["copied.json"] and removed.added == []

    serving(scenario, watch=True)
