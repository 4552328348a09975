"""PromptDesk: questions from prompt nodes waiting for an answer from any client.

The executor's prompter returns a Future at once; the prompt node parks its dict and the run
goes on. An answer (from the event loop) completes the Future, which wakes the executor.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

from graphbook.server.errors import bad_message


class PromptDesk:
    def __init__(self) -> None:
        self._pending: dict[str, Future[Any]] = {}
        self._lock = threading.Lock()

    def ask(self, node_id: str, question: dict[str, Any], data: Any) -> Future[Any]:
        """The prompter given to the executor: one open question per prompt node."""
        future: Future[Any] = Future()
        with self._lock:
            self._pending[node_id] = future
        return future

    def answer(self, node_id: str, answer: Any) -> bool:
        with self._lock:
            future = self._pending.pop(node_id, None)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    def cancel_all(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.cancel()


def check_answer(prompt: dict[str, Any], answer: Any) -> None:
    """Refuse an answer that does not fit the prompt's type (bool, number, selection, ...)."""
    kind = prompt.get("type")
    if kind == "bool" and not isinstance(answer, bool):
        raise bad_message(f"this prompt wants true or false, got {answer!r:.80}")
    if kind == "number" and (isinstance(answer, bool) or not isinstance(answer, int | float)):
        raise bad_message(f"this prompt wants a number, got {answer!r:.80}")
    if kind == "string" and not isinstance(answer, str):
        raise bad_message(f"this prompt wants text, got {answer!r:.80}")
    if kind == "dict" and not isinstance(answer, dict):
        raise bad_message(f"this prompt wants an object, got {answer!r:.80}")
    if isinstance(kind, str) and kind.startswith("list") and not isinstance(answer, list):
        raise bad_message(f"this prompt wants a list, got {answer!r:.80}")
    if kind == "selection":
        _check_selection(prompt.get("options") or {}, answer)


def _check_selection(options: dict[str, Any], answer: Any) -> None:
    choices = options.get("choices") or []
    picked = answer if options.get("multiple_allowed") and isinstance(answer, list) else [answer]
    wrong = [a for a in picked if a not in choices]
    if wrong:
        raise bad_message(f"{wrong[0]!r:.80} is not one of the choices: {choices!r:.200}")
