"""How each kind of node runs inside the executor: sources, steps, batch steps and prompts.

A runner owns its node's inbox (a bounded deque of dicts), counts, and hand-off to the
runners downstream. The executor calls `ready()` to ask whether `work()` would make progress,
and `exhausted()` to ask whether the node has nothing left to do.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from graphbook.engine.cache import Recording
from graphbook.engine.control import RunControl
from graphbook.engine.metrics import MetricBook
from graphbook.engine.pool import BatchResult, Done, Failed, Lane, Outcome, Pool, Stage
from graphbook.engine.preview import preview
from graphbook.errors import GraphbookError
from graphbook.events import (
    ErrorInfo,
    NodeError,
    NodeFinished,
    NodeLog,
    NodeOutput,
    NodeProgress,
    NodeStarted,
    NodeStatus,
    Prompt,
    PromptAnswered,
    Sink,
)
from graphbook.graph import GraphNode
from graphbook.lifecycle import (
    BatchStep,
    Data,
    PromptStep,
    Routed,
    SourceStep,
    Step,
    fork,
    items_of,
    routed,
)
from graphbook.logs import node_context

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
PreviewFn = Callable[[Any], Any]


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

    def work(self) -> None:
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
            NodeFinished(self.run.run_id, self.id, finished, counts, self.errors, seconds)
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
            self.run.sink(NodeProgress(self.run.run_id, self.id, self.received, counts, rate))

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


class SourceRunner(Runner[SourceStep]):
    """Pulls from a source's `produce()` while the nodes downstream have room."""

    def __init__(self, node: GraphNode, instance: SourceStep, run: RunContext) -> None:
        super().__init__(node, instance, run)
        self._chunks: Iterator[Routed] | None = None
        self._done = False

    def ready(self) -> bool:
        return not self._done and self.has_room()

    def exhausted(self) -> bool:
        return self._done

    def close(self, status: NodeStatus = "done") -> None:
        """Close the source's generator here and now (its `with` blocks run, its files close)
        when the run ends before it did, rather than whenever the garbage collector finds it,
        where a file in a reference cycle is closed by its own finalizer with a warning."""
        chunks, self._chunks = self._chunks, None
        close = getattr(chunks, "close", None)
        if close is not None:
            with node_context(self.id, self.on_log):
                try:
                    close()
                except Exception as exc:
                    self.fail(exc)
        super().close(status)

    def handle_chunk(self) -> None:
        if self._chunks is None:
            self._chunks = iter(self.instance.produce())
        if not self.run.control.stepping:
            self._pull(self._chunks, min(CHUNK, self.room()))
        elif self._pull(self._chunks, 1):
            self.unit_done()

    def _pull(self, chunks: Iterator[Routed], limit: int) -> int:
        """Pull from the source until `limit` dicts came, it ends, or the turn's time is up;
        hand the dicts on together, output by output. Returns how many values it pulled."""
        pending: dict[str, list[Data]] = {}
        emitted = pulled = 0
        deadline = time.perf_counter() + CHUNK_SECONDS
        try:
            while emitted < limit:
                if clock_due(pulled) and time.perf_counter() > deadline:
                    break
                try:
                    pairs = next(chunks)
                except StopIteration:
                    self._done = True
                    break
                except Exception as exc:
                    self._done = True
                    self.fail(exc)
                    break
                pulled += 1
                for output, data in pairs:
                    pending.setdefault(output, []).append(data)
                emitted += len(pairs) or 1
        finally:
            for output, dicts in pending.items():
                self.emit_many(output, dicts)
        return pulled


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


class ReplayRunner(SourceRunner):
    """A node reused from the cache: it hands its cached dicts (copied) to the nodes that run
    again, and neither starts, previews nor reports: its outputs are already known."""

    def __init__(self, node: GraphNode, pairs: Iterable[tuple[str, Data]], run: RunContext) -> None:
        super().__init__(node, SourceStep(), run)  # nothing of it runs
        self._pairs = deque(pairs)
        self._done = not self._pairs

    def start(self) -> None:
        """Nothing runs."""

    def end(self) -> None:
        """Nothing ran."""

    def handle_chunk(self) -> None:
        emitted = 0
        while emitted < CHUNK and self._pairs and self.has_room():
            output, data = self._pairs.popleft()
            self.emit([(output, fork(data))])
            emitted += 1
        self._done = not self._pairs

    def close(self, status: NodeStatus = "done") -> None:
        self.closed = True
        self.status = status
        for targets in self.targets.values():
            for target in targets:
                target.open_upstream -= 1

    def preview_firsts(self) -> None:
        """The cached outputs were previewed when the run began."""
        self._firsts.clear()

    def report_progress(self, force: bool = False) -> None:
        """A reused node reports its counts once, as cached."""


@dataclass
class Holder:
    """A dict inside a batch step, waiting until its items and their dumps are done."""

    data: Data
    remaining: int
    dumps: int = 0
    failed: bool = False

    @property
    def complete(self) -> bool:
        return self.remaining == 0 and self.dumps == 0


Loaded = tuple[Any, Any, Holder]
"""A loaded item waiting for its batch: (the value load_fn made, the item, its holder)."""


class BatchRunner(Runner[BatchStep]):
    """Items of many dicts -> load_fn in the pool -> batches -> on_item_batch -> dump_fn.
    On a pool with stage actors (Ray), on_item_batch runs there (`Stage`), fed the loads'
    values where they were made."""

    def __init__(self, node: GraphNode, instance: BatchStep, run: RunContext) -> None:
        super().__init__(node, instance, run)
        self.batch_size = max(1, int(instance.batch_size))
        capacity = max(2 * self.batch_size, 2 * max(run.pool.workers, 1))
        load_fn, dump_fn = getattr(instance, "load_fn", None), getattr(instance, "dump_fn", None)
        self.stage: Stage | None = run.pool.stage(node.id, instance, capacity)
        """Where on_item_batch runs when not here."""
        self.batches: Lane[list[Loaded]] | None = self.stage.batches if self.stage else None
        """Each batch on the stage, with its loaded items as the task's context."""
        self.loads: Lane[tuple[Any, Holder]] | None = None
        """Each item's load, with the item and its holder as the task's context."""
        if load_fn and self.stage is not None:
            self.loads = self.stage.loads(load_fn, capacity)
        elif load_fn:
            self.loads = run.pool.lane(load_fn, capacity)
        self.dumps: Lane[list[Holder]] | None = (
            run.pool.lane(dump_fn, capacity, "dump") if dump_fn else None
        )
        """Each dump, with the holders of the batch it came from as the task's context."""
        self.loaded: deque[Loaded] = deque()
        self.holders: deque[Holder] = deque()

    def start(self) -> None:
        if self.stage is not None:
            self.on_log(self.id, self.stage.notice, "info")
        super().start()

    def ready(self) -> bool:
        if not self.has_room():
            return False
        return (
            (bool(self.inbox) and self._can_load())
            or any(lane.has_ready for lane in self._lanes())
            or self._batch_due()
            or bool(self.holders and self.holders[0].complete)
        )

    def exhausted(self) -> bool:
        return super().exhausted() and not self.holders and not self._in_flight()

    def waiting_on_pool(self) -> bool:
        return self._in_flight() > 0

    def pending(self) -> bool:
        return super().pending() or bool(self.holders)

    def close(self, status: NodeStatus = "done") -> None:
        for lane in self._lanes():
            lane.close()
        super().close(status)

    def handle_chunk(self) -> None:
        self._take_in()
        self._collect()
        self._collect_batches()
        while self._batch_due():
            self._run_batch()
            if self.unit_done():
                break
        self._collect_dumps()
        self._release()

    def _lanes(self) -> list[Lane[Any]]:
        return [lane for lane in (self.loads, self.batches, self.dumps) if lane is not None]

    def _in_flight(self) -> int:
        return sum(lane.in_flight for lane in self._lanes())

    def _can_load(self) -> bool:
        """Whether to take in more: the items loading and those loaded but not yet batched
        count against the lane's capacity, so decoded items wait ahead of the model in at most
        that number (two batches) however fast the workers are."""
        if self.loads is None:
            return True
        return self.loads.in_flight + len(self.loaded) < self.loads.capacity

    def _upstream_done(self) -> bool:
        return (
            self.open_upstream == 0
            and not self.inbox
            and (self.loads is None or not self.loads.in_flight)
        )

    def _batch_due(self) -> bool:
        if self.dumps is not None and self.dumps.in_flight >= self.dumps.capacity:
            return False
        if self.batches is not None and self.batches.in_flight >= self.batches.capacity:
            return False
        return len(self.loaded) >= self.batch_size or (bool(self.loaded) and self._upstream_done())

    def _take_in(self) -> None:
        taken = 0
        while self.inbox and taken < CHUNK and self._can_load():
            data = self.inbox.popleft()
            self.received += 1
            taken += 1
            try:
                self.instance.on_data(data)
                items = items_of(data, self.instance.item_key, self.instance)
            except Exception as exc:
                self.fail(exc, data)
                continue
            holder = Holder(data, len(items))
            self.holders.append(holder)
            for item in items:
                self._submit(item, holder)

    def _submit(self, item: Any, holder: Holder) -> None:
        if self.loads is None:
            self.loaded.append((item, item, holder))
            return
        self.loads.submit((item, holder), (item,))

    def _collect(self) -> None:
        if self.loads is None:
            return
        for (item, holder), outcome in self.loads.take_ready():
            self.reported(outcome)
            if isinstance(outcome, Done):
                self.loaded.append((outcome.value, item, holder))
            else:
                holder.remaining -= 1
                holder.failed = True
                self.fail(outcome.error, item)

    def _run_batch(self) -> None:
        size = min(self.batch_size, len(self.loaded))
        batch = [self.loaded.popleft() for _ in range(size)]
        owners = [holder for _, _, holder in batch]
        args = ([b[0] for b in batch], [b[1] for b in batch], [h.data for h in owners])
        if self.batches is not None:  # on a stage actor: it comes back in _collect_batches
            self.batches.submit(batch, args)
            return
        try:
            result = self.instance.on_item_batch(*args)
            self._dispatch_dumps(dump_calls(self.instance, result), _unique(owners))
        except Exception as exc:
            for holder in owners:
                holder.failed = True
            self.fail(exc)
        finally:
            for holder in owners:
                holder.remaining -= 1

    def _dispatch_dumps(self, calls: list[Any], owners: list[Holder]) -> None:
        """Submit each dump (its arguments: a tuple, or a value kept where a stage made it)."""
        if not calls:
            return
        assert self.dumps is not None  # dump_calls checked it
        for args in calls:
            self.dumps.submit(owners, args if isinstance(args, tuple) else (args,))
            for holder in owners:
                holder.dumps += 1

    def _collect_batches(self) -> None:
        """The batches a stage ran: logs, metrics, dumps, errors, as if they ran here; a batch
        whose loaded values were lost with their node is loaded again."""
        if self.batches is None:
            return
        for batch, outcome in self.batches.take_ready():
            self.reported(outcome)
            owners = [holder for _, _, holder in batch]
            if isinstance(outcome, Done) and outcome.value.lost:
                for _, item, holder in batch:
                    self._submit(item, holder)
                continue
            try:
                self._batch_done(outcome, owners)
            finally:
                for holder in owners:
                    holder.remaining -= 1

    def _batch_done(self, outcome: Outcome, owners: list[Holder]) -> None:
        if isinstance(outcome, Failed):
            for holder in owners:
                holder.failed = True
            self.fail(outcome.error)
            return
        result: BatchResult = outcome.value
        for node_id, message, level in result.logs:
            self.on_log(node_id, message, level)
        self._dispatch_dumps(result.dumps, _unique(owners))

    def _collect_dumps(self) -> None:
        if self.dumps is None:
            return
        for owners, outcome in self.dumps.take_ready():
            self.reported(outcome)
            for holder in owners:
                holder.dumps -= 1
            if isinstance(outcome, Failed):
                for holder in owners:
                    holder.failed = True
                self.fail(outcome.error)

    def _release(self) -> None:
        while self.holders and self.holders[0].complete and self.has_room():
            holder = self.holders.popleft()
            if holder.failed:
                continue
            try:
                self.instance.on_after_item(holder.data)
                pairs = routed(self.instance, self.instance.route(holder.data), holder.data)
            except Exception as exc:
                self.fail(exc, holder.data)
                continue
            self.emit(pairs)


def dump_calls(step: BatchStep, result: Any) -> list[Any]:
    """The dump tasks' arguments `on_item_batch` returned, each a tuple; an error when it
    returned some and the step has no dump_fn."""
    if result is None:
        return []
    if getattr(step, "dump_fn", None) is None:
        raise GraphbookError(
            f"{type(step).__name__}.on_item_batch returned values for dump_fn, but "
            "the step has no dump_fn; return None or give it a dump_fn"
        )
    return [args if isinstance(args, tuple) else (args,) for args in result]


def _unique(holders: list[Holder]) -> list[Holder]:
    seen: dict[int, Holder] = {}
    for holder in holders:
        seen.setdefault(id(holder), holder)
    return list(seen.values())


def runner_for(node: GraphNode, instance: Step, run: RunContext) -> Runner[Any]:
    """The runner for the node's kind of step (NodeSpec.kind follows the step's class)."""
    match node.spec.kind:
        case "source" if isinstance(instance, SourceStep):
            return SourceRunner(node, instance, run)
        case "batch" if isinstance(instance, BatchStep):
            return BatchRunner(node, instance, run)
        case "prompt" if isinstance(instance, PromptStep):
            return PromptRunner(node, instance, run)
        case "step":
            return Runner(node, instance, run)
    raise TypeError(f"node {node.id!r}: a {node.spec.kind} node built a {type(instance).__name__}")
