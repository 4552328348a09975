"""The runner of a prompt step: each dict waits for the person's answer, the rest of the graph
runs on meanwhile."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from graphbook.engine.runners.base import (
    RunContext,
    Runner,
)
from graphbook.events import (
    Prompt,
    PromptAnswered,
)
from graphbook.graph import GraphNode
from graphbook.lifecycle import (
    Data,
    PromptStep,
    routed,
)


@dataclass(frozen=True)
class Parked:
    """A dict whose prompt waits for its answer."""

    data: Data
    prompt_id: str
    answer: Future[Any]


class PromptRunner(Runner[PromptStep]):
    """Asks the prompter about each dict before routing it, one dict at a time.

    When the answer is a `Future`, the dict is parked and the scheduler runs other nodes; the
    future's completion wakes the scheduler, which then finishes the dict.
    """

    def __init__(self, node: GraphNode, instance: PromptStep, run: RunContext) -> None:
        super().__init__(node, instance, run)
        self.parked: Parked | None = None

    def ready(self) -> bool:
        if self.parked is not None:
            return self.parked.answer.done() and self.has_room()
        return super().ready()

    def exhausted(self) -> bool:
        return self.parked is None and super().exhausted()

    def pending(self) -> bool:
        return self.parked is not None or super().pending()

    def handle_chunk(self) -> None:
        if self.parked is not None:
            self._answered(self.parked)
            return
        data = self.inbox.popleft()
        self.received += 1
        try:
            self._ask(data)
        except Exception as exc:
            self.fail(exc, data)

    def _ask(self, data: Data) -> None:
        self.instance.on_data(data)
        question = self.instance.get_prompt(data)
        if question is None or question.get("type", "") is None:  # prompts.none()
            self._finish(data, None, answered=False)
            return
        answer = self.run.prompter(self.id, question, data)
        if not isinstance(answer, Future):
            self._finish(data, answer)
            return
        self.parked = Parked(data, uuid.uuid4().hex[:12], answer)
        shown = self.run.preview(data)
        asked = json_data(question)
        if asked.get("type") == "boolean":  # PromptStep's default says "boolean"
            asked["type"] = "bool"
        prompt = Prompt(self.run.run_id, self.parked.prompt_id, self.id, asked, shown)
        self.run.sink(prompt)
        answer.add_done_callback(lambda _: self.run.control.wake())

    def _answered(self, parked: Parked) -> None:
        self.parked = None
        try:
            answer = parked.answer.result()
            answered = PromptAnswered(self.run.run_id, parked.prompt_id, self.id, json_data(answer))
            self.run.sink(answered)
            self._finish(parked.data, answer)
        except Exception as exc:
            self.fail(exc, parked.data)

    def _finish(self, data: Data, answer: Any, answered: bool = True) -> None:
        step = self.instance
        if answered:
            step.on_prompt_response(data, answer)
        step.on_after_item(data)
        self.emit(routed(step, step.route(data), data))
        self.unit_done()


def json_data(value: Any) -> Any:
    """`value` as JSON data; anything JSON cannot hold becomes its text."""
    return json.loads(json.dumps(value, default=str))
