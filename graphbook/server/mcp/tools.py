"""How a tool is offered: its answer as compact JSON text (one copy, no indented or structured
second one: a listing costs an agent's context what it says, not half again as much), and its
hints (read-only, destructive, idempotent) for clients that ask before a tool changes things."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ContentBlock, TextContent, ToolAnnotations

READS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
"""Answers from what the server holds; changes nothing."""
ADDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
"""Adds something (a job, an answer, a file put back); takes nothing away."""
CHANGES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
"""Changes or ends what is there (a file's content, a running job)."""
REWRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
"""Replaces what is there with what it is given: the same call twice leaves the same result."""


def compact(value: Any) -> str:
    """JSON without spaces between its tokens; text as it is (no `\\u` escapes)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def content(result: Any) -> list[ContentBlock]:
    """A tool's return value as the content an agent reads: content blocks (an image and its
    caption) as they are, anything else as one compact JSON text."""
    if isinstance(result, list) and result and all(_is_block(item) for item in result):
        return list(result)
    return [TextContent(type="text", text=compact(result))]


def _is_block(item: Any) -> bool:
    return isinstance(item, TextContent) or getattr(item, "type", None) in ("image", "audio")


def answering(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` answering content (content()); its signature, and whether it is async, kept."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def call_async(*args: Any, **kwargs: Any) -> list[ContentBlock]:
            return content(await fn(*args, **kwargs))

        return call_async

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> list[ContentBlock]:
        return content(fn(*args, **kwargs))

    return call


def add(server: MCPServer[Any], fn: Callable[..., Any], hints: ToolAnnotations) -> None:
    """Offer `fn` as a tool named as it is, described by its docstring, with `hints`."""
    server.add_tool(answering(fn), annotations=hints, structured_output=False)
