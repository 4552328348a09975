"""The text an agent gets for a refused request: what is wrong and how to fix it, naming the
MCP tools that fix it where the server's parts name an HTTP route or the editor."""

from __future__ import annotations

import re

from graphbook import protocol as p
from graphbook.errors import GraphbookError
from graphbook.server.errors import ServerError

EXPECTED = (ServerError, GraphbookError, p.ProtocolError)
"""What a tool raises for bad input or a refused request: its text goes to the agent."""

AS_TOOLS = {
    "GET /api/jobs lists them": "list_jobs lists them",
    "GET /api/workflows lists them": "list_workflows lists them",
    "POST /api/jobs/{id}/stop stops it": "stop_job stops it",
    "POST /api/jobs with the same body": "run_workflow queues it",
    "the palette shows its error": "node_failures shows its error",
    "reload it first": "read_workflow gives its new hash",
}
"""What the server's parts say for a person or an HTTP client, and what an agent is told."""
_SAID = re.compile("|".join(re.escape(said) for said in AS_TOOLS))


def for_agent(text: str) -> str:
    """`text` with the HTTP routes and the editor it names replaced by the MCP tools."""
    return _SAID.sub(lambda found: AS_TOOLS[found.group(0)], text)


def message(exc: Exception) -> str:
    if isinstance(exc, ServerError):
        problems = "".join(f"\n- {problem}" for problem in exc.problems)
        return for_agent(exc.message + problems)
    if isinstance(exc, p.ProtocolError):
        return exc.message
    return for_agent(str(exc))
