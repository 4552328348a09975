"""The node catalog, and node files reloaded while the server runs."""

from __future__ import annotations

from server_harness import Serve, Server, chain

from graphbook import protocol as p

NEW_NODE = '''
from graphbook import param, step


@step("Fresh/Double")
@param("times", "int", default=2, description="how many times")
def double(ctx, data):
    """Doubles x."""
    data["x"] *= ctx.times
'''


def test_the_catalog_lists_nodes_with_their_parameters_and_docs(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        status, body = await server.get("/api/catalog")
        assert status == 200
        catalog = p.from_json(p.Catalog, body)
        nodes = {n.name: n for n in catalog.nodes}
        numbers = nodes["Numbers"]
        assert (numbers.kind, numbers.category, numbers.inputs) == ("source", "Test", [])
        assert numbers.doc.startswith("Yields")
        add = {param.name: param for param in nodes["Add"].params}["add"]
        assert (add.type, add.default, add.description) == ("int", 1, "added to x")
        assert nodes["Label"].kind == "prompt" and "Split" in nodes
        assert "function" in catalog.fits["string"] and "string" not in catalog.fits["function"]

    serving(scenario)


def test_a_node_file_saved_while_serving_is_loaded(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        socket = await server.connect()
        nodes = server.settings.nodes
        (nodes / "fresh.py").write_text(NEW_NODE)
        added = await socket.until(p.CatalogChanged)
        assert added.added == ["Double"] and added.failures == []
        _status, body = await server.get("/api/catalog")
        assert "Double" in {n["name"] for n in body["nodes"]} and body["version"] == added.version

        (nodes / "fresh.py").write_text(NEW_NODE.replace("*= ctx.times", "*= ctx.times + 0"))
        changed = await socket.until(p.CatalogChanged)
        assert changed.changed == ["Double"]

        (nodes / "broken.py").write_text("def oops(:\n")
        broken = await socket.until(p.CatalogChanged)
        assert [f.path.endswith("broken.py") for f in broken.failures] == [True]
        assert "SyntaxError" in broken.failures[0].error

        (nodes / "fresh.py").unlink()
        removed = await socket.until(p.CatalogChanged, lambda m: m.removed == ["Double"])
        assert removed.version > changed.version

    serving(scenario, watch=True)


def test_a_changed_node_file_reruns_its_nodes_and_what_is_downstream(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("chain.json", chain())
        socket = await server.connect()
        await server.run_to_end(socket, "chain.json")
        path = server.settings.nodes / "test_nodes.py"
        path.write_text(
            path.read_text().replace('data["x"] += ctx.add', 'data["x"] += ctx.add * 1')
        )
        changed = await socket.until(p.CatalogChanged)
        assert changed.changed == ["Add"]
        socket.seen.clear()
        await server.run_to_end(socket, "chain.json")
        plans = {m.node_id: (m.action, m.cause) for m in socket.of(p.NodePlan)}
        assert plans == {"src": ("reuse", "unchanged"), "a": ("run", "code"), "b": ("run", "code")}

    serving(scenario, watch=True)


def test_a_run_refuses_nodes_whose_file_stopped_loading_naming_them(serving: Serve) -> None:
    """A node file saved with a syntax error keeps its last good nodes in the catalog; a run
    used them silently. Now it is refused, with a problem on each node of that file."""

    async def scenario(server: Server) -> None:
        socket = await server.connect()
        nodes = server.settings.nodes
        (nodes / "fresh.py").write_text(NEW_NODE)
        await socket.until(p.CatalogChanged, lambda m: m.added == ["Double"])
        document = chain(n=2)
        document["nodes"].append({"id": "double", "type": "Double", "params": {}})
        document["edges"].append(
            {"source": "b", "output": "out", "target": "double", "input": "in"}
        )
        server.save("doubled.json", document)
        assert (await server.run_to_end(socket, "doubled.json")).status == "completed"

        (nodes / "fresh.py").write_text(NEW_NODE + "\ndef oops(:\n")
        await socket.until(p.CatalogChanged, lambda m: bool(m.failures))
        status, reply = await server.post("/api/runs", {"workflow": "doubled.json"})
        assert status == 422, reply
        problems = reply["error"]["problems"]
        assert [problem["node_id"] for problem in problems] == ["double"]
        assert "fresh.py does not load (SyntaxError" in problems[0]["message"]
        assert "last Double that loaded" in problems[0]["message"] and problems[0]["fix"]

        (nodes / "fresh.py").write_text(NEW_NODE)
        await socket.until(p.CatalogChanged, lambda m: not m.failures)
        assert (await server.run_to_end(socket, "doubled.json")).status == "completed"

    serving(scenario, watch=True)
