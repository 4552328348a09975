"""Workflow inputs over HTTP: GET /api/workflows/{path}/inputs, `inputs` of POST /api/runs
(kept in the run record, sent again by "run again", merged with overrides), and the same values
given as `--input`/`--set`, as HTTP inputs and saved in the file writing the same bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from server_harness import Serve, Server

from graphbook import protocol as p
from graphbook.cli import main
from graphbook.store import Store
from graphbook.workflow import Workflow


def rows_to_file(source: str, target: str, skip: int = 0) -> Workflow:
    wf = Workflow()
    rows = wf.add("LoadJSONL", id="rows", jsonl_path=source, start_from=skip)
    out = wf.add("DumpJSONL", id="out", jsonl_path=target)
    wf.connect(rows, out)
    wf.input("rows", rows, "jsonl_path", description="the rows to read")
    wf.input("skip", rows, "start_from")
    wf.input("destination", out, "jsonl_path")
    return wf


def _record(server: Server, run_id: str) -> dict[str, Any]:
    return Store(server.settings.data / "graphbook.sqlite").get_run(run_id).config


def test_inputs_schema_runs_with_inputs_and_the_same_bytes_everywhere(
    serving: Serve, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"i": i}) + "\n" for i in range(6)))
    outs = {k: tmp_path / f"{k}.jsonl" for k in ("saved", "http", "cli", "set", "again")}

    async def scenario(server: Server) -> None:
        server.save("saved.json", rows_to_file(str(rows), str(outs["saved"]), skip=2).to_json())
        server.save("called.json", rows_to_file("", "unused.jsonl").to_json())
        status, reply = await server.get("/api/workflows/called.json/inputs")
        assert status == 200, reply
        assert reply["workflow"] == "called.json"
        schema = reply["schema"]
        assert schema["required"] == ["rows"]
        assert schema["properties"]["skip"] == {
            "type": "integer",
            "description": "first line to read",
            "default": 0,
        }
        assert schema["properties"]["rows"]["description"] == "the rows to read"

        socket = await server.connect()
        await server.run_to_end(socket, "saved.json")
        inputs = {"rows": str(rows), "skip": 2, "destination": str(outs["http"])}
        done = await server.run_to_end(socket, "called.json", inputs=inputs)
        assert done.status == "completed"
        assert outs["http"].read_bytes() == outs["saved"].read_bytes()
        config = _record(server, done.run_id)
        assert config["inputs"] == inputs
        assert config["params"]["rows"] == {"jsonl_path": str(rows), "start_from": 2}

        outs["http"].rename(outs["again"])
        status, again = await server.post(f"/api/runs/{done.run_id}/rerun")
        assert status == 202, again
        await socket.until(p.RunFinished, lambda m: m.run_id == again["run_id"])
        await server.idle()
        assert _record(server, again["run_id"])["inputs"] == inputs
        assert outs["http"].read_bytes() == outs["again"].read_bytes()

    serving(scenario)
    called = tmp_path / "workflows" / "called.json"
    args = ["run", str(called), "--quiet", "--workers", "0", "--input", f"rows={rows}"]
    assert main([*args, "--input", "skip=2", "--input", f"destination={outs['cli']}"]) == 0
    assert (
        main([*args, "--set", "rows.start_from=2", "--set", f"out.jsonl_path={outs['set']}"]) == 0
    )
    assert outs["cli"].read_bytes() == outs["saved"].read_bytes()
    assert outs["set"].read_bytes() == outs["saved"].read_bytes()
    assert len(outs["saved"].read_text().splitlines()) == 4


def test_wrong_inputs_and_conflicts_are_refused_naming_them(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("called.json", rows_to_file("in.jsonl", "out.jsonl").to_json())
        cases: list[tuple[dict[str, Any], list[str]]] = [
            ({"inputs": {"skip": "many"}}, ["node 'rows'", "input 'skip'", "whole number"]),
            ({"inputs": {"limit": 3}}, ["no input 'limit'", "rows, skip"]),
            ({"inputs": [1]}, ["run.inputs", "object"]),
            (
                {"inputs": {"skip": 1}, "overrides": {"rows": {"start_from": 2}}},
                ["node 'rows'", "'start_from' is given twice"],
            ),
        ]
        for body, words in cases:
            status, reply = await server.post("/api/runs", {"workflow": "called.json", **body})
            assert status in (400, 422), reply
            for word in words:
                assert word in reply["error"]["message"], reply
        _status, listed = await server.get("/api/runs")
        assert listed["runs"] == []

        data = rows_to_file("in.jsonl", "out.jsonl").to_json()
        data["inputs"]["bad"] = {"node": "ghost", "param": "x"}
        server.save("broken.json", data)
        status, reply = await server.get("/api/workflows/broken.json/inputs")
        assert status == 422, reply
        assert "input 'bad'" in reply["error"]["problems"][0]["message"]
        status, document = await server.get("/api/workflows/broken.json")
        assert status == 200  # the file itself still opens, the problem listed
        assert any("input 'bad'" in x["message"] for x in document["problems"])
        status, reply = await server.get("/api/workflows/missing.json/inputs")
        assert status == 404, reply

    serving(scenario)
