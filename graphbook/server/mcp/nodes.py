"""Tools for the node catalog and node files: list and describe node types, write a node file
inside the nodes folder (reloaded at once, its import errors returned)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphbook import protocol as p
from graphbook.server.catalog import node_info
from graphbook.server.errors import ServerError, not_found
from graphbook.server.keys import CATALOG, HUB, SETTINGS
from graphbook.server.paths import Root
from graphbook.workflow import atomic_write

MAX_SOURCE = 1 << 20
"""Characters of one node file an agent may write."""


class NodeTools:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    def list_nodes(
        self,
        search: Annotated[
            str | None, Field(description="only types whose name, pack or category has this")
        ] = None,
    ) -> dict[str, Any]:
        """The node types that workflows can use: name, pack, category, kind, inputs,
        outputs, parameters (type, default, required) and the first line of their docs;
        describe_node gives one type's full docs. Library components (components/NAME.json)
        are listed as `components/NAME` in category Components, with their `component` name,
        `version`, ports and exposed parameters; add one with add_node type
        'components/NAME' (or component {"library": NAME, "version": VERSION}). Node files
        that failed to import are listed with their errors."""
        catalog = self.app[CATALOG].catalog()
        words = (search or "").lower()
        found = [
            summary(info)
            for info in catalog.nodes
            if words in f"{info.name} {info.pack} {info.category}".lower()
        ]
        return {"nodes": found, "failures": p.to_json(catalog.failures)}

    def describe_node(
        self, name: Annotated[str, Field(description="a node type, as list_nodes names it")]
    ) -> dict[str, Any]:
        """One node type in full: its parameters with their descriptions, its ports and its
        documentation (a library component, `components/NAME`, with its version)."""
        registry = self.app[CATALOG].registry
        if name in registry:
            info: dict[str, Any] = p.to_json(node_info(registry.get(name)))
            return info
        component = next((i for i in self.app[CATALOG].extra() if i.name == name), None)
        if component is None:
            raise not_found(f"unknown node type {name!r}; {registry.suggest(name)}")
        described: dict[str, Any] = p.to_json(component)
        return {**described, "version": component.code_hash}

    async def write_node_file(
        self,
        path: Annotated[str, Field(description="a .py file inside the nodes folder, e.g. 'x.py'")],
        source: Annotated[str, Field(description="the file's Python source")],
    ) -> dict[str, Any]:
        """Write a node file in the nodes folder (custom_nodes/), then import it at once as
        the server's reload does: the node types it defines (after a failed import, those of
        its last good one) and its import error with the traceback, if any. Only .py files
        inside the nodes folder can be written."""
        target = node_file(self.app, path)
        if len(source) > MAX_SOURCE:
            raise ServerError(413, "too_large", f"a node file is at most {MAX_SOURCE} characters")
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, source)
        catalog = self.app[CATALOG]
        changed = await catalog.reload([target])
        if changed is not None:
            self.app[HUB].publish(changed)
        failure = catalog.registry.failures.get(str(target.resolve()))
        defined = catalog.registry.defined_by(target)
        return {
            "path": Root(self.app[SETTINGS].nodes).relative(target),
            "nodes": defined,
            "error": p.to_json(failure),
        }


def node_file(app: web.Application, relative: str) -> Path:
    path = Root(app[SETTINGS].nodes).resolve(relative)
    if path.suffix != ".py":
        raise ServerError(400, "bad_path", f"{relative!r}: a node file ends in .py")
    return path


def summary(info: p.NodeInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "pack": info.pack,
        "category": info.category,
        "kind": info.kind,
        "inputs": info.inputs,
        "outputs": info.outputs,
        "params": [_param(param) for param in info.params],
        "doc": info.doc.strip().split("\n", 1)[0],
        **({"component": info.component, "version": info.code_hash} if info.component else {}),
    }


def _param(param: p.ParamInfo) -> dict[str, Any]:
    return {
        "name": param.name,
        "type": param.type,
        "default": param.default,
        "required": param.required,
    }


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = NodeTools(app)
    server.add_tool(tools.list_nodes)
    server.add_tool(tools.describe_node)
    server.add_tool(tools.write_node_file)
