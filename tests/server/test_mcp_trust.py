"""What an agent can trust the MCP tools for (issue 36), over stdio and over HTTP, with the
official SDK's client: one server per transport for the whole module (mcp_session.py).

"valid" means a run starts; images come as pictures; outputs, logs and status belong to a job
(or run); listings are short, compact and paged; nodes are written with a guide and patched;
deleting is confined and can be undone; metrics; the person can be asked; tools say what they
do, and errors name tools, not routes."""

from __future__ import annotations

import base64
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import types
from mcp.client.client import Client
from mcp_agent import WAIT, Agent
from mcp_session import Shared, shared
from PIL import Image

from graphbook import Workflow


@pytest.fixture(scope="module", params=["stdio", "http"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Shared]:
    with shared(tmp_path_factory.mktemp(request.param), request.param) as session:
        yield session


def save(server: Shared, name: str, workflow: Workflow) -> None:
    (server.workflows / name).write_text(json.dumps(workflow.to_json()))


def text_of(result: types.CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def run(agent: Agent, path: str, **arguments: Any) -> dict[str, Any]:
    """Run a workflow to its end; its status."""
    job = (await agent.call("run_workflow", path=path, **arguments))["job_id"]
    done: dict[str, Any] = await agent.call("wait_for_job", job_id=job, timeout=WAIT)
    return done


NUMBERS = [
    {"op": "add_node", "type": "Numbers", "id": "src", "params": {"n": 3}},
    {"op": "add_node", "type": "Add", "id": "plus"},
    {"op": "connect", "source": "src", "target": "plus"},
]


# -- 1. "valid" is a promise ---------------------------------------------------------------------
DOUBLE = """from graphbook import param, step


@step("Trust/Double")
@param("times", "int", default=2)
def double(ctx, data):
    data["x"] *= ctx.times
"""


def test_valid_means_a_run_starts(server: Shared) -> None:
    async def scenario(agent: Agent) -> None:
        await agent.call("write_node_file", path="double.py", source=DOUBLE)
        ops = [*NUMBERS[:1], {"op": "add_node", "type": "Double", "id": "twice"}]
        ops.append({"op": "connect", "source": "src", "target": "twice"})
        await agent.call("edit_workflow", path="double.json", operations=ops, create=True)
        checked = await agent.call("validate_workflow", path="double.json")
        assert checked["valid"] is True, checked
        assert (await run(agent, "double.json"))["status"] == "completed"

        broken = await agent.call("write_node_file", path="double.py", source="import nope\n")
        assert broken["error"] is not None
        checked = await agent.call("validate_workflow", path="double.json")
        assert checked["valid"] is False, "its node file no longer imports: a run would not start"
        (problem,) = checked["problems"]
        assert problem["node_id"] == "twice" and "double.py does not load" in problem["message"]
        assert "node_failures" in problem["fix"] and "palette" not in problem["fix"]
        await agent.call("write_node_file", path="double.py", source=DOUBLE)

        wf = Workflow()
        src = wf.add("Numbers", id="src", n=2)
        wf.connect(src, wf.add("Filter", id="keep", expression="x >"))
        save(server, "filter.json", wf)
        checked = await agent.call("validate_workflow", path="filter.json")
        assert checked["valid"] is False, checked
        assert "'x >' is not a Python expression" in checked["problems"][0]["message"]
        assert checked["problems"][0]["node_id"] == "keep"
        bad = [{"op": "set_param", "node": "keep", "param": "expression", "value": "x >="}]
        text = await agent.refused("edit_workflow", path="filter.json", operations=bad)
        assert "is not a Python expression" in text, "an edit is checked as a run is"

        checked = await agent.call(
            "validate_workflow", path="double.json", overrides={"src": {"n": "ten"}}
        )
        assert checked["valid"] is False and "expects a whole number" in str(checked["problems"])
        checked = await agent.call(
            "validate_workflow", path="double.json", overrides={"src": {"delya": 0.1}}
        )
        assert "did you mean 'delay'" in checked["problems"][0]["fix"]

        wf = Workflow()
        wf.input("photo", wf.add("Picture", id="pic"), "path")  # no default: required
        save(server, "inputs.json", wf)
        checked = await agent.call("validate_workflow", path="inputs.json")
        assert checked["valid"] is True and checked["required_inputs"] == ["photo"]
        checked = await agent.call("validate_workflow", path="inputs.json", inputs={})
        assert checked["valid"] is False and "is required" in checked["problems"][0]["message"]
        given = {"photo": "a.png"}
        checked = await agent.call("validate_workflow", path="inputs.json", inputs=given)
        assert checked["valid"] is True, checked

    server.run(scenario)


# -- 3. images as pictures -----------------------------------------------------------------------
def test_images_come_as_pictures(server: Shared) -> None:
    photo = server.root / "photo.png"  # outside every folder the server serves
    Image.new("RGB", (640, 480), "blue").save(photo)

    async def scenario(agent: Agent) -> None:
        ops = [{"op": "add_node", "type": "Picture", "id": "pic", "params": {"path": str(photo)}}]
        await agent.call("edit_workflow", path="pictures.json", operations=ops, create=True)
        job = (await run(agent, "pictures.json"))["job_id"]
        result = await agent.result("node_output", job_id=job, node="pic")
        answer = json.loads(text_of(result))
        pictures = [block for block in result.content if isinstance(block, types.ImageContent)]
        assert len(pictures) == 2, answer
        (item,) = answer["items"]
        assert (item["image"]["image"], item["file"]["image"]) == (1, 2)
        sizes = [Image.open(io.BytesIO(base64.b64decode(p.data))).size for p in pictures]
        assert sizes[0] == (8, 6) and max(sizes[1]) <= 160, "a thumbnail, not the 640x480 file"
        assert all(p.mime_type == "image/jpeg" for p in pictures)
        if server.transport == "http":
            url = item["image"]["url"]
            assert url.startswith(server.url + "/api/media/mem/"), url
            async with httpx2.AsyncClient() as http:
                assert (await http.get(url)).headers["content-type"] == "image/png"
                assert (await http.get(item["file"]["thumb"])).status_code == 200
        else:
            assert "url" not in item["image"] and "thumb" not in item["file"], "no server"

        fewer = await agent.result("node_output", job_id=job, node="pic", images=1)
        assert sum(isinstance(b, types.ImageContent) for b in fewer.content) == 1
        none = await agent.result("node_output", job_id=job, node="pic", images=0)
        assert len(none.content) == 1

    server.run(scenario)


# -- 4. outputs, logs and status by job ----------------------------------------------------------
def test_outputs_logs_and_status_belong_to_the_job(server: Shared) -> None:
    async def scenario(agent: Agent) -> None:
        await agent.call("edit_workflow", path="twice.json", operations=NUMBERS, create=True)
        first = await agent.call(
            "run_workflow", path="twice.json", overrides={"plus": {"add": 100}}
        )
        second = await agent.call("run_workflow", path="twice.json", overrides={"src": {"n": 4}})
        for job in (first, second):
            done = await agent.call("wait_for_job", job_id=job["job_id"], timeout=WAIT)
            assert done["status"] == "completed", done

        early = await agent.call("node_output", job_id=first["job_id"], node="plus", count=3)
        assert early["total"] == 3 and [i["x"] for i in early["items"]] == [100, 101, 102]
        assert "kept" in early, "read from what the run's record kept"
        late = await agent.call("node_output", job_id=second["job_id"], node="plus", index=3)
        assert late["total"] == 4 and late["items"] == [{"x": 4}]

        run_id = (await agent.call("job_status", job_id=first["job_id"]))["run_id"]
        by_run = await agent.call("job_status", job_id=run_id)
        assert by_run["run_id"] == run_id and by_run["status"] == "completed"
        assert {n["node_id"]: n["counts"] for n in by_run["nodes"]}["plus"] == {"out": 3}
        logs = await agent.call("job_logs", job_id=run_id, node="plus")
        assert [e["message"] for e in logs["plus"]["logs"]] == ["x=0", "x=1", "x=2"]
        again = await agent.call("node_output", job_id=run_id, node="plus", index=1)
        assert again["items"] == [{"x": 101}]
        text = await agent.refused("node_output", job_id=first["job_id"], node="plus", index=3)
        assert "3 dict(s)" in text

    server.run(scenario)


# -- 5. listings a context window can hold -------------------------------------------------------
def test_listings_are_short_compact_and_paged(server: Shared) -> None:
    async def scenario(agent: Agent) -> None:
        result = await agent.result("list_nodes")
        text = text_of(result)
        listing = json.loads(text)
        assert text == json.dumps(listing, separators=(",", ":"), ensure_ascii=False)
        assert result.structured_content is None, "one copy of the answer, not two"
        assert len(text) < 8000, len(text)
        assert listing["total"] > len(listing["nodes"]) == 40
        assert {"name", "kind", "category", "doc"} == set(listing["nodes"][0])
        rest = await agent.call("list_nodes", offset=listing["next_offset"], limit=500)
        names = {n["name"] for n in listing["nodes"]} | {n["name"] for n in rest["nodes"]}
        assert len(names) == listing["total"] and "next_offset" not in rest
        found = await agent.call("list_nodes", category="Test")
        assert {"Numbers", "Add", "Boom"} <= {n["name"] for n in found["nodes"]}

        await agent.call("write_node_file", path="broken.py", source="raise ValueError('x')\n")
        listed = await agent.result("list_nodes", search="Numbers")
        assert json.loads(text_of(listed))["failed_files"] == ["broken.py"]
        assert "Traceback" not in text_of(listed), "tracebacks go to node_failures"
        failures = (await agent.call("node_failures"))["failures"]
        (failure,) = [f for f in failures if f["path"] == "broken.py"]
        assert failure["error"] == "ValueError: x" and "raise ValueError" in failure["traceback"]
        await agent.call("delete_file", path="broken.py", kind="node")

        await agent.call("edit_workflow", path="jobs.json", operations=NUMBERS[:1], create=True)
        for _ in range(3):
            await run(agent, "jobs.json")
        jobs = await agent.call("list_jobs", limit=2, state="completed")
        assert len(jobs["jobs"]) == 2 and jobs["total"] >= 3
        assert set(jobs["jobs"][0]) <= {"job_id", "state", "workflow", "run_id", "ended"}
        assert (await agent.call("list_jobs", state="queued"))["jobs"] == []
        later = await agent.call("list_jobs", since=jobs["jobs"][0]["ended"])
        assert [j["job_id"] for j in later["jobs"]] == [jobs["jobs"][0]["job_id"]]

    server.run(scenario)


# -- 6. writing nodes, files, metrics, asking ----------------------------------------------------
ASK = """from graphbook import prompt, step
from graphbook.prompts import bool_prompt


def question(ctx, data):
    return bool_prompt(data)


@step("Trust/Ask")
@prompt(question)
def ask(data):
    data["ok"] = True
"""


def test_writing_nodes_with_the_guide(server: Shared) -> None:
    async def scenario(agent: Agent) -> None:
        guide = await agent.session.read_resource("graphbook://guide/nodes")
        text = getattr(guide.contents[0], "text", "")
        assert "def f(ctx, data, response)" in text and "@batch(" in text
        prompt = await agent.session.get_prompt("write_node", {"task": "double every x"})
        message = getattr(prompt.messages[0].content, "text", "")
        assert "double every x" in message and "def f(ctx, data)" in message

        written = await agent.call("write_node_file", path="ask.py", source=ASK)
        error = written["error"]["error"]
        assert "Ask: a prompt function is called as ask(ctx, data, response)" in error
        assert "ask.py, line 11" in error and "write `def ask(ctx, data, response):`" in error

        fix = [{"old": "def ask(data):", "new": "def ask(ctx, data, response):"}]
        fixed = await agent.call("edit_node_file", path="ask.py", edits=fix)
        assert fixed["nodes"] == ["Ask"] and fixed["error"] is None
        assert fixed["file"] == str((server.nodes / "ask.py").resolve())
        read = await agent.call("read_node_file", path="ask.py")
        assert "def ask(ctx, data, response):" in read["source"] and read["nodes"] == ["Ask"]

        twice = [{"old": "data", "new": "d"}]
        text = await agent.refused("edit_node_file", path="ask.py", edits=twice)
        assert "edit 0: its `old` text occurs" in text and "nothing changed" in text
        nowhere = [{"old": "response):", "new": "answer):"}, {"old": "no such text", "new": ""}]
        text = await agent.refused("edit_node_file", path="ask.py", edits=nowhere)
        assert "edit 1" in text
        assert (server.nodes / "ask.py").read_text() == read["source"], "all or none"
        await agent.refused("read_node_file", path="../outside.py")

    server.run(scenario)


def test_deleting_is_confined_and_can_be_undone(server: Shared) -> None:
    async def scenario(agent: Agent) -> None:
        await agent.call("edit_workflow", path="gone.json", operations=NUMBERS, create=True)
        before = (server.workflows / "gone.json").read_bytes()
        deleted = await agent.call("delete_file", path="gone.json", kind="workflow")
        assert not (server.workflows / "gone.json").exists()
        assert Path(deleted["kept_at"]).read_bytes() == before
        listed = await agent.call("list_workflows")
        assert "gone.json" not in {f["path"] for f in listed["files"]}
        await agent.call("restore_file", trash_id=deleted["trash_id"])
        assert (server.workflows / "gone.json").read_bytes() == before
        await agent.refused("restore_file", trash_id=deleted["trash_id"])

        await agent.call("write_node_file", path="extra.py", source=DOUBLE.replace("Double", "Tri"))
        kept = await agent.call("delete_file", path="extra.py", kind="node")
        found = await agent.call("list_nodes", search="Tri")
        assert "Tri" not in {n["name"] for n in found["nodes"]}
        await agent.call("restore_file", trash_id=kept["trash_id"])
        found = await agent.call("list_nodes", search="Tri")
        assert "Tri" in {n["name"] for n in found["nodes"]}

        outside = server.root / "outside.json"
        outside.write_text("{}")
        for path, kind in (("../outside.json", "workflow"), (str(outside), "workflow")):
            text = await agent.refused("delete_file", path=path, kind=kind)
            assert "refused" in text
        await agent.refused("delete_file", path="../nodes/test_nodes.py", kind="node")
        await agent.refused("restore_file", trash_id="../../outside")
        assert outside.exists() and (server.nodes / "test_nodes.py").exists()

    server.run(scenario)


def test_run_metrics(server: Shared) -> None:
    async def scenario(agent: Agent) -> None:
        await agent.call("edit_workflow", path="metrics.json", operations=NUMBERS, create=True)
        job = (await run(agent, "metrics.json"))["job_id"]
        metrics = await agent.call("run_metrics", job_id=job)
        curves = {(c["group"], c["name"]): c for c in metrics["curves"]}
        assert curves[("plus", "items_out")]["last"] == 3, sorted(curves)
        assert ("run", "seconds") in curves

    server.run(scenario)


def test_asking_the_person(server: Shared) -> None:
    async def scenario(agent: Agent) -> None:
        server.person.answers.append({"answer": "dog"})
        if server.transport == "http":  # asked in the reply: protocol 2026-07-28
            async with Client(
                f"{server.url}/mcp", mode="auto", elicitation_callback=server.person
            ) as modern:
                args = {"question": "Which pet?", "options": ["cat", "dog"]}
                result = await modern.call_tool("ask_user", args)
                text = getattr(result.content[0], "text", "")
            text_of = await agent.refused("ask_user", question="Which pet?")
            assert "cannot ask its person" in text_of and "2026-07-28" in text_of
        else:
            answer = await agent.call("ask_user", question="Which pet?", options=["cat", "dog"])
            text = json.dumps(answer, separators=(",", ":"))
        assert json.loads(text) == {"answer": "dog"}
        asked = server.person.asked[-1]
        assert isinstance(asked, types.ElicitRequestFormParams) and asked.message == "Which pet?"
        assert asked.requested_schema["properties"]["answer"]["enum"] == ["cat", "dog"]

    server.run(scenario)


# -- 7. tools that say what they do --------------------------------------------------------------
READ_ONLY = {"list_nodes", "describe_node", "node_failures", "read_node_file", "list_workflows"}
READ_ONLY |= {"read_workflow", "validate_workflow", "list_jobs", "job_status", "job_logs"}
READ_ONLY |= {"node_output", "run_metrics", "wait_for_job", "server_info", "ask_user"}
READ_ONLY |= {"list_apps", "describe_app", "app_results"}
DESTRUCTIVE = {"edit_workflow", "write_node_file", "edit_node_file", "delete_file", "stop_job"}


def test_tools_say_what_they_do(server: Shared) -> None:
    async def scenario(agent: Agent) -> None:
        tools = {tool.name: tool for tool in (await agent.session.list_tools()).tools}
        for name, tool in tools.items():
            hints = tool.annotations
            assert hints is not None and hints.read_only_hint == (name in READ_ONLY), name
            assert hints.destructive_hint == (name in DESTRUCTIVE), name
            assert tool.output_schema is None, name
        assert tools["write_node_file"].annotations.idempotent_hint is True  # type: ignore[union-attr]

        text = await agent.refused(
            "edit_workflow", path="x.json", operations=[{"op": "add_node"}], create=True
        )
        assert "add_node needs a `type`" in text and "Component" not in text
        await agent.call("edit_workflow", path="stop.json", operations=NUMBERS[:1], create=True)
        job = (await run(agent, "stop.json"))["job_id"]
        for refused, arguments in (
            ("stop_job", {"job_id": job}),
            ("job_status", {"job_id": "nope"}),
            ("run_workflow", {"path": "nope.json"}),
        ):
            text = await agent.refused(refused, **arguments)
            assert "/api/" not in text, text
        assert "list_workflows lists them" in text

        wf = Workflow()
        wf.add("LoadJSONL", id="rows", jsonl_path="data/rows.jsonl")
        save(server, "paths.json", wf)
        checked = await agent.call("validate_workflow", path="paths.json")
        resolved = checked["paths"]["rows"]["jsonl_path"]
        info = await agent.call("server_info")
        assert resolved == os.path.join(info["folders"]["working"], "data", "rows.jsonl")
        assert info["folders"]["working"] == str(server.root.resolve())
        assert info["folders"]["workflows"] == str(server.workflows.resolve())
        assert info["url"] == (server.url or None)

    server.run(scenario)
