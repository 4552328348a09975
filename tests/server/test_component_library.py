"""Library components through the API: saved, listed, in the palette, used by a workflow that
runs, and a clear problem on the workflow when the library one loses a port."""

from __future__ import annotations

import json
from typing import Any

from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook.components import component, dumps
from graphbook.workflow import ComponentRef, Workflow


def adder(expose_out: bool = True) -> dict[str, Any]:
    """a -> b (both Add): `in` feeds a, `out` is b's, `step` sets a's `add`."""
    inner = Workflow()
    a = inner.add("Add", id="a", add=1)
    b = inner.add("Add", id="b", add=100)
    inner.connect(a, b)
    outputs = {"out": b} if expose_out else {}
    body = component(inner, inputs={"in": a}, outputs=outputs, params={"step": (a, "add")})
    return dict(json.loads(dumps(body)))


def user(version: str = "") -> dict[str, Any]:
    wf = Workflow()
    src = wf.add("Numbers", id="src", n=4)
    comp = wf.add(ComponentRef("adder", version), id="comp", step=5)
    end = wf.add("Add", id="end", add=0)
    wf.connect(src, comp)
    wf.connect(comp, end)
    return wf.to_json()


def test_a_library_component_is_listed_offered_and_runs(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        socket = await server.connect()
        status, saved = await server.put("/api/components/adder.json", adder())
        assert status == 200, saved
        assert saved["name"] == "adder" and saved["problems"] == []
        changed = await socket.until(p.CatalogChanged)
        assert changed.added == ["components/adder"]
        assert (server.settings.workflows.parent / "components" / "adder.json").is_file()
        status, listing = await server.get("/api/components")
        assert [f["path"] for f in listing["files"]] == ["adder.json"]

        status, catalog = await server.get("/api/catalog")
        entry = next(n for n in catalog["nodes"] if n["name"] == "components/adder")
        assert entry["category"] == "Components" and entry["component"] == "adder"
        assert entry["inputs"] == ["in"] and entry["outputs"] == ["out"]
        assert entry["code_hash"] == saved["version"]
        assert [(q["name"], q["type"], q["default"]) for q in entry["params"]] == [
            ("step", "int", 1)
        ]

        server.save("uses.json", user(saved["version"]))
        finished = await server.run_to_end(socket, "uses.json")
        assert finished.status == "completed"
        assert finished.counts["comp/a"] == {"out": 4} and finished.counts["end"] == {"out": 4}

        status, _ = await server.put("/api/components/adder.json", adder(expose_out=False))
        assert status == 200
        status, document = await server.get("/api/workflows/uses.json")
        problems = document["problems"]
        assert [q["node_id"] for q in problems] == ["comp"]
        assert "has no output 'out'" in problems[0]["message"]
        assert "components/adder.json" in problems[0]["message"]

    serving(scenario)


def test_component_paths_stay_inside_the_library(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        status, reply = await server.put("/api/components/..%2fx.json", adder())
        assert status == 400
        status, reply = await server.put("/api/components/x.txt", adder())
        assert status == 400 and "ends in .json" in reply["error"]["message"]
        status, reply = await server.put("/api/components/x.json", {"format": "other"})
        assert status == 400 and "not a component file" in reply["error"]["message"]
        status, _ = await server.get("/api/components/none.json")
        assert status == 404

    serving(scenario)


def test_an_update_names_the_version_it_replaces(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        url = "/api/components/adder.json"
        status, first = await server.put(url, adder(), headers={"If-Match": '""'})
        assert status == 200, first
        status, reply = await server.put(url, adder(), headers={"If-Match": '""'})
        assert status == 409 and "exists already" in reply["error"]["message"]

        status, second = await server.put(
            url, adder(expose_out=False), headers={"If-Match": first["version"]}
        )
        assert status == 200 and second["version"] != first["version"]
        status, reply = await server.put(url, adder(), headers={"If-Match": first["version"]})
        assert status == 409
        message = reply["error"]["message"]
        assert f"it is now version {second['version']}" in message and "as a copy" in message
        status, document = await server.get(url)
        assert document["version"] == second["version"], "the refused update wrote nothing"

    serving(scenario)
