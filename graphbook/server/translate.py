"""Translator: what of one run's events the browser gets. Events go out as they are (they are
protocol messages), except logs: at most LOG_LIMIT per node per second, so a node that logs
every item cannot flood the clients (the number left out is logged instead), and a message
that is not text is previewed. It runs in the executor's thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from graphbook.events import Event, NodeLog

LOG_LIMIT = 200


@dataclass
class LogWindow:
    second: int = 0
    sent: int = 0
    dropped: int = 0


class Translator:
    def __init__(self, previewer: Callable[[Any], Any]) -> None:
        self.previewer = previewer
        self._logs: dict[str, LogWindow] = {}

    def __call__(self, event: Event) -> list[Event]:
        return self._log(event) if isinstance(event, NodeLog) else [event]

    def _log(self, event: NodeLog) -> list[Event]:
        window = self._logs.setdefault(event.node_id, LogWindow())
        second = int(time.monotonic())
        messages: list[Event] = []
        if second != window.second:
            if window.dropped:
                note = f"… {window.dropped} more log messages not shown (over {LOG_LIMIT}/s)"
                messages.append(replace(event, level="warning", message=note))
            window.second, window.sent, window.dropped = second, 0, 0
        if window.sent >= LOG_LIMIT:
            window.dropped += 1
            return messages
        window.sent += 1
        if not isinstance(event.message, str):
            event = replace(event, message=self.previewer(event.message))
        messages.append(event)
        return messages
