"""Translator: one run's engine events as protocol messages for the browser.

It runs in the executor's thread. Logs are limited to LOG_LIMIT per node per second, so a node
that logs every item cannot flood the clients; the number left out is logged instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphbook import protocol as p
from graphbook.engine import events as e

LOG_LIMIT = 200


@dataclass
class LogWindow:
    second: int = 0
    sent: int = 0
    dropped: int = 0


class Translator:
    def __init__(self, started: p.RunStarted, previewer: Callable[[Any], Any]) -> None:
        self.started = started
        self.previewer = previewer
        self.run_id = started.run_id
        self._logs: dict[str, LogWindow] = {}
        self._table: dict[type[Any], Callable[[Any], list[Any]]] = {
            e.RunStarted: self._run_started,
            e.NodePlanned: self._planned,
            e.NodeCached: self._cached,
            e.NodeStarted: lambda ev: [p.NodeStarted(self.run_id, ev.node_id)],
            e.NodeProgress: self._progress,
            e.NodeLog: self._log,
            e.NodeOutput: self._output,
            e.NodeFailed: self._failed,
            e.NodeFinished: self._finished,
            e.RunPaused: lambda ev: [p.RunPaused(self.run_id, ev.reason, ev.node_id)],
            e.RunResumed: lambda ev: [p.RunResumed(self.run_id)],
            e.NodePrompted: self._prompted,
            e.NodeAnswered: self._answered,
            e.RunFinished: self._run_finished,
        }

    def __call__(self, event: e.Event) -> list[Any]:
        translate = self._table.get(type(event))
        return translate(event) if translate is not None else []

    def _run_started(self, event: e.RunStarted) -> list[Any]:
        nodes = [p.NodeTitle(i, title) for i, title in event.nodes.items()]
        s = self.started
        return [p.RunStarted(self.run_id, s.workflow, s.mode, s.node, nodes, s.started)]

    def _planned(self, event: e.NodePlanned) -> list[Any]:
        return [p.NodePlan(self.run_id, event.node_id, event.action, event.cause, event.reason)]

    def _cached(self, event: e.NodeCached) -> list[Any]:
        counts = dict(event.counts)
        return [p.NodeFinished(self.run_id, event.node_id, "cached", counts, 0, 0.0)]

    def _progress(self, event: e.NodeProgress) -> list[Any]:
        counts = dict(event.counts)
        return [p.NodeProgress(self.run_id, event.node_id, event.received, counts, event.rate)]

    def _log(self, event: e.NodeLog) -> list[Any]:
        window = self._logs.setdefault(event.node_id, LogWindow())
        second = int(time.monotonic())
        messages: list[Any] = []
        if second != window.second:
            if window.dropped:
                note = f"… {window.dropped} more log messages not shown (over {LOG_LIMIT}/s)"
                messages.append(p.NodeLog(self.run_id, event.node_id, "warning", note))
            window.second, window.sent, window.dropped = second, 0, 0
        if window.sent >= LOG_LIMIT:
            window.dropped += 1
            return messages
        window.sent += 1
        message = event.message if isinstance(event.message, str) else self.previewer(event.message)
        messages.append(p.NodeLog(self.run_id, event.node_id, event.level, message))
        return messages

    def _output(self, event: e.NodeOutput) -> list[Any]:
        run = self.run_id
        return [p.NodeOutput(run, event.node_id, event.output, event.index, event.preview)]

    def _failed(self, event: e.NodeFailed) -> list[Any]:
        error = p.ErrorInfo(event.error.type, event.error.message, event.error.traceback)
        return [p.NodeErrorMessage(self.run_id, event.node_id, error, event.item)]

    def _finished(self, event: e.NodeFinished) -> list[Any]:
        counts = dict(event.counts)
        return [
            p.NodeFinished(
                self.run_id, event.node_id, event.status, counts, event.errors, event.seconds
            )
        ]

    def _prompted(self, event: e.NodePrompted) -> list[Any]:
        prompt = dict(event.prompt)
        if prompt.get("type") == "boolean":  # PromptStep's default says "boolean"
            prompt["type"] = "bool"
        return [p.Prompt(self.run_id, event.prompt_id, event.node_id, prompt, event.data)]

    def _answered(self, event: e.NodeAnswered) -> list[Any]:
        return [p.PromptAnswered(self.run_id, event.prompt_id, event.node_id, event.answer)]

    def _run_finished(self, event: e.RunFinished) -> list[Any]:
        counts = {k: dict(v) for k, v in event.counts.items()}
        return [p.RunFinished(self.run_id, event.status, event.seconds, counts, event.errors)]
