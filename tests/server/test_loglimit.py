"""Limiting the logs the browser gets: a node that logs faster than the limit still shows
its last lines, and how many were left out."""

from __future__ import annotations

from graphbook.events import NodeFinished, NodeLog
from graphbook.server.loglimit import LOG_LIMIT, LogLimiter


def test_logs_over_the_limit_keep_the_last_lines_and_say_how_many_are_left_out() -> None:
    limit = LogLimiter(lambda value: value)
    logged = (NodeLog("r", "a", "info", f"{i}") for i in range(5 * LOG_LIMIT))
    sent = [m for event in logged for m in limit(event)]
    sent += limit(NodeFinished("r", "a", "done", {}, 0, 1.0))
    assert isinstance(sent[-1], NodeFinished)
    logs = [m for m in sent if isinstance(m, NodeLog)]
    lines = [int(m.message) for m in logs]
    assert lines[-LOG_LIMIT:] == list(range(4 * LOG_LIMIT, 5 * LOG_LIMIT))
    skipped = sum(m.skipped for m in logs)
    assert skipped > 0 and len(lines) + skipped == 5 * LOG_LIMIT
