"""Tools for the node catalog: node types listed (a page at a time, in short unless asked in
full), one described in full, and the node files that failed to import, listed once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphbook import protocol as p
from graphbook.errors import LoadFailure
from graphbook.server.catalog import node_info
from graphbook.server.errors import not_found
from graphbook.server.keys import CATALOG, SETTINGS
from graphbook.server.mcp.tools import READS, add
from graphbook.server.paths import Root

PAGE = 40
"""Node types a listing gives by default."""
DOC_LINE = 120
"""Characters of a type's first doc line in a listing."""


class NodeTools:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    def list_nodes(
        self,
        search: Annotated[
            str | None, Field(description="only types whose name, pack or category has this")
        ] = None,
        category: Annotated[
            str | None, Field(description="only this category (or those under it)")
        ] = None,
        detail: Annotated[
            Literal["summary", "full"],
            Field(
                description="summary: name, kind, category, one doc line; full: with ports "
                "and parameters (describe_node gives one type with descriptions)"
            ),
        ] = "summary",
        limit: Annotated[int, Field(ge=1, le=500, description="types at most")] = PAGE,
        offset: Annotated[int, Field(ge=0, description="types to skip (next_offset)")] = 0,
    ) -> dict[str, Any]:
        """The node types workflows can use, a page at a time: in summary their name, kind,
        category and first doc line; describe_node gives one in full. Library components
        (components/NAME.json) are listed as `components/NAME` (category Components); add one
        with add_node type 'components/NAME'. `failed_files` names node files that did not
        import; node_failures gives their errors."""
        catalog = self.app[CATALOG].catalog()
        words = (search or "").lower()
        under = (category or "").strip("/").lower()
        found = [
            info
            for info in catalog.nodes
            if words in f"{info.name} {info.pack} {info.category}".lower()
            and (not under or f"{info.category.lower()}/".startswith(f"{under}/"))
        ]
        page = found[offset : offset + limit]
        shown = summary if detail == "summary" else full
        listing: dict[str, Any] = {"total": len(found), "nodes": [shown(i) for i in page]}
        if offset + limit < len(found):
            listing["next_offset"] = offset + limit
        failed = [self._relative(failure.path) for failure in catalog.failures]
        if failed:
            listing["failed_files"] = failed
        return listing

    def describe_node(
        self, name: Annotated[str, Field(description="a node type, as list_nodes names it")]
    ) -> dict[str, Any]:
        """One node type in full: its parameters with their types, defaults and descriptions,
        its ports and its documentation (a library component, `components/NAME`, with its
        version)."""
        registry = self.app[CATALOG].registry
        if name in registry:
            info: dict[str, Any] = p.to_json(node_info(registry.get(name)))
            return _without_empty(info)
        component = next((i for i in self.app[CATALOG].extra() if i.name == name), None)
        if component is None:
            raise not_found(f"unknown node type {name!r}; {registry.suggest(name)}")
        described: dict[str, Any] = p.to_json(component)
        return {**_without_empty(described), "version": component.code_hash}

    def node_failures(self) -> dict[str, Any]:
        """The node files that failed to import, each with its error and traceback (path
        relative to the nodes folder); their node types are missing from list_nodes, or are
        those of the file's last import that worked."""
        failures = self.app[CATALOG].catalog().failures
        return {"failures": [self.failure(failure) for failure in failures]}

    def failure(self, failure: LoadFailure) -> dict[str, Any]:
        return {
            "path": self._relative(failure.path),
            "error": failure.error,
            "traceback": failure.traceback,
        }

    def _relative(self, path: str) -> str:
        """A node file's path relative to the nodes folder; outside it, its name only."""
        root = Root(self.app[SETTINGS].nodes)
        return root.relative(Path(path)) if root.contains(Path(path)) else Path(path).name


def summary(info: p.NodeInfo) -> dict[str, Any]:
    doc = info.doc.strip().split("\n", 1)[0]
    shown: dict[str, Any] = {
        "name": info.name,
        "kind": info.kind,
        "category": info.category,
        "doc": doc if len(doc) <= DOC_LINE else doc[: DOC_LINE - 3] + "...",
    }
    if info.component:
        shown |= {"component": info.component, "version": info.code_hash}
    return shown


def full(info: p.NodeInfo) -> dict[str, Any]:
    return summary(info) | {
        "pack": info.pack,
        "inputs": info.inputs,
        "outputs": info.outputs,
        "params": [_param(param) for param in info.params],
    }


def _param(param: p.ParamInfo) -> dict[str, Any]:
    return {
        "name": param.name,
        "type": param.type,
        "default": param.default,
        "required": param.required,
    }


def _without_empty(info: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in info.items() if value not in ("", None, [], {})}


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = NodeTools(app)
    add(server, tools.list_nodes, READS)
    add(server, tools.describe_node, READS)
    add(server, tools.node_failures, READS)
