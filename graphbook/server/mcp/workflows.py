"""Tools for workflow files: list, read, validate, and edit as one batch of operations written
through the server's workflow store (atomic; open pages see it live)."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphbook import protocol as p
from graphbook.errors import Problem
from graphbook.server.errors import not_found
from graphbook.server.keys import CATALOG, WORKFLOWS
from graphbook.server.mcp.edits import Operation, apply_all
from graphbook.server.routes.workflows import save
from graphbook.server.workflows import WorkflowFiles
from graphbook.workflow import Workflow

WorkflowPath = Annotated[
    str, Field(description="a workflow file, relative to the workflows folder, e.g. 'a.json'")
]


class WorkflowTools:
    def __init__(self, app: web.Application) -> None:
        self.app = app

    @property
    def files(self) -> WorkflowFiles:
        return self.app[WORKFLOWS]

    def list_workflows(self) -> dict[str, Any]:
        """The workflow files in the workflows folder (path, size, modified time)."""
        listing: dict[str, Any] = p.to_json(self.files.listing())
        return listing

    def read_workflow(self, path: WorkflowPath) -> dict[str, Any]:
        """A workflow file: its nodes (id, type, params, position, title), edges, its `hash`
        (pass it to edit_workflow to refuse overwriting newer changes) and its problems."""
        document: dict[str, Any] = p.to_json(self.files.document(path))
        return document

    async def validate_workflow(self, path: WorkflowPath) -> dict[str, Any]:
        """Check a workflow as a run would before it starts (node types, parameters and their
        types, wires, cycles): every problem, named by node id and title, with how to fix it."""
        workflow = self.files.load(path)
        problems = await asyncio.to_thread(self.files.problems, workflow)
        found = named(problems, workflow)
        return {"path": self.files.name(path), "valid": not problems, "problems": found}

    async def edit_workflow(
        self,
        path: WorkflowPath,
        operations: Annotated[
            list[Operation],
            Field(
                description="applied in order, all or none: add_node, remove_node, "
                "connect, disconnect, set_param, move"
            ),
        ],
        hash: Annotated[
            str | None,
            Field(description="the hash read_workflow gave: refuse if the file changed since"),
        ] = None,
        create: Annotated[bool, Field(description="start a new file if there is none")] = False,
    ) -> dict[str, Any]:
        """Edit a workflow file as one batch: every operation is checked as the editor checks
        (unknown node type, unknown parameter, a value of the wrong type, unknown port, missing
        node); one bad operation and nothing is written, the error names it (its index and
        what) and why. The file is written atomically and pages that have it open show the
        change as one undo step. Returns the new hash, the node ids and remaining problems."""
        files, registry = self.files, self.app[CATALOG].registry

        def edited() -> dict[str, Any]:
            if files.path(path).is_file():
                current = files.load(path)
            elif create:
                current = Workflow()
                current.library = files.library
            else:
                raise not_found(f"no workflow file {path!r}; pass create=true to start one")
            return apply_all(current, operations, registry).to_json()

        document = await save(self.app, path, edited, hash)
        workflow = Workflow.from_json(document.workflow, document.path)
        return {
            "path": document.path,
            "hash": document.hash,
            "nodes": sorted(workflow.nodes),
            "problems": named(document.problems, workflow),
        }


def named(problems: list[Problem], workflow: Workflow) -> list[dict[str, Any]]:
    """Problems as an agent reads them: each with its node's id and title (or type)."""
    return [
        {
            "node_id": problem.node_id,
            "title": title(workflow, problem.node_id),
            "message": problem.message,
            "fix": problem.fix,
        }
        for problem in problems
    ]


def title(workflow: Workflow, node_id: str | None) -> str | None:
    node = workflow.nodes.get(node_id) if node_id is not None else None
    if node is None:
        return None
    return node.label or node.type


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = WorkflowTools(app)
    server.add_tool(tools.list_workflows)
    server.add_tool(tools.read_workflow)
    server.add_tool(tools.validate_workflow)
    server.add_tool(tools.edit_workflow)
