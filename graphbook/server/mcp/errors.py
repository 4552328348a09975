"""The text an agent gets for a refused request: what is wrong and how to fix it."""

from __future__ import annotations

from graphbook import protocol as p
from graphbook.errors import GraphbookError
from graphbook.server.errors import ServerError

EXPECTED = (ServerError, GraphbookError, p.ProtocolError)
"""What a tool raises for bad input or a refused request: its text goes to the agent."""


def message(exc: Exception) -> str:
    if isinstance(exc, ServerError):
        problems = "".join(f"\n- {problem}" for problem in exc.problems)
        return exc.message + problems
    if isinstance(exc, p.ProtocolError):
        return exc.message
    return str(exc)
