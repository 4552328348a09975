"""Tools for workflow files: list, read, validate as a run's start would, and edit as one
batch of operations written through the server's workflow store (atomic; open pages see it
live)."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

from aiohttp import web
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphbook import protocol as p
from graphbook.errors import Problem, WorkflowError
from graphbook.graph import Graph
from graphbook.inputs import input_schema
from graphbook.paths import absolute
from graphbook.run_request import RunRequest, check_run
from graphbook.server.errors import not_found
from graphbook.server.keys import CATALOG, WORKFLOWS
from graphbook.server.mcp.edits import Operation, apply_all
from graphbook.server.mcp.errors import for_agent
from graphbook.server.mcp.tools import CHANGES, READS, add
from graphbook.server.routes.workflows import save
from graphbook.server.workflows import WorkflowFiles
from graphbook.workflow import Workflow

WorkflowPath = Annotated[
    str, Field(description="a workflow file, relative to the workflows folder, e.g. 'a.json'")
]
Overrides = Annotated[
    dict[str, dict[str, Any]] | None,
    Field(description="{node id or unique title: {parameter: value}}, as a run would take them"),
]
Inputs = Annotated[
    dict[str, Any] | None,
    Field(description="{input name: value}: the workflow's inputs, as a run would take them"),
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

    async def validate_workflow(
        self, path: WorkflowPath, overrides: Overrides = None, inputs: Inputs = None
    ) -> dict[str, Any]:
        """Check a workflow with everything starting a run checks, so that `valid: true`
        means run_workflow with the same overrides and inputs starts: node types, parameter
        values against their types, expressions and function sources compiled, required
        parameters and inputs, wires, cycles, and node files that no longer import. Every
        problem is named by node id and title, with how to fix it. `paths`: each path
        parameter as the server resolves it (relative ones against its working folder)."""
        files, registry = self.files, self.app[CATALOG].registry.copy()

        def check() -> dict[str, Any]:
            workflow = files.load(path)
            request = RunRequest(files.name(path), overrides=overrides, inputs=inputs)
            checked = check_run(request, workflow, registry)
            graph, problems = checked.graph, checked.problems
            answer = {"path": files.name(path), "valid": not problems}
            answer["problems"] = named(problems, workflow)
            if graph is not None and (found := resolved_paths(graph)):
                answer["paths"] = found
            if inputs is None and (required := _required_inputs(workflow, files)):
                answer["required_inputs"] = required
            return answer

        return await asyncio.to_thread(check)

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
        change as one undo step. Returns the new hash, the node ids and remaining problems.
        The batch is applied off the server's event loop, in time linear in its size."""
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

        def answer() -> dict[str, Any]:
            workflow = Workflow.from_json(document.workflow, document.path)
            return {
                "path": document.path,
                "hash": document.hash,
                "nodes": sorted(workflow.nodes),
                "problems": named(document.problems, workflow),
            }

        return await asyncio.to_thread(answer)


def named(problems: list[Problem], workflow: Workflow) -> list[dict[str, Any]]:
    """Problems as an agent reads them: each with its node's id and title (or type)."""
    return [
        {
            "node_id": problem.node_id,
            "title": title(workflow, problem.node_id),
            "message": for_agent(problem.message),
            "fix": for_agent(problem.fix),
        }
        for problem in problems
    ]


def title(workflow: Workflow, node_id: str | None) -> str | None:
    node = workflow.nodes.get(node_id) if node_id is not None else None
    if node is None:
        return None
    return node.label or node.type


def resolved_paths(graph: Graph) -> dict[str, dict[str, str]]:
    """Each node's path parameters (`path=True`) with a value, as the run resolves them:
    a relative one against the server's working folder, where the run host runs."""
    folder = os.getcwd()
    found: dict[str, dict[str, str]] = {}
    for node in graph.nodes.values():
        for param in node.spec.params:
            value = node.params.get(param.name)
            if param.path and isinstance(value, str) and value:
                found.setdefault(node.id, {})[param.name] = absolute(value, folder)
    return found


def _required_inputs(workflow: Workflow, files: WorkflowFiles) -> list[str]:
    if not workflow.inputs:
        return []
    try:
        required: list[str] = input_schema(workflow, files.registry).get("required", [])
    except WorkflowError:  # its problems are the graph's, reported already
        return []
    return required


def register(server: MCPServer[Any], app: web.Application) -> None:
    tools = WorkflowTools(app)
    add(server, tools.list_workflows, READS)
    add(server, tools.read_workflow, READS)
    add(server, tools.validate_workflow, READS)
    add(server, tools.edit_workflow, CHANGES)
