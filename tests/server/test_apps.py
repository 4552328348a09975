"""Apps over HTTP and MCP, on a real server: an app's form, a run asked for with its inputs
(queued, its files written into a folder of its own, its results kept: tables paged, sorted and
downloaded, galleries), the runs it made; bad values refused by field with nothing queued;
uploads checked; `serve --apps` refusing every edit and node-file write."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq  # type: ignore[import-untyped]
from PIL import Image
from server_harness import Serve, Server
from test_mcp_http import agent_at

from graphbook import Workflow

LIMIT = 2048
"""The test servers' upload limit (bytes)."""


def numbers() -> dict[str, Any]:
    """src (Numbers) -> keep (Threshold on x) -> csv, an app with two inputs and a table."""
    wf = Workflow("Numbers at least a threshold, written to a CSV.")
    src = wf.add("Numbers", id="src", n=5)
    keep = wf.add("Threshold", id="keep", field="x", minimum=2)
    csv = wf.add("WriteCSV", id="csv", path="out/rows.csv", overwrite=True)
    wf.connect(src, keep)
    wf.connect(keep["keep"], csv)
    wf.input("n", src, "n", "how many numbers", minimum=1, maximum=100)
    wf.input("at_least", keep, "minimum", minimum=0, maximum=10)
    wf.output("rows", csv, kind="table", description="the numbers kept")
    return wf.to_json()


def picture() -> dict[str, Any]:
    """A picture from a file the person picks or uploads, shown in a gallery."""
    wf = Workflow()
    source = wf.add("Picture", id="picture", path="")
    wf.input("photo", source, "path", picker="image")
    wf.output("shown", source, kind="images")
    return wf.to_json()


async def ended(server: Server, job_id: str) -> dict[str, Any]:
    status, waited = await server.get(f"/api/jobs/{job_id}?wait=30")
    assert status == 200 and waited["ended"], waited
    status, run = await server.get(f"/api/apps/runs/{job_id}")
    assert status == 200, run
    return dict(run)


async def run_app(server: Server, name: str, **inputs: Any) -> dict[str, Any]:
    status, run = await server.post(f"/api/apps/{name}/runs", {"inputs": inputs})
    assert status == 201, run
    return await ended(server, run["job"]["id"])


def test_an_app_runs_with_its_inputs_and_keeps_its_results(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("numbers.json", numbers())
        status, app = await server.get("/api/apps/numbers.json")
        assert status == 200, app
        assert app["title"] == "Numbers" and app["problems"] == []
        assert app["schema"]["properties"]["n"] == {
            "type": "integer", "minimum": 1, "maximum": 100,
            "description": "how many numbers", "default": 5,
        }  # fmt: skip
        assert [o["name"] for o in app["outputs"]] == ["rows"]
        first = await run_app(server, "numbers.json", n=6, at_least=3)
        assert first["job"]["state"] == "completed" and first["inputs"] == {"n": 6, "at_least": 3}
        assert first["link"] == f"/app/numbers.json?job={first['job']['id']}"
        [rows] = first["results"]
        assert (rows["kind"], rows["count"], rows["columns"]) == ("table", 3, ["x"])
        assert {d["name"] for d in rows["downloads"]} == {"rows.csv", "rows.parquet"}
        base = f"/api/apps/runs/{first['job']['id']}"
        status, page = await server.get(f"{base}/table/rows?sort=x&order=desc&limit=2")
        assert (page["rows"], page["total"]) == ([[5], [4]], 3)
        async with server.http.get(server.url + f"{base}/download/rows.csv") as response:
            assert response.status == 200
            assert await response.text() == "x\r\n3\r\n4\r\n5\r\n"  # the file WriteCSV wrote
        async with server.http.get(server.url + f"{base}/download/rows.parquet") as response:
            table = pq.read_table(io.BytesIO(await response.read()))
            assert table.column("x").to_pylist() == [3, 4, 5]
        assert not (Path.cwd() / "out" / "rows.csv").exists(), "the app's run wrote elsewhere"
        second = await run_app(server, "numbers.json", n=3, at_least=0)
        assert second["results"][0]["count"] == 3
        status, page = await server.get(f"{base}/table/rows")
        assert page["rows"] == [[3], [4], [5]], "the first run keeps its own results"
        status, listed = await server.get("/api/apps/numbers.json/runs")
        assert [j["id"] for j in listed["runs"]] == [second["job"]["id"], first["job"]["id"]]
        assert listed["runs"][1]["request"]["inputs"] == {"n": 6, "at_least": 3}
        status, apps = await server.get("/api/apps")
        assert {a["workflow"]: a["inputs"] for a in apps["apps"]}["numbers.json"] == [
            "at_least",
            "n",
        ]

    serving(scenario)


def test_bad_values_are_refused_by_field_and_nothing_is_queued(
    serving: Serve, tmp_path: Path
) -> None:
    async def scenario(server: Server) -> None:
        server.save("numbers.json", numbers())
        server.save("picture.json", picture())
        outside = tmp_path.parent / "elsewhere.png"
        Image.new("RGB", (4, 4)).save(outside)
        cases = [
            ("numbers.json", {"n": 0}, "n", "0 is below the minimum 1"),
            ("numbers.json", {"n": "many"}, "n", "expects a whole number"),
            ("numbers.json", {"at_least": 11}, "at_least", "11 is above the maximum 10"),
            ("numbers.json", {"color": "red"}, "color", "the workflow has no input 'color'"),
            ("picture.json", {"photo": str(outside)}, "photo", "lies outside the server's folders"),
            ("picture.json", {"photo": str(tmp_path / "media/none.png")}, "photo", "there is no"),
        ]
        for name, inputs, field, words in cases:
            status, refused = await server.post(f"/api/apps/{name}/runs", {"inputs": inputs})
            assert status == 422, refused
            assert refused["error"]["code"] == "invalid_inputs"
            assert words in refused["error"]["fields"][field], refused
        status, jobs = await server.get("/api/jobs")
        assert jobs["queued"] == [] and jobs["running"] is None and jobs["finished"] == []
        uploads = "/api/apps/picture.json/uploads/photo"
        status, refused = await server.post(f"{uploads}?name=big.png", data=b"x" * (LIMIT + 1))
        assert status == 413 and "at most" in refused["error"]["fields"]["photo"]
        status, refused = await server.post(f"{uploads}?name=notes.png", data=b"not a picture")
        assert status == 400 and "not an image" in refused["error"]["fields"]["photo"]
        status, refused = await server.post(f"{uploads}?name=notes.txt", data=b"text")
        assert status == 400 and "is not a .png" in refused["error"]["fields"]["photo"]
        status, uploaded = await server.post(f"{uploads}?name=../red dot.png", data=png())
        assert status == 201, uploaded
        path = Path(uploaded["path"])
        assert path.name == "red_dot.png" and path.is_relative_to(tmp_path / "media" / "uploads")
        run = await run_app(server, "picture.json", photo=uploaded["path"])
        assert [(r["name"], r["kind"], r["count"]) for r in run["results"]] == [
            ("shown", "images", 1)
        ]
        status, gallery = await server.get(f"/api/apps/runs/{run['job']['id']}/gallery/shown")
        assert status == 200 and gallery["total"] == 1, gallery
        row = gallery["rows"][0]
        assert row["path"] is not None and row["thumb"], row

    serving(scenario, max_upload=LIMIT)


def png() -> bytes:
    data = io.BytesIO()
    Image.new("RGB", (3, 3), "red").save(data, format="PNG")
    return data.getvalue()


def test_serving_apps_only_refuses_edits_and_node_file_writes(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        server.save("numbers.json", numbers())
        writes = [
            ("PUT", "/api/workflows/numbers.json", numbers()),
            ("PATCH", "/api/workflows/numbers.json", {"path": "other.json"}),
            ("DELETE", "/api/workflows/numbers.json", None),
            ("POST", "/api/templates/classify-folder", {"path": "new.json"}),
            ("POST", "/api/runs", {"workflow": "numbers.json"}),
            ("POST", "/api/jobs", {"workflow": "numbers.json"}),
            ("PUT", "/api/components/c.json", {}),
        ]
        for method, path, body in writes:
            status, refused = await server.request(method, path, json=body)
            assert status == 403, (method, path, refused)
            assert refused["error"]["code"] == "apps_only"
            assert "graphs are read-only" in refused["error"]["message"]
        async with server.http.get(server.url + "/", allow_redirects=False) as response:
            assert response.status == 302 and response.headers["Location"] == "/apps"
        status, app = await server.get("/api/apps/numbers.json")
        assert app["apps_only"] is True
        run = await run_app(server, "numbers.json", n=4)
        assert run["job"]["state"] == "completed"
        async with agent_at(server.url, {}) as agent:
            listed = {tool.name for tool in (await agent.session.list_tools()).tools}
            assert {"list_apps", "run_app", "app_results", "read_workflow"} <= listed
            assert not listed & {"edit_workflow", "write_node_file", "run_workflow"}
            refusals: list[tuple[str, dict[str, Any]]] = [
                ("edit_workflow", {"path": "numbers.json", "operations": []}),
                ("write_node_file", {"path": "x.py", "source": "x = 1\n"}),
                ("edit_node_file", {"path": "test_nodes.py", "edits": []}),
                ("delete_file", {"path": "numbers.json"}),
            ]
            for tool, arguments in refusals:
                text = await agent.refused(tool, **arguments)
                assert "serves apps only" in text, text
            refused = await agent.refused("run_app", path="numbers.json", inputs={"n": 0})
            assert "n: 0 is below the minimum 1" in refused
            job = await agent.call("run_app", path="numbers.json", inputs={"n": 3, "at_least": 1})
            await agent.call("wait_for_job", job_id=job["job_id"], timeout=30)
            results = await agent.call("app_results", job_id=job["job_id"])
            assert results["rows"]["rows"] == {"columns": ["x"], "rows": [[1], [2]]}
        assert (server.settings.nodes / "x.py").exists() is False
        assert Workflow.load(server.settings.workflows / "numbers.json").to_json() == numbers()

    serving(scenario, apps_only=True)


def test_a_waiting_run_shows_its_place_a_running_one_its_nodes_and_both_stop(
    serving: Serve,
) -> None:
    slow = Workflow()
    slow.add("Numbers", id="src", n=400, delay=0.02)
    slow.input("n", "src", "n", minimum=1)

    async def scenario(server: Server) -> None:
        server.save("slow.json", slow.to_json())
        first = (await server.post("/api/apps/slow.json/runs", {"inputs": {}}))[1]["job"]["id"]
        second = (await server.post("/api/apps/slow.json/runs", {"inputs": {"n": 3}}))[1]
        assert (second["job"]["state"], second["job"]["position"]) == ("queued", 0)
        for _ in range(500):
            status, running = await server.get(f"/api/apps/runs/{first}")
            stages = {s["node_id"]: s for s in running["stages"]}
            if stages.get("src", {}).get("sent", 0) > 0:
                break
            await asyncio.sleep(0.02)
        assert running["job"]["state"] == "running" and stages["src"]["state"] == "running"
        status, stopped = await server.post(f"/api/apps/runs/{second['job']['id']}/stop")
        assert status == 200 and stopped["job"]["state"] == "cancelled"
        status, stopping = await server.post(f"/api/apps/runs/{first}/stop")
        assert status == 200, stopping
        assert (await ended(server, first))["job"]["state"] == "stopped"

    serving(scenario)


def test_a_link_to_a_run_is_behind_the_token_and_keeps_it(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        link = "/app/sub/numbers.json?job=0123456789ab"
        async with server.http.get(server.url + link) as response:
            assert response.status == 401
        (server.settings.webapp / "assets").mkdir(parents=True)
        page = "<html><head></head><body></body></html>"
        (server.settings.webapp / "index.html").write_text(page)
        async with server.http.get(f"{server.url}{link}&token=s3cret") as response:
            assert response.status == 200
            assert '<head><base href="/">' in await response.text()
            assert response.cookies["graphbook_token"].value == "s3cret"

    serving(scenario, token="s3cret")
