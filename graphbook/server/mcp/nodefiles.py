"""Tools for node files inside the nodes folder: read one, write one, or change one with exact
`{old, new}` replacements; each write is imported at once as the server's reload does, and
the answer says which node types the file defines or why it did not import."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, ConfigDict, Field

from graphbook import protocol as p
from graphbook.server.errors import ServerError, not_found
from graphbook.server.keys import CATALOG, HUB, SETTINGS
from graphbook.server.mcp.tools import CHANGES, READS, REWRITES, add
from graphbook.server.paths import Root
from graphbook.workflow import atomic_write

MAX_SOURCE = 1 << 20
"""Characters of one node file an agent may write."""
NodePath = Annotated[
    str, Field(description="a .py file inside the nodes folder, relative to it, e.g. 'x.py'")
]


class Replace(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    old: str = Field(description="text the file holds exactly once (include enough lines)")
    new: str = Field(description="what it becomes")


class NodeFileTools:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    @property
    def root(self) -> Root:
        return Root(self.app[SETTINGS].nodes)

    def read_node_file(self, path: NodePath) -> dict[str, Any]:
        """A node file's source, the node types it defines and, if its last import failed,
        why (with the traceback)."""
        target = node_file(self.app, path)
        if not target.is_file():
            raise not_found(f"no node file {path!r} in the nodes folder")
        return {"source": target.read_text(encoding="utf-8")} | self.loaded(target)

    async def write_node_file(
        self, path: NodePath, source: Annotated[str, Field(description="the file's source")]
    ) -> dict[str, Any]:
        """Write a node file in the nodes folder (custom_nodes/), then import it at once as
        the server's reload does: the node types it defines (after a failed import, those of
        its last good one) and its import error with the traceback, if any. Only .py files
        inside the nodes folder can be written. read_resource graphbook://guide/nodes (or
        the prompt write_node) says how a node is written."""
        target = node_file(self.app, path)
        return await self.write(target, source)

    async def edit_node_file(
        self,
        path: NodePath,
        edits: Annotated[
            list[Replace],
            Field(
                min_length=1,
                description="applied in order, all or none: each `old` "
                "must occur exactly once in the file as the edits before it left it",
            ),
        ],
    ) -> dict[str, Any]:
        """Change a node file with exact replacements ({old, new}), then import it as
        write_node_file does. An `old` found nowhere, or more than once, refuses the whole
        change (the file stays as it was) and says which edit and why."""
        target = node_file(self.app, path)
        if not target.is_file():
            raise not_found(f"no node file {path!r} in the nodes folder; write_node_file makes one")
        source = target.read_text(encoding="utf-8")
        for index, edit in enumerate(edits):
            found = source.count(edit.old) if edit.old else 0
            if found != 1:
                why = "is empty" if not edit.old else f"occurs {found} times, not once"
                hint = "" if found else " (read_node_file shows the file as it is)"
                raise ServerError(
                    422, "bad_message", f"edit {index}: its `old` text {why}; nothing changed{hint}"
                )
            source = source.replace(edit.old, edit.new, 1)
        return await self.write(target, source)

    async def write(self, target: Path, source: str) -> dict[str, Any]:
        if len(source) > MAX_SOURCE:
            raise ServerError(413, "too_large", f"a node file is at most {MAX_SOURCE} characters")
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, source)
        changed = await self.app[CATALOG].reload([target])
        if changed is not None:
            self.app[HUB].publish(changed)
        return self.loaded(target)

    def loaded(self, target: Path) -> dict[str, Any]:
        """What the catalog says of the file: its path (relative to the nodes folder, and as
        the server resolves it), the node types it defines and its import error."""
        registry = self.app[CATALOG].registry
        failure = registry.failures.get(str(target.resolve()))
        return {
            "path": self.root.relative(target),
            "file": str(target),
            "nodes": registry.defined_by(target),
            "error": p.to_json(failure),
        }


def node_file(app: web.Application, relative: str) -> Path:
    path = Root(app[SETTINGS].nodes).resolve(relative)
    if path.suffix != ".py":
        raise ServerError(400, "bad_path", f"{relative!r}: a node file ends in .py")
    return path


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = NodeFileTools(app)
    add(server, tools.read_node_file, READS)
    add(server, tools.write_node_file, REWRITES)
    add(server, tools.edit_node_file, CHANGES)
