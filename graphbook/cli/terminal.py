"""What `graphbook run` shows: a live table of nodes on a terminal, plain lines elsewhere.

Part of the CLI layer: two sinks over the engine's event stream, one for people
(`TerminalSink`) and one for programs (`JsonSink`, one JSON object per event and line).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields
from typing import Any, TextIO

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from graphbook.engine.preview import preview
from graphbook.events import (
    BatchTiming,
    Event,
    NodeError,
    NodeFinished,
    NodeLog,
    RunFinished,
    RunStarted,
)
from graphbook.protocol import to_json
from graphbook.runview import RunState, average_rate
from graphbook.text import encodable_json, encodable_text

STYLES = {
    "waiting": "dim",
    "running": "cyan",
    "done": "green",
    "cached": "green",
    "completed": "green",
    "failed": "red",
    "stopped": "yellow",
}
REFRESH_PER_SECOND = 8


def table(view: RunState) -> Table:
    """Every node of the run: its state, counts per output, rate and errors."""
    table = Table(box=box.SIMPLE_HEAD)
    for column in ("id", "node", "status", "outputs", "items/s", "errors"):
        table.add_column(column, justify="right" if column in ("items/s", "errors") else "left")
    nodes = list(view.run.nodes.values()) if view.run is not None else []
    for node in nodes:
        table.add_row(
            node.node_id,
            node.title,
            Text(node.state, style=STYLES.get(node.state, "")),
            format_counts(node.counts),
            f"{node.rate:.1f}",
            Text(str(node.error_count), style="red") if node.error_count else "",
        )
    return table


class TerminalSink:
    """Shows a run to a person: node logs and a table (live on a terminal, else finished lines),
    errors in red with their traceback on `err`, and a summary when the run finishes.

    `quiet` shows only errors, warnings and the summary. Call `close()` when the run is over.
    """

    def __init__(
        self,
        out: Console,
        err: Console,
        *,
        quiet: bool = False,
        pool_stats: Callable[[], Any] | None = None,
    ) -> None:
        self.out = out
        self.err = err
        self.quiet = quiet
        self.pool_stats = pool_stats
        """The worker pool's `stats()`, shown under the live table."""
        self.view = RunState()
        self.timings: dict[str, BatchTiming] = {}
        """Each batch step's compute and wait seconds, as it finished."""
        self.live: Live | None = None
        self._show: dict[type[Any], Callable[[Any], None]] = {
            RunStarted: self._run_started,
            NodeLog: self._log,
            NodeError: self._failed,
            NodeFinished: self._finished,
            RunFinished: self._run_finished,
        }

    @property
    def animated(self) -> bool:
        return self.out.is_terminal and not self.quiet

    def __call__(self, event: Event) -> None:
        self.view.apply(event)
        show = self._show.get(type(event))
        if show is not None:
            show(event)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The live table steps aside while the block runs (a question asked in the terminal)."""
        live = self.live
        if live is not None:
            live.stop()
        try:
            yield
        finally:
            if live is not None and self.live is live:
                live.start()

    def _run_started(self, event: RunStarted) -> None:
        if self.animated:
            self.live = Live(
                console=self.out,
                get_renderable=self._render,
                refresh_per_second=REFRESH_PER_SECOND,
                transient=True,
            )
            self.live.start()
        elif not self.quiet:
            self.out.print(Text(f"run {event.run_id}: {len(event.nodes)} node(s)"))

    def _render(self) -> RenderableType:
        stats = self.pool_stats() if self.pool_stats is not None else None
        if stats is None:  # no pool, or one without workers (inline)
            return table(self.view)
        return Group(table(self.view), Text(pool_line(stats), style="dim"))

    def _log(self, event: NodeLog) -> None:
        """A node's log line: errors and warnings (`warning:` first, yellow) on stderr, shown
        with --quiet too; the rest on stdout."""
        if event.level == "warning":
            line = Text("warning: ", style="yellow")
            line.append(f"[{event.node_id}] ", style="bold")
            line.append(message_text(event.message), style="yellow")
            self.err.print(line)
            return
        is_error = event.level == "error"
        if self.quiet and not is_error:
            return
        line = Text(f"[{event.node_id}] ", style="bold")
        line.append(message_text(event.message), style="red" if is_error else "")
        (self.err if is_error else self.out).print(line)

    def _failed(self, event: NodeError) -> None:
        title = self.view.title(event.node_id)
        self.err.print(Text(f"[{event.node_id}] {title} failed: {event.error}", style="bold red"))
        if event.item is not None:
            self.err.print(Text(f"  while handling: {message_text(event.item)}", style="red"))
        self.err.print(Text(event.error.traceback.rstrip(), style="red"))

    def _finished(self, event: NodeFinished) -> None:
        if event.timing is not None:
            self.timings[event.node_id] = event.timing
        if self.animated or self.quiet:
            return
        rate = average_rate(event.counts, event.seconds)
        shown_rate = f"  ({rate:.1f}/s)" if event.counts else ""
        errors = f"  {event.errors} error(s)" if event.errors else ""
        title = self.view.title(event.node_id)
        counts = format_counts(event.counts)
        line = f"[{event.node_id}] {title}: {event.status}  {counts}{shown_rate}{errors}"
        self.out.print(Text(line))

    def _run_finished(self, event: RunFinished) -> None:
        self.close()
        for line in summary_lines(event, self.view, self.timings):
            self.out.print(line)


def summary_lines(
    event: RunFinished, view: RunState, timings: Mapping[str, BatchTiming] | None = None
) -> list[Text]:
    """The run's status, time and error count, then every node's counts per output, and where
    each batch step's time went."""
    head = Text(f"run {event.status}", style=f"bold {STYLES.get(event.status, '')}")
    head.append(f" in {event.seconds:.2f}s, {event.errors} error(s)")
    width = max((len(f"{i}  {view.title(i)}") for i in event.counts), default=0)
    lines = [head]
    for node_id, counts in event.counts.items():
        name = f"{node_id}  {view.title(node_id)}".ljust(width)
        node = view.node(node_id)
        errors = f"  ({node.error_count} error(s))" if node is not None and node.error_count else ""
        lines.append(Text(f"  {name}  {format_counts(counts)}{errors}"))
        timing = (timings or {}).get(node_id)
        if timing is not None:
            lines.append(Text(f"  {' ' * width}  {timing_line(timing)}", style="dim"))
    return lines


def timing_line(timing: BatchTiming) -> str:
    """Where a batch step's time went, in a line: its share waiting for input, and on a GPU the
    share the device sat idle."""
    total = timing.compute + timing.waited
    share = timing.waited / total if total > 0 else 0.0
    line = (
        f"{timing.batches} batches: waited for input {share:.0%} of {total:.2f}s "
        f"({timing.compute:.2f}s running batches, {timing.waited:.2f}s waiting)"
    )
    if timing.device_busy is not None and total > 0:
        idle = max(0.0, 1 - timing.device_busy / total)
        line += f"; {timing.device} idle {idle:.0%}"
    return line


def pool_line(stats: Any) -> str:
    """The worker pool in one line: its size and, per kind, the tasks queued here and those
    handed to workers (running or prefetched) whose outcome has not come back."""
    kinds = [
        f"{name} {kind.waiting} queued, {kind.running} in workers ({kind.workers} alive)"
        for name, kind in (("load", stats.load), ("dump", stats.dump))
    ]
    return f"worker pool: {stats.workers} per kind · " + " · ".join(kinds)


def format_counts(counts: Mapping[str, int]) -> str:
    return "  ".join(f"{output}={count}" for output, count in counts.items()) or "-"


def message_text(message: Any) -> str:
    """A log message or a previewed item as one line of text."""
    if isinstance(message, str):
        return message
    return json.dumps(json_safe(message), ensure_ascii=False)


class EncodableStream(io.TextIOBase):
    """A text stream (stdout, stderr) that writes each lone surrogate as `\\udcxx`, so that a
    node's log of a file name that is not UTF-8 neither fails nor writes bytes that are not
    UTF-8 (graphbook/text.py)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(encodable_text(text))

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding


class JsonSink:
    """Writes each event as one JSON object on its own line, flushed at once."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: Event) -> None:
        self.stream.write(encodable_json(json.dumps(event_json(event), ensure_ascii=False)) + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


def event_json(event: Event) -> dict[str, Any]:
    """An event as a JSON-safe dict: its fields, with `type` saying which event it is."""
    return {f.name: json_safe(getattr(event, f.name)) for f in fields(event)}


def json_safe(value: Any) -> Any:
    """`value` with dataclasses as dicts, non-finite floats as text, and anything JSON cannot
    hold (tensors, images, objects) replaced by its preview: protocol.to_json with the
    engine's preview as its leaf."""
    return to_json(value, preview)
