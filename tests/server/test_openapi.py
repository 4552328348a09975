"""GET /api/openapi.json: every route under /api is in the table, and the document holds
together (each $ref resolves, each route's request and reply schemas exist)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from aiohttp import web
from server_harness import Serve, Server

from graphbook.server.app import API
from graphbook.server.openapi import Route, document, undocumented


def refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "$ref":
                yield inner
            else:
                yield from refs(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from refs(inner)


def resolve(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    found: Any = doc
    for part in ref[2:].split("/"):
        assert part in found, f"{ref} does not resolve"
        found = found[part]
    return found


def test_the_served_document_covers_every_route_and_holds_together(serving: Serve) -> None:
    async def scenario(server: Server) -> None:
        status, doc = await server.get("/api/openapi.json")
        assert status == 200
        assert undocumented(server.app, API) == []
        registered = {
            (r.method.lower(), r.resource.canonical)
            for r in server.app.router.routes()
            if r.resource is not None and r.resource.canonical.startswith("/api/")
            if r.method != "HEAD"
        }
        in_doc = {(m, path) for path, ops in doc["paths"].items() for m in ops}
        assert registered == in_doc
        assert doc["openapi"] == "3.1.0"
        for ref in set(refs(doc)):
            assert resolve(doc, ref)
        for path, operations in doc["paths"].items():
            for method, op in operations.items():
                assert op["summary"] and op["responses"], (method, path)
                for response in op["responses"].values():
                    for content in response.get("content", {}).values():
                        assert "schema" in content, (method, path)
        run = doc["components"]["schemas"]["RunRequest"]
        assert {"inputs", "overrides", "workflow"} <= run["properties"].keys()
        assert run["required"] == ["workflow"]
        post = doc["paths"]["/api/runs"]["post"]
        assert post["requestBody"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/RunRequest"
        }
        assert "422" in post["responses"] and "202" in post["responses"]
        inputs = doc["paths"]["/api/workflows/{path}/inputs"]["get"]
        assert inputs["parameters"][0]["name"] == "path"

    serving(scenario)


def test_a_route_without_a_row_is_named() -> None:
    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        return web.Response()

    app.router.add_get("/api/things/{id}", handler)
    app.router.add_get("/api/openapi.json", handler)
    assert undocumented(app, API) == ["GET /api/things/{id}"]
    row = Route("GET", "/api/things/{id}", "a thing", reply={"type": "object"})
    assert undocumented(app, (*API, row)) == []
    assert "/api/things/{id}" in document((*API, row))["paths"]


def test_graphbook_openapi_prints_the_document() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "graphbook", "openapi"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(document(API)))
