"""ask_user: the agent asks the person who uses it a question and waits for the answer, as
upstream Graphbook's beta's `ask_user` does; here through the client itself (MCP
elicitation), which shows the question to its person wherever they are."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aiohttp import web
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel, Field, create_model

from graphbook.server.mcp.tools import READS, add

MAX_OPTIONS = 20
CANNOT_ASK = (
    "this MCP client cannot ask its person (it declares no form elicitation, or it "
    "speaks protocol 2025-11-25 over stateless HTTP, where a question cannot reach it: use "
    "protocol 2026-07-28 or stdio); ask the question in your own conversation instead"
)


class Reply(BaseModel):
    answer: str = Field(description="your answer")


def asked(question: str, options: list[str] | None, context: Context[Any, Any]) -> Elicit[Reply]:
    """The elicitation ask_user sends: free text, or one of `options`."""
    capabilities = context.client_capabilities
    if capabilities is None or capabilities.elicitation is None:
        raise ToolError(CANNOT_ASK)
    if not options:
        return Elicit(question, Reply)
    choice = Literal[tuple(options)]  # type: ignore[valid-type]
    schema = create_model("Choice", __base__=Reply, answer=(choice, Field(description="pick one")))
    return Elicit(question, schema)


async def ask_user(
    question: Annotated[str, Field(min_length=1, description="what to ask, in a sentence")],
    options: Annotated[
        list[str] | None,
        Field(max_length=MAX_OPTIONS, description="the answers to choose from; none: free text"),
    ] = None,
    reply: Annotated[ElicitationResult[Reply], Resolve(asked)] = None,  # type: ignore[assignment]
) -> dict[str, Any]:
    """Ask the person using you a question and wait for their answer (the client shows it
    to them). Returns {"answer": ...}, or {"declined": true} / {"cancelled": true} when they
    would not answer. For decisions only they can make: which folder, keep or drop, go on."""
    if isinstance(reply, AcceptedElicitation):
        return {"answer": reply.data.answer}
    return {"declined": True} if reply.action == "decline" else {"cancelled": True}


def register(server: MCPServer[Any], app: web.Application) -> None:
    add(server, ask_user, READS)
