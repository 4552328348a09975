"""Tools that delete a workflow file or a node file (inside their folders only) into the
data folder's trash, and put one back: an agent's deletion can always be undone."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphbook import protocol as p
from graphbook.server.errors import not_found
from graphbook.server.keys import CATALOG, HUB, RUN_MANAGER, SETTINGS, WORKFLOWS
from graphbook.server.mcp.nodefiles import node_file
from graphbook.server.mcp.tools import ADDS, CHANGES, add
from graphbook.server.trash import Kept, Trash


class FileTools:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    @property
    def trash(self) -> Trash:
        return Trash(self.app[SETTINGS].data)

    async def delete_file(
        self,
        path: Annotated[
            str, Field(description="relative to its folder: 'a.json', or 'my_nodes.py'")
        ],
        kind: Annotated[
            Literal["workflow", "node"],
            Field(description="workflow: a file of the workflows folder; node: a node file"),
        ],
    ) -> dict[str, Any]:
        """Delete a workflow file or a node file, into the trash (the data folder's trash/):
        restore_file(trash_id) puts it back. A workflow that is running cannot be deleted;
        a node file's node types leave the catalog."""
        if kind == "workflow":
            kept = await self._delete_workflow(path)
        else:
            kept = await self._delete_node_file(path)
        return asdict(kept) | {"restore": f"restore_file(trash_id={kept.trash_id!r})"}

    async def _delete_workflow(self, path: str) -> Kept:
        files = self.app[WORKFLOWS]
        async with files.lock:
            name = files.name(path)
            self.app[RUN_MANAGER].refuse_while_running(name)
            target = files.path(path)
            if not target.is_file():
                raise not_found(f"no workflow file {path!r}; list_workflows lists them")
            kept = self.trash.keep(target, "workflow", name)
        self.app[RUN_MANAGER].cache.forget(name)
        self.app[HUB].publish(p.WorkflowsChanged(name, "deleted"))
        return kept

    async def _delete_node_file(self, path: str) -> Kept:
        target = node_file(self.app, path)
        if not target.is_file():
            raise not_found(f"no node file {path!r} in the nodes folder")
        relative = target.relative_to(Path(self.app[SETTINGS].nodes).resolve()).as_posix()
        kept = self.trash.keep(target, "node", relative)
        await self._reload(target)
        return kept

    async def restore_file(
        self, trash_id: Annotated[str, Field(description="the trash_id delete_file gave")]
    ) -> dict[str, Any]:
        """Put a file delete_file deleted back where it was (refused if a file of that name
        is there now)."""
        kept = self.trash.find(trash_id)
        if kept.kind == "workflow":
            files = self.app[WORKFLOWS]
            async with files.lock:
                self.trash.take_back(kept, files.path(kept.path))
            self.app[HUB].publish(p.WorkflowsChanged(kept.path, "saved"))
        else:
            target = node_file(self.app, kept.path)
            self.trash.take_back(kept, target)
            await self._reload(target)
        return {"restored": kept.path, "kind": kept.kind}

    async def _reload(self, target: Path) -> None:
        changed = await self.app[CATALOG].reload([target])
        if changed is not None:
            self.app[HUB].publish(changed)


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = FileTools(app)
    add(server, tools.delete_file, CHANGES)
    add(server, tools.restore_file, ADDS)
