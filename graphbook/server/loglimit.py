"""LogLimiter: what of one run's events the browser gets. Events go out as they are (they are
protocol messages), except metrics, which are not sent (the Runs tab reads them from the run
store), and logs: at most LOG_LIMIT per node per second, so a node that logs every item cannot
flood the clients, and a message that is not text is previewed. Past the limit the latest lines
are held back and sent when the second, the node or the run ends, the first of them saying how
many lines before it are left out (`skipped`): the last lines a node logged always arrive. It
runs in the executor's thread.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from graphbook.events import Event, NodeFinished, NodeLog, NodeMetrics, RunFinished

LOG_LIMIT = 200


@dataclass
class LogWindow:
    second: int = 0
    sent: int = 0
    dropped: int = 0
    """Lines over the limit in this window, held or not."""
    held: deque[NodeLog] = field(default_factory=lambda: deque(maxlen=LOG_LIMIT))
    """The latest lines over the limit, sent when the window closes."""


class LogLimiter:
    def __init__(self, previewer: Callable[[Any], Any]) -> None:
        self.previewer = previewer
        self._logs: dict[str, LogWindow] = {}

    def __call__(self, event: Event) -> list[Event]:
        if isinstance(event, NodeLog):
            return self._log(event)
        if isinstance(event, NodeMetrics):  # recorded in the run store, where browsers read them
            return []
        if isinstance(event, NodeFinished):
            return [*self._flush(event.node_id), event]
        if isinstance(event, RunFinished):
            return [*(m for node_id in list(self._logs) for m in self._flush(node_id)), event]
        return [event]

    def _log(self, event: NodeLog) -> list[Event]:
        window = self._logs.setdefault(event.node_id, LogWindow())
        second = int(time.monotonic())
        messages: list[Event] = []
        if second != window.second:
            messages = self._flush(event.node_id)
            window.second, window.sent = second, 0
        if window.sent >= LOG_LIMIT:
            window.dropped += 1 + event.skipped
            window.held.append(replace(event, skipped=0))
            return messages
        window.sent += 1
        return [*messages, self._shown(event)]

    def _shown(self, event: NodeLog, skipped: int = 0) -> NodeLog:
        """The line as sent: previewed unless text, with the lines left out before it."""
        message = event.message if isinstance(event.message, str) else self.previewer(event.message)
        return replace(event, message=message, skipped=event.skipped + skipped)

    def _flush(self, node_id: str) -> list[Event]:
        """The held-back lines of a node, the first saying how many before it are left out."""
        window = self._logs.get(node_id)
        if window is None or not window.held:
            return []
        left_out = window.dropped - len(window.held)
        held = list(window.held)
        messages: list[Event] = [
            self._shown(h, left_out if i == 0 else 0) for i, h in enumerate(held)
        ]
        window.held.clear()
        window.dropped = 0
        return messages
