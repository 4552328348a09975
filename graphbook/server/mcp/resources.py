"""Resources: workflow files (graphbook://workflows/{path}) and node docs
(graphbook://nodes/{name}), read through the same checks as the HTTP routes."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from graphbook import protocol as p
from graphbook.server.errors import ServerError
from graphbook.server.keys import CATALOG, WORKFLOWS
from graphbook.server.mcp.errors import message


class Resources:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    def workflow_list(self) -> str:
        """Every workflow file, one path a line."""
        return "\n".join(f.path for f in self.app[WORKFLOWS].listing().files)

    def workflow(self, path: str) -> str:
        """A workflow file's content, in the canonical format."""
        try:
            return p.encode(self.app[WORKFLOWS].document(path).workflow)
        except ServerError as exc:
            raise ResourceError(message(exc)) from None

    def node_doc(self, name: str) -> str:
        """A node type's documentation: what it does, its ports and parameters."""
        registry = self.app[CATALOG].registry
        if name not in registry:
            raise ResourceError(f"unknown node type {name!r}; {registry.suggest(name)}")
        spec = registry.get(name)
        lines = [f"# {spec.name}", "", spec.doc.strip(), "", "## Parameters", ""]
        lines += [
            f"- `{q.name}` ({q.type}, default {q.default!r}): {q.description}" for q in spec.params
        ]
        inputs, outputs = ", ".join(spec.inputs) or "none", ", ".join(spec.outputs)
        lines += ["", f"Inputs: {inputs}; outputs: {outputs}"]
        return "\n".join(lines)


def register(server: MCPServer[Any], app: web.Application) -> None:
    resources = Resources(app)
    server.resource("graphbook://workflows", mime_type="text/plain")(resources.workflow_list)
    server.resource("graphbook://workflows/{+path}", mime_type="application/json")(
        resources.workflow
    )
    server.resource("graphbook://nodes/{name}", mime_type="text/markdown")(resources.node_doc)
