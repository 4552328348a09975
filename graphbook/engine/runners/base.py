"""The runner of a plain step, and what every runner shares: the node's inbox (a bounded deque
of dicts), counts, previews, progress, errors and logs, and hand-off to the runners downstream.
The executor calls `ready()` to ask whether `work()` would make progress, and `exhausted()` to
ask whether the node has nothing left to do.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from graphbook.engine.cache import Recording
from graphbook.engine.control import RunControl
from graphbook.engine.metrics import MetricBook
from graphbook.engine.pool import Outcome, Pool
from graphbook.engine.preview import preview
from graphbook.engine.trace import Tracer, now
from graphbook.events import (
    BatchTiming,
    ErrorInfo,
    NodeError,
    NodeFinished,
    NodeLog,
    NodeOutput,
    NodeProgress,
    NodeStarted,
    NodeStatus,
    Sink,
)
from graphbook.graph import GraphNode
from graphbook.lifecycle import (
    Data,
    Routed,
    Step,
    fork,
    routed,
)
from graphbook.logs import node_context
from graphbook.previews import Preview

CHUNK = 256
"""Dicts a runner handles per turn: large enough to amortise scheduling, small to stream."""
INBOX_CAPACITY = 256
"""Dicts waiting before a node; a full inbox holds back whatever feeds it."""
CHUNK_SECONDS = 0.05
"""A turn also ends after this long, so slow nodes still stream and a stop is seen soon."""
CLOCK_EVERY = 8
"""A turn reads the clock before each of its first dicts, then every this many: a slow node
hands on (and previews) after its first slow dict, a fast one pays for few clock reads."""
PROGRESS_EVERY = 0.25
PREVIEW_EVERY = 1.0

Prompter = Callable[[str, dict[str, Any], Data], Any]
"""Asks the person (node id, prompt, dict) and returns the answer, or a `Future` of it: then
the prompt node parks the dict and the rest of the graph runs on until the answer comes."""
PreviewFn = Callable[[Any], Preview]
"""What makes a value's preview (graphbook/previews.py): the engine's walk, or the server's."""


def clock_due(done: int) -> bool:
    """Whether a turn that has handled `done` dicts reads the clock before the next one."""
    return done > 0 and (done < CLOCK_EVERY or not done % CLOCK_EVERY)


class RunAborted(Exception):
    """Raised inside the executor when a node failed and the run must stop."""


@dataclass
class RunContext:
    """What all runners of one run share."""

    sink: Sink
    pool: Pool
    prompter: Prompter
    continue_on_error: bool = False
    collect: bool = False
    failed: bool = False
    outputs: dict[str, dict[str, list[Data]]] = field(default_factory=dict)
    control: RunControl = field(default_factory=RunControl)
    preview: PreviewFn = preview
    run_id: str = ""
    paused: float = 0.0
    """Seconds the run has stood paused so far: a node's time and speed leave them out."""
    metrics: MetricBook | None = None
    """Where the metrics the run's nodes report are gathered (the executor sets it)."""
    tracer: Tracer | None = None
    """Where the run's spans go, when it is traced (`graphbook run --trace`)."""


StepT = TypeVar("StepT", bound=Step)
"""The kind of step a runner runs."""


class Runner(Generic[StepT]):
    """Runs a plain step: the lifecycle on each dict, then routing."""

    def __init__(self, node: GraphNode, instance: StepT, run: RunContext) -> None:
        self.node = node
        self.id = node.id
        self.instance = instance
        self.run = run
        self.inbox: deque[Data] = deque()
        self.targets: dict[str, list[Runner[Any]]] = {o: [] for o in node.spec.outputs}
        self.open_upstream = 0
        self.counts = dict.fromkeys(node.spec.outputs, 0)
        self.received = 0
        self.errors = 0
        self.closed = False
        self.status: NodeStatus | None = None
        self.recording: Recording | None = None
        """Where the node's outputs are kept for the next run, when the run has a cache."""
        self.cleared = False
        """Its cached outputs were cleared before this run: `on_clear` is called first."""
        self.started = time.perf_counter()
        self._paused_before = run.paused
        self._last_progress = 0.0
        self._last_preview = dict.fromkeys(node.spec.outputs, -1.0)
        self._firsts: dict[str, tuple[int, Data]] = {}
        """The first dict handed on to each output in this turn, and its index."""
        self._lasts: dict[str, tuple[int, Data]] = {}
        """The last dict handed on to each output, and its index: previewed as the node ends."""
        self._previewed = dict.fromkeys(node.spec.outputs, -1)
        """The index of the last dict previewed, per output."""

    # -- scheduling -------------------------------------------------------------------
    def ready(self) -> bool:
        return bool(self.inbox) and self.has_room()

    def has_room(self) -> bool:
        return all(len(t.inbox) < INBOX_CAPACITY for ts in self.targets.values() for t in ts)

    def room(self) -> int:
        """Dicts that can be handed on before some inbox downstream is full."""
        free = [INBOX_CAPACITY - len(t.inbox) for ts in self.targets.values() for t in ts]
        return min(free, default=INBOX_CAPACITY)

    def exhausted(self) -> bool:
        return self.open_upstream == 0 and not self.inbox

    def waiting_on_pool(self) -> bool:
        """True while tasks of this node are in the worker pool."""
        return False

    def pending(self) -> bool:
        """Dicts have reached this node and are not handed on yet: a step may pick it."""
        return bool(self.inbox)

    def start(self) -> None:
        self.run.sink(NodeStarted(self.run.run_id, self.id))
        with node_context(self.id, self.on_log):
            if self.cleared:
                self.instance.on_clear()
            self.instance.on_start()

    def end(self) -> None:
        self.instance.ended_as = self.status
        with node_context(self.id, self.on_log):
            self.instance.on_end()

    def timing(self) -> BatchTiming | None:
        """Where a batch step's time went; None for other nodes."""
        return None

    def work(self) -> None:
        tracer = self.run.tracer
        began = now() if tracer is not None else 0.0
        self._work()
        if tracer is not None:
            tracer.span(self.id, "node", "engine", began)

    def _work(self) -> None:
        with node_context(self.id, self.on_log):
            try:
                self.handle_chunk()
            except RunAborted:
                raise
            except Exception as exc:  # whatever escapes the node's own handling is its error
                self.fail(exc)
            finally:
                self.preview_firsts()
        self.report_progress(force=self.run.control.paused is not None)

    def unit_done(self) -> bool:
        """One unit of work (a dict, a yield, a batch) ended; True if a step pauses here."""
        return self.run.control.unit_done(self.id)

    def handle_chunk(self) -> None:
        direct = self.instance.direct
        if direct is not None and not self.run.control.stepping:
            self._handle_direct(direct)
            return
        inbox, process, emit = self.inbox, self.instance.process, self.emit
        control = self.run.control
        deadline = time.perf_counter() + CHUNK_SECONDS
        for n in range(min(CHUNK, len(inbox))):
            if clock_due(n) and time.perf_counter() > deadline:
                return
            data = inbox.popleft()
            self.received += 1
            try:
                pairs = process(data)
            except Exception as exc:
                self.fail(exc, data)
            else:
                emit(pairs)
            if control.stepping and self.unit_done():
                return

    def _handle_direct(self, direct: Callable[[Data], Any]) -> None:
        """The chunk through a step that is one call per dict: dicts that go to the first
        output are handed on together."""
        inbox, output = self.inbox, self.instance.Outputs[0]
        routes = self.instance.direct_routes
        passed: list[Data] = []
        deadline = time.perf_counter() + CHUNK_SECONDS
        taken = 0
        try:
            for taken in range(1, min(CHUNK, len(inbox)) + 1):
                # clock_due(taken - 1), inlined: this line runs once per dict and step
                due = taken > 1 and (taken <= CLOCK_EVERY or taken % CLOCK_EVERY == 1)
                if due and time.perf_counter() > deadline:
                    taken -= 1
                    return
                data = inbox.popleft()
                try:
                    choice = direct(data)
                    if choice is None or choice is data or not routes:
                        passed.append(data)
                        continue
                    pairs = routed(self.instance, choice, data)
                except Exception as exc:
                    self.emit_many(output, passed)
                    self.fail(exc, data)
                    continue
                self.emit_many(output, passed)
                self.emit(pairs)
        finally:
            self.received += taken
            self.emit_many(output, passed)

    def emit_many(self, output: str, dicts: list[Data]) -> None:
        """Hand on `dicts`, all to `output`, in order; `dicts` is emptied."""
        if not dicts:
            return
        self.counts[output] += len(dicts)
        if output not in self._firsts:
            self._firsts[output] = (self.counts[output] - len(dicts), dicts[0])
        self._lasts[output] = (self.counts[output] - 1, dicts[-1])
        if self.recording is not None:
            for data in dicts:
                self.recording.add(output, data)
        targets = self.targets[output]
        if targets:
            targets[0].inbox.extend(dicts)
            for target in targets[1:]:
                target.inbox.extend(fork(data) for data in dicts)
        if self.run.collect:
            self.run.outputs.setdefault(self.id, {}).setdefault(output, []).extend(dicts)
        dicts.clear()

    def close(self, status: NodeStatus = "done") -> None:
        """No more work will come: hand on what the step held back (`Step.flush`), then tell
        the sink and the runners downstream."""
        if status == "done":
            self._flush()
        self.closed = True
        self.report_progress(force=True)
        self.preview_lasts()
        finished: NodeStatus = "failed" if self.errors else status
        self.status = finished
        if self.run.metrics is not None:  # the node's metrics before its end
            self.run.metrics.flush(self.id)
        seconds = self.seconds(time.perf_counter())
        counts = dict(self.counts)
        self.run.sink(
            NodeFinished(
                self.run.run_id, self.id, finished, counts, self.errors, seconds, self.timing()
            )
        )
        for targets in self.targets.values():
            for target in targets:
                target.open_upstream -= 1

    def _flush(self) -> None:
        flush = getattr(self.instance, "flush", None)
        if flush is None:
            return
        with node_context(self.id, self.on_log):
            try:
                self.emit(routed(self.instance, flush(), {}))
            except Exception as exc:
                self.fail(exc)
            finally:
                self.preview_firsts()

    def seconds(self, now: float) -> float:
        """How long the node has been at work by `now` (perf_counter), pauses left out."""
        return max(0.0, now - self.started - (self.run.paused - self._paused_before))

    # -- hand-off -----------------------------------------------------------------------
    def emit(self, pairs: Routed) -> None:
        """Hand on (output, dict) pairs in order; see `emit_many` for what handing on means."""
        for output, data in pairs:
            self.emit_many(output, [data])

    def preview_firsts(self) -> None:
        """Preview the first dict of each output handed on in this turn, if one is due: once
        a turn, not once a dict, as reading the clock costs more than a trivial step."""
        now = time.perf_counter()
        pausing = self.run.control.paused is not None  # a step ended: show what it made
        for output, (index, data) in self._firsts.items():
            if pausing or now - self._last_preview[output] >= PREVIEW_EVERY:
                self._last_preview[output] = now
                self._preview(output, index, data)
        self._firsts.clear()

    def preview_lasts(self) -> None:
        """As the node ends: preview the last dict of each output, unless it was: what a node
        handed on last always reaches the page, however the previews were spaced."""
        for output, (index, data) in self._lasts.items():
            if index > self._previewed[output]:
                self._preview(output, index, data)
        self._lasts.clear()

    def _preview(self, output: str, index: int, data: Data) -> None:
        self._previewed[output] = index
        shown = self.run.preview(data)
        self.run.sink(NodeOutput(self.run.run_id, self.id, output, index, shown))

    def report_progress(self, force: bool = False) -> None:
        now = time.perf_counter()
        if force or now - self._last_progress >= PROGRESS_EVERY:
            self._last_progress = now
            rate = sum(self.counts.values()) / max(self.seconds(now), 1e-9)
            counts = dict(self.counts)
            progress = NodeProgress(
                self.run.run_id, self.id, self.received, counts, rate, self.timing()
            )
            self.run.sink(progress)

    # -- errors and logs --------------------------------------------------------------------
    def fail(self, exc: BaseException | ErrorInfo, item: Any = None) -> None:
        """Report an error on this node; stop the run unless errors are let through."""
        error = exc if isinstance(exc, ErrorInfo) else ErrorInfo.from_exception(exc)
        self.errors += 1
        shown = self.run.preview(item) if item is not None else None
        self.run.sink(NodeError(self.run.run_id, self.id, error, shown))
        if not self.run.continue_on_error:
            self.run.failed = True
            raise RunAborted(self.id)

    def reported(self, outcome: Outcome) -> None:
        """Route the metrics a task of the pool reported to the run's book."""
        if outcome.metrics and self.run.metrics is not None:
            self.run.metrics.add_all(self.id, outcome.metrics)

    def on_log(self, node_id: str, message: Any, level: str) -> None:
        if self.recording is not None:
            self.recording.log(level, message)
        self.run.sink(NodeLog(self.run.run_id, node_id, level, message))
