"""Where `log(...)` from inside a node goes: the run's event stream, or Python logging."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

LogLevel = Literal["info", "warning", "error", "json", "image"]
LogHandler = Callable[[str, Any, LogLevel], None]
"""Receives (node id, message, level)."""

_current: ContextVar[tuple[str, LogHandler] | None] = ContextVar("graphbook_node", default=None)
_logger = logging.getLogger("graphbook.nodes")


@contextmanager
def node_context(node_id: str, handler: LogHandler) -> Iterator[None]:
    """Route `log()` calls made while the block runs to `handler`, tagged with `node_id`."""
    token = _current.set((node_id, handler))
    try:
        yield
    finally:
        _current.reset(token)


def log(message: Any, level: LogLevel = "info", *, node_id: str | None = None) -> None:
    """Log from node code; outside a run it goes to Python's `logging`."""
    current = _current.get()
    if current is None:
        _logger.log(logging.ERROR if level == "error" else logging.INFO, "%s", message)
        return
    bound_id, handler = current
    handler(node_id or bound_id, message, level)
