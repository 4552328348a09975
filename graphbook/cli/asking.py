"""Prompts during `graphbook run`: asked in the terminal, or answered with their defaults.

Part of the CLI layer. When stdin and stdout are terminals, a PromptStep's question is asked
there (rich prompts; the live table steps aside while it is asked). Otherwise (a pipe, a
scheduler, `--json`) every prompt takes its default, and the person is told so once, above the
live table, instead of a warning per prompt.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from rich.console import Console
from rich.prompt import Confirm, FloatPrompt, Prompt
from rich.text import Text

from graphbook.cli.terminal import JsonSink, TerminalSink, message_text

HoldDisplay = Callable[[], AbstractContextManager[object]]


def prompter_for(sink: TerminalSink | JsonSink, ask: Console, note: Console) -> TerminalPrompter:
    """Ask on `ask` when stdin and it are terminals and the run shows itself to a person; else
    answer with defaults and say so once on `note`."""
    if isinstance(sink, JsonSink):
        return TerminalPrompter(note, False, why_not="--json is given")
    interactive = sys.stdin.isatty() and ask.is_terminal
    return TerminalPrompter(ask if interactive else note, interactive, sink.paused, sink.view.title)


class TerminalPrompter:
    """The `prompter` of a `graphbook run`: `(node_id, question, data) -> answer`."""

    def __init__(
        self,
        console: Console,
        interactive: bool,
        pause: HoldDisplay = nullcontext,
        title: Callable[[str], str] = str,
        why_not: str = "stdin is not a terminal",
    ) -> None:
        self.console = console
        self.interactive = interactive
        self.pause = pause
        self.title = title
        self.why_not = why_not
        self.told = False

    def __call__(self, node_id: str, question: dict[str, Any], data: Any) -> Any:
        if not self.interactive:
            self._tell_once(node_id, question)
            return question.get("def")
        with self.pause():
            return self.ask(node_id, question, data)

    def _tell_once(self, node_id: str, question: dict[str, Any]) -> None:
        if self.told:
            return
        self.told = True
        self.console.print(
            Text(
                f"note: [{node_id}] {self.title(node_id)} asks {question.get('msg')!r}; "
                f"{self.why_not}, so every prompt of this run takes its default answer "
                "(run it in a terminal to answer them, or in the editor)",
                style="yellow",
            )
        )

    def ask(self, node_id: str, question: dict[str, Any], data: Any) -> Any:
        """Ask one question until the answer fits its type."""
        self.console.print(Text(f"[{node_id}] {self.title(node_id)} asks about:", style="bold"))
        self.console.print(Text(_shown(data)))
        kind = str(question.get("type") or "bool")
        msg, default = str(question.get("msg") or "?"), question.get("def")
        options = question.get("options") or {}
        if kind == "bool":
            return Confirm.ask(msg, default=bool(default), console=self.console)
        if kind == "number":
            number = 0.0 if default is None else float(default)
            return FloatPrompt.ask(msg, default=number, console=self.console)
        if kind == "selection":
            return self._select(msg, options, default)
        if kind == "string":
            return Prompt.ask(msg, default=str(default or ""), console=self.console)
        return self._json(msg, kind, default)

    def _select(self, msg: str, options: dict[str, Any], default: Any) -> Any:
        choices = list(options.get("choices") or [])
        by_text = {str(choice): choice for choice in choices}
        if not options.get("multiple_allowed"):
            shown = str(default) if str(default) in by_text else next(iter(by_text))
            answer = Prompt.ask(msg, choices=list(by_text), default=shown, console=self.console)
            return by_text[answer]
        hint = f"{msg} (several of {', '.join(by_text)}, separated by commas)"
        default_text = ", ".join(str(d) for d in default or [])
        while True:
            answer = Prompt.ask(hint, default=default_text, console=self.console)
            picked = [part.strip() for part in answer.split(",") if part.strip()]
            unknown = [part for part in picked if part not in by_text]
            if not unknown:
                return [by_text[part] for part in picked]
            self.console.print(Text(f"not a choice: {', '.join(unknown)}", style="red"))

    def _json(self, msg: str, kind: str, default: Any) -> Any:
        """dict and list[...] answers, typed as JSON."""
        expected = dict if kind == "dict" else list
        while True:
            answer = Prompt.ask(f"{msg} (JSON)", default=json.dumps(default), console=self.console)
            try:
                value = json.loads(answer)
            except ValueError as exc:
                self.console.print(Text(f"not JSON: {exc}", style="red"))
                continue
            if isinstance(value, expected):
                return value
            self.console.print(Text(f"expected a JSON {expected.__name__}", style="red"))


def _shown(data: Any) -> str:
    text = message_text(data)
    return text if len(text) <= 500 else text[:500] + "…"
