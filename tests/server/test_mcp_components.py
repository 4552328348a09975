"""An agent and library components through the MCP tools (the SDK's HTTP client on a real
server): it lists them with their ports and exposed parameters, adds one to a workflow by name,
sets an exposed parameter, wires it and runs it; a wrong name, version, parameter or port is
refused saying what there is; a library file that loses a port shows on validation."""

from __future__ import annotations

from mcp_agent import WAIT, Agent, outputs
from server_harness import Serve, Server
from test_component_library import adder
from test_mcp_http import agent_at

from graphbook.server.mcp.library import PREFIX

BUILD = [
    {"op": "add_node", "type": "Numbers", "id": "src", "params": {"n": 3}},
    {"op": "add_node", "type": "components/adder", "params": {"step": 10}},
    {"op": "add_node", "type": "Add", "id": "end", "params": {"add": 0}},
    {"op": "connect", "source": "src", "target": "adder"},
    {"op": "connect", "source": "adder", "output": "out", "target": "end"},
]


async def lists_the_library(agent: Agent, version: str) -> None:
    found = await agent.call("list_nodes", search="components", detail="full")
    (entry,) = [n for n in found["nodes"] if n["name"] == f"{PREFIX}adder"]
    assert entry["component"] == "adder" and entry["version"] == version
    assert entry["category"] == "Components"
    assert entry["inputs"] == ["in"] and entry["outputs"] == ["out"]
    assert entry["params"] == [{"name": "step", "type": "int", "default": 1, "required": False}]
    described = await agent.call("describe_node", name=f"{PREFIX}adder")
    assert described["version"] == version and described["component"] == "adder"


async def builds_and_runs_with_it(agent: Agent, version: str) -> None:
    edited = await agent.call("edit_workflow", path="uses.json", operations=BUILD, create=True)
    assert edited["nodes"] == ["adder", "end", "src"] and edited["problems"] == []
    document = await agent.call("read_workflow", path="uses.json")
    node = next(n for n in document["workflow"]["nodes"] if n["id"] == "adder")
    assert node["type"] == "Component" and node["params"] == {"step": 10}
    assert node["component"] == {"library": "adder", "version": version}

    by_reference = {"op": "add_node", "id": "again", "component": {"library": "adder"}}
    edited = await agent.call("edit_workflow", path="uses.json", operations=[by_reference])
    assert "again" in edited["nodes"]
    removed = [{"op": "remove_node", "node": "again"}]
    await agent.call("edit_workflow", path="uses.json", operations=removed)

    job = (await agent.call("run_workflow", path="uses.json"))["job_id"]
    done = await agent.call("wait_for_job", job_id=job, timeout=WAIT)
    assert done["status"] == "completed", done
    counts = {n["node_id"]: n["counts"] for n in done["nodes"]}
    assert counts["adder/b"] == {"out": 3} and counts["end"] == {"out": 3}, counts
    # a adds the exposed step (10), b its own 100: 0, 1, 2 -> 110, 111, 112
    assert await outputs(agent, "uses.json", "end", 3) == [{"x": 110}, {"x": 111}, {"x": 112}]


async def refuses_what_the_component_lacks(agent: Agent) -> None:
    cases = [
        ({"op": "add_node", "type": "components/addr"}, "library components: adder"),
        (
            {"op": "add_node", "component": {"library": "adder", "version": "000000000000"}},
            "not 000000000000",
        ),
        ({"op": "set_param", "node": "adder", "param": "add", "value": 1}, "exposes: step"),
        ({"op": "set_param", "node": "adder", "param": "step", "value": "x"}, "step:"),
        (
            {"op": "connect", "source": "adder", "output": "nope", "target": "end"},
            "components/adder.json has no output 'nope' (its outputs: out)",
        ),
    ]
    for op, why in cases:
        text = await agent.refused("edit_workflow", path="uses.json", operations=[op])
        assert why in text, text


async def validation_names_a_lost_port(agent: Agent, server: Server) -> None:
    status, _ = await server.put("/api/components/adder.json", adder(expose_out=False))
    assert status == 200
    checked = await agent.call("validate_workflow", path="uses.json")
    assert checked["valid"] is False
    (problem,) = checked["problems"]
    assert problem["node_id"] == "adder"
    assert "components/adder.json" in problem["message"]
    assert "has no output 'out'" in problem["message"]


def test_an_agent_uses_a_library_component(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        status, saved = await server.put("/api/components/adder.json", adder())
        assert status == 200, saved
        async with agent_at(server.url, {}) as agent:
            await lists_the_library(agent, saved["version"])
            await builds_and_runs_with_it(agent, saved["version"])
            await refuses_what_the_component_lacks(agent)
            await validation_names_a_lost_port(agent, server)

    serving(scenario)
