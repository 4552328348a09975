"""What an agent does through the MCP tools, the same over every transport: build a workflow
from nothing, check it, run it, read its outputs and a failing node's traceback; and bad input
of every kind, refused with a clear error that changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from pathlib import Path
from typing import Any

from mcp import ClientSession, types

WAIT = 60


class Agent:
    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def result(self, tool: str, **arguments: Any) -> types.CallToolResult:
        """The tool's whole result (text and images), which must not be an error."""
        result = await self.session.call_tool(tool, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        assert not result.is_error, f"{tool} failed: {text}"
        return result

    async def call(self, tool: str, **arguments: Any) -> Any:
        result = await self.session.call_tool(tool, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        assert not result.is_error, f"{tool} failed: {text}"
        return json.loads(text)

    async def refused(self, tool: str, **arguments: Any) -> str:
        result = await self.session.call_tool(tool, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        assert result.is_error, f"{tool} should have been refused, got {text}"
        return text


BUILD = [
    {"op": "add_node", "type": "Numbers", "id": "src", "params": {"n": 3}},
    {"op": "add_node", "type": "Add", "id": "plus", "title": "Plus five"},
    {"op": "connect", "source": "src", "target": "plus"},
    {"op": "set_param", "node": "plus", "param": "add", "value": 5},
    {"op": "move", "node": "plus", "position": [400, 50]},
]


async def builds_and_runs(agent: Agent) -> None:
    """From nothing to a run's outputs."""
    found = await agent.call("list_nodes", search="test", detail="full")
    names = {node["name"] for node in found["nodes"]}
    assert {"Numbers", "Add", "Boom"} <= names, names
    add = next(node for node in found["nodes"] if node["name"] == "Add")
    assert {"name": "add", "type": "int", "default": 1, "required": False} in add["params"]

    edited = await agent.call("edit_workflow", path="agent.json", operations=BUILD, create=True)
    assert edited["nodes"] == ["plus", "src"] and edited["problems"] == []
    document = await agent.call("read_workflow", path="agent.json")
    assert document["hash"] == edited["hash"]
    plus = next(n for n in document["workflow"]["nodes"] if n["id"] == "plus")
    assert plus["params"] == {"add": 5} and plus["position"] == {"x": 400, "y": 50}
    assert plus["label"] == "Plus five"
    assert (await agent.call("validate_workflow", path="agent.json"))["valid"] is True

    job = (await agent.call("run_workflow", path="agent.json"))["job_id"]
    done = await agent.call("wait_for_job", job_id=job, timeout=WAIT)
    assert done["status"] == "completed", done
    counts = {n["node_id"]: n["counts"] for n in done["nodes"]}
    assert counts["plus"] == {"out": 3}
    output = await agent.call("node_output", path="agent.json", node="plus", index=2)
    assert output["total"] == 3 and output["items"] == [{"x": 7}]
    logs = await agent.call("job_logs", job_id=job, node="plus")
    assert [entry["message"] for entry in logs["plus"]["logs"]] == ["x=0", "x=1", "x=2"]

    overridden = await agent.call(
        "run_workflow", path="agent.json", overrides={"Plus five": {"add": 100}}
    )
    done = await agent.call("wait_for_job", job_id=overridden["job_id"], timeout=WAIT)
    assert done["status"] == "completed", done
    output = await agent.call("node_output", path="agent.json", node="plus", index=2)
    assert output["items"] == [{"x": 102}], "the override, not the file's 5"
    assert (await agent.call("read_workflow", path="agent.json"))["hash"] == edited["hash"]
    by_override = await outputs(agent, "agent.json", "plus", 3)

    saved = [{"op": "set_param", "node": "plus", "param": "add", "value": 100}]
    await agent.call("edit_workflow", path="agent.json", operations=saved)
    job = (await agent.call("run_workflow", path="agent.json"))["job_id"]
    assert (await agent.call("wait_for_job", job_id=job, timeout=WAIT))["status"] == "completed"
    assert await outputs(agent, "agent.json", "plus", 3) == by_override, "as if saved in the file"


async def outputs(agent: Agent, path: str, node: str, count: int) -> list[Any]:
    """The dicts a node handed on in the workflow's last run."""
    return [
        (await agent.call("node_output", path=path, node=node, index=i))["items"][0]
        for i in range(count)
    ]


async def reads_a_failure(agent: Agent) -> None:
    """A node that raises: the job fails, and its error comes with the traceback."""
    ops = [
        {"op": "add_node", "type": "Numbers", "id": "src", "params": {"n": 2}},
        {"op": "add_node", "type": "Boom", "id": "boom"},
        {"op": "connect", "source": "src", "target": "boom"},
    ]
    await agent.call("edit_workflow", path="boom.json", operations=ops, create=True)
    job = (await agent.call("run_workflow", path="boom.json"))["job_id"]
    failed = await agent.call("wait_for_job", job_id=job, timeout=WAIT)
    assert failed["status"] == "failed", failed
    boom = next(n for n in failed["nodes"] if n["node_id"] == "boom")
    error = boom["errors"][0]["error"]
    assert error["type"] == "ValueError" and error["message"] == "boom at 0"
    assert 'raise ValueError(f"boom at' in error["traceback"]
    status = await agent.call("job_status", job_id=job)
    assert status["status"] == "failed"


async def refuses_bad_input(agent: Agent, workflows: Path) -> None:
    """Each refusal names what is wrong; the file stays as it was."""
    before = (workflows / "agent.json").read_bytes()

    text = await agent.refused(
        "edit_workflow", path="agent.json", operations=[{"op": "add_node", "type": "Nope"}]
    )
    assert "operation 0 (add_node Nope)" in text and "unknown node type 'Nope'" in text
    wrong = [{"op": "set_param", "node": "plus", "param": "add", "value": "many"}]
    text = await agent.refused("edit_workflow", path="agent.json", operations=wrong)
    assert "operation 0 (set_param plus.add)" in text and "expects a whole number" in text
    unknown = [{"op": "set_param", "node": "plus", "param": "ad", "value": 2}]
    text = await agent.refused("edit_workflow", path="agent.json", operations=unknown)
    assert "has no parameter 'ad'" in text and "did you mean 'add'?" in text
    batch = [
        {"op": "move", "node": "src", "position": [900, 900]},
        {"op": "add_node", "type": "Add", "id": "more"},
        {"op": "connect", "source": "src", "output": "nope", "target": "more"},
    ]
    text = await agent.refused("edit_workflow", path="agent.json", operations=batch)
    assert "operation 2 (connect src.nope -> more.in)" in text and "no output 'nope'" in text
    missing = [{"op": "remove_node", "node": "ghost"}]
    text = await agent.refused("edit_workflow", path="agent.json", operations=missing)
    assert "operation 0 (remove_node ghost)" in text and "no node 'ghost'" in text
    text = await agent.refused("edit_workflow", path="agent.json", operations=[{"op": "fly"}])
    assert "fly" in text
    text = await agent.refused("edit_workflow", path="new.json", operations=BUILD)
    assert "no workflow file 'new.json'; pass create=true" in text
    assert (workflows / "agent.json").read_bytes() == before

    stale = await agent.refused(
        "edit_workflow", path="agent.json", operations=BUILD[3:], hash="0" * 64
    )
    assert "changed since it was read" in stale
    assert (workflows / "agent.json").read_bytes() == before


async def stays_inside_the_roots(agent: Agent, root: Path) -> None:
    """No path outside the workflows and nodes folders can be read or written."""
    outside = root / "outside.json"
    outside.write_text(json.dumps({"nodes": [], "edges": []}))
    (root / "workflows" / "link.json").symlink_to(outside)
    for path in ("../outside.json", str(outside), "link.json", "a/../../outside.json"):
        text = await agent.refused("read_workflow", path=path)
        assert "refused" in text, text
        ops = [{"op": "add_node", "type": "Numbers"}]
        await agent.refused("edit_workflow", path=path, operations=ops, create=True)
    assert json.loads(outside.read_text()) == {"nodes": [], "edges": []}
    for path in ("../evil.py", str(root / "evil.py"), "x.txt"):
        await agent.refused("write_node_file", path=path, source="x = 1\n")
    assert not (root / "evil.py").exists()
    result = await agent.session.read_resource("graphbook://workflows/agent.json")
    assert '"plus"' in getattr(result.contents[0], "text", "")


async def answers_and_stops(agent: Agent, hold: Callable[[], ContextManager[None]]) -> None:
    """A job that asks: the wait ends at the prompt, the answer lets it go on; a long job stops.
    `hold` keeps the run process from reading the answer meanwhile (as a loaded machine may):
    the status and the wait must not show the answered prompt again."""
    ops = [
        {"op": "add_node", "type": "Numbers", "id": "src", "params": {"n": 1}},
        {"op": "add_node", "type": "Label", "id": "label"},
        {"op": "connect", "source": "src", "target": "label"},
    ]
    await agent.call("edit_workflow", path="ask.json", operations=ops, create=True)
    job = (await agent.call("run_workflow", path="ask.json"))["job_id"]
    asked = await agent.call("wait_for_job", job_id=job, timeout=WAIT)
    assert asked["status"] == "running" and len(asked["prompts"]) == 1, asked
    prompt = asked["prompts"][0]
    assert prompt["node_id"] == "label" and prompt["prompt"]["options"]["choices"] == ["cat", "dog"]
    text = await agent.refused("answer_prompt", prompt_id=prompt["prompt_id"], answer="horse")
    assert "horse" in text
    with hold():
        await agent.call("answer_prompt", prompt_id=prompt["prompt_id"], answer="dog")
        shown = await agent.call("wait_for_job", job_id=job, timeout=0.5)
        assert (shown["status"], shown["prompts"]) == ("running", []), shown
    assert (await agent.call("wait_for_job", job_id=job, timeout=WAIT))["status"] == "completed"
    labelled = await agent.call("node_output", path="ask.json", node="label")
    assert labelled["items"] == [{"x": 0, "label": "dog"}]

    again = {"src": {"n": 2}}  # not the cached outputs of the run before: it asks again
    job = (await agent.call("run_workflow", path="ask.json", overrides=again))["job_id"]
    assert (await agent.call("wait_for_job", job_id=job, timeout=WAIT))["prompts"]
    await agent.call("stop_job", job_id=job)
    stopped = await agent.call("wait_for_job", job_id=job, timeout=WAIT)
    assert (stopped["status"], stopped["prompts"]) == ("stopped", []), "a stopped run asks no more"

    slow = [{"op": "add_node", "type": "Numbers", "params": {"n": 1000, "delay": 0.05}}]
    await agent.call("edit_workflow", path="slow.json", operations=slow, create=True)
    job = (await agent.call("run_workflow", path="slow.json"))["job_id"]
    assert (await agent.call("wait_for_job", job_id=job, timeout=0))["status"] == "running"
    queued = await agent.call("run_workflow", path="ask.json")
    assert (queued["state"], queued["position"]) == ("queued", 0)
    listing = await agent.call("list_jobs")
    shown = [(j["job_id"], j["state"]) for j in listing["jobs"][:2]]
    assert shown == [(job, "running"), (queued["job_id"], "queued")], listing
    cancelled = await agent.call("stop_job", job_id=queued["job_id"])
    assert cancelled["state"] == "cancelled"
    await agent.call("stop_job", job_id=job)
    stopped = await agent.call("wait_for_job", job_id=job, timeout=WAIT)
    assert stopped["status"] == "stopped", stopped
    await agent.refused("stop_job", job_id=job)
    text = await agent.refused("job_status", job_id="nope")
    assert "no job or run 'nope'" in text


async def reads_node_docs(agent: Agent) -> None:
    described = await agent.call("describe_node", name="Add")
    assert described["params"][0]["description"] == "added to x"
    doc = await agent.session.read_resource("graphbook://nodes/Numbers")
    assert "Yields `n` dicts" in getattr(doc.contents[0], "text", "")
    text = await agent.refused("describe_node", name="Ad")
    assert "unknown node type 'Ad'" in text


def called(n: int = 3) -> dict[str, Any]:
    """numbers -> add, callable like a function: its input `count` is the source's `n`."""
    from graphbook.workflow import Workflow

    flow = Workflow()
    src = flow.add("Numbers", id="src", n=n)
    flow.connect(src, flow.add("Add", id="plus", add=1))
    flow.input("count", src, "n", "how many numbers")
    return flow.to_json()


BAD_RUNS: list[tuple[dict[str, Any], list[str]]] = [
    ({"overrides": {"plus": {"add": "ten"}}}, ["node 'plus'", "expects a whole number"]),
    ({"overrides": {"plus": {"ad": 2}}}, ["has no parameter 'ad'", "did you mean 'add'?"]),
    ({"overrides": {"ghost": {"n": 2}}}, ["override 'ghost': no node has that id or title"]),
    ({"inputs": {"cnt": 2}}, ["the workflow has no input 'cnt'", "its inputs are: count"]),
    ({"inputs": {"count": "two"}}, ["input 'count'", "expects a whole number"]),
]
"""Run arguments the HTTP API refuses with 422, and what its message says."""


async def refuses_bad_runs(
    agent: Agent, workflows: Path, http_says: Callable[[dict[str, Any]], Any] | None = None
) -> None:
    """A run with bad overrides or inputs is refused in the call, with the message the HTTP
    API's 422 gives (`http_says(body)`: that message, where there is a server), and queues
    nothing; workflow inputs are taken as HTTP takes them."""
    (workflows / "called.json").write_text(json.dumps(called()))
    before = await agent.call("list_jobs")
    for arguments, says in BAD_RUNS:
        text = await agent.refused("run_workflow", path="called.json", **arguments)
        assert all(words in text for words in says), text
        if http_says is not None:
            assert await http_says({"workflow": "called.json", **arguments}) in text
    queued = await agent.call("list_jobs", state="queued")
    running = await agent.call("list_jobs", state="running")
    assert (queued["total"], running["total"]) == (0, 0), (queued, running)
    after = await agent.call("list_jobs")
    assert after["total"] == before["total"], "nothing ran or failed"

    job = (await agent.call("run_workflow", path="called.json", inputs={"count": 2}))["job_id"]
    done = await agent.call("wait_for_job", job_id=job, timeout=WAIT)
    assert done["status"] == "completed", done
    assert (await agent.call("node_output", path="called.json", node="plus"))["total"] == 2
