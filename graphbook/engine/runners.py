"""How each kind of node runs inside the executor: sources, steps, batch steps and prompts.

A runner owns its node's inbox (a bounded deque of dicts), counts, and hand-off to the
runners downstream. The executor calls `ready()` to ask whether `work()` would make progress,
and `exhausted()` to ask whether the node has nothing left to do.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from graphbook.engine.events import (
    ErrorInfo,
    NodeFailed,
    NodeFinished,
    NodeLog,
    NodeOutput,
    NodeProgress,
    NodeStatus,
    Sink,
)
from graphbook.engine.pool import Done, Failed, Lane, Pool
from graphbook.engine.preview import preview
from graphbook.errors import GraphbookError
from graphbook.graph import GraphNode
from graphbook.logs import node_context
from graphbook.steps import Data, Routed, items_of, routed

CHUNK = 64
"""Dicts a runner handles per turn: large enough to amortise scheduling, small to stream."""
INBOX_CAPACITY = 256
"""Dicts waiting before a node; a full inbox holds back whatever feeds it."""
CHUNK_SECONDS = 0.05
"""A turn also ends after this long, so slow nodes still stream and a stop is seen soon."""
PROGRESS_EVERY = 0.25
PREVIEW_EVERY = 1.0

Prompter = Callable[[str, dict[str, Any], Data], Any]
"""Asks the person (node id, prompt, dict) and returns the answer."""


class RunAborted(Exception):
    """Raised inside the executor when a node failed and the run must stop."""


@dataclass
class RunState:
    """What all runners of one run share."""

    sink: Sink
    pool: Pool
    prompter: Prompter
    continue_on_error: bool = False
    collect: bool = False
    failed: bool = False
    outputs: dict[str, dict[str, list[Data]]] = field(default_factory=dict)


class Runner:
    """Runs a plain step: the lifecycle on each dict, then routing."""

    def __init__(self, node: GraphNode, instance: Any, run: RunState) -> None:
        self.node = node
        self.id = node.id
        self.instance = instance
        self.run = run
        self.inbox: deque[Data] = deque()
        self.targets: dict[str, list[Runner]] = {o: [] for o in node.spec.outputs}
        self.open_upstream = 0
        self.counts = dict.fromkeys(node.spec.outputs, 0)
        self.received = 0
        self.errors = 0
        self.closed = False
        self.started = time.perf_counter()
        self._last_progress = 0.0
        self._last_preview = dict.fromkeys(node.spec.outputs, -1.0)

    # -- scheduling -------------------------------------------------------------------
    def ready(self) -> bool:
        return bool(self.inbox) and self.has_room()

    def has_room(self) -> bool:
        return all(len(t.inbox) < INBOX_CAPACITY for ts in self.targets.values() for t in ts)

    def exhausted(self) -> bool:
        return self.open_upstream == 0 and not self.inbox

    def work(self) -> None:
        with node_context(self.id, self.on_log):
            self.handle_chunk()
        self.report_progress()

    def handle_chunk(self) -> None:
        deadline = time.perf_counter() + CHUNK_SECONDS
        for _ in range(min(CHUNK, len(self.inbox))):
            if time.perf_counter() > deadline:
                return
            data = self.inbox.popleft()
            self.received += 1
            try:
                pairs = self.instance.process(data)
            except Exception as exc:
                self.fail(exc, data)
                continue
            self.emit(pairs)

    def close(self, status: NodeStatus = "done") -> None:
        """No more work will come: tell the sink and the runners downstream."""
        self.closed = True
        self.report_progress(force=True)
        finished: NodeStatus = "failed" if self.errors else status
        seconds = time.perf_counter() - self.started
        self.run.sink(NodeFinished(self.id, finished, dict(self.counts), self.errors, seconds))
        for targets in self.targets.values():
            for target in targets:
                target.open_upstream -= 1

    # -- hand-off -----------------------------------------------------------------------
    def emit(self, pairs: Routed) -> None:
        for output, data in pairs:
            self.counts[output] += 1
            targets = self.targets[output]
            if targets:
                targets[0].inbox.append(data)
                for target in targets[1:]:
                    target.inbox.append(fork(data))
            if self.run.collect:
                self.run.outputs.setdefault(self.id, {}).setdefault(output, []).append(data)
            self.maybe_preview(output, data)

    def maybe_preview(self, output: str, data: Data) -> None:
        now = time.perf_counter()
        if now - self._last_preview[output] >= PREVIEW_EVERY:
            self._last_preview[output] = now
            self.run.sink(NodeOutput(self.id, output, self.counts[output] - 1, preview(data)))

    def report_progress(self, force: bool = False) -> None:
        now = time.perf_counter()
        if force or now - self._last_progress >= PROGRESS_EVERY:
            self._last_progress = now
            rate = sum(self.counts.values()) / max(now - self.started, 1e-9)
            self.run.sink(NodeProgress(self.id, self.received, dict(self.counts), rate))

    # -- errors and logs --------------------------------------------------------------------
    def fail(self, exc: BaseException | ErrorInfo, item: Any = None) -> None:
        """Report an error on this node; stop the run unless errors are let through."""
        error = exc if isinstance(exc, ErrorInfo) else ErrorInfo.from_exception(exc)
        self.errors += 1
        self.run.sink(NodeFailed(self.id, error, preview(item) if item is not None else None))
        if not self.run.continue_on_error:
            self.run.failed = True
            raise RunAborted(self.id)

    def on_log(self, node_id: str, message: Any, level: str) -> None:
        self.run.sink(NodeLog(node_id, level, message))


class SourceRunner(Runner):
    """Pulls from a source's `produce()` while the nodes downstream have room."""

    def __init__(self, node: GraphNode, instance: Any, run: RunState) -> None:
        super().__init__(node, instance, run)
        self._chunks: Iterator[Routed] | None = None
        self._done = False

    def ready(self) -> bool:
        return not self._done and self.has_room()

    def exhausted(self) -> bool:
        return self._done

    def handle_chunk(self) -> None:
        if self._chunks is None:
            self._chunks = iter(self.instance.produce())
        emitted = 0
        deadline = time.perf_counter() + CHUNK_SECONDS
        while emitted < CHUNK and self.has_room() and time.perf_counter() < deadline:
            try:
                pairs = next(self._chunks)
            except StopIteration:
                self._done = True
                return
            except Exception as exc:
                self._done = True
                self.fail(exc)
                return
            self.emit(pairs)
            emitted += max(len(pairs), 1)


class PromptRunner(Runner):
    """Asks the prompter about each dict before routing it."""

    def handle_chunk(self) -> None:
        data = self.inbox.popleft()
        self.received += 1
        try:
            self.emit(self._answer(data))
        except Exception as exc:
            self.fail(exc, data)

    def _answer(self, data: Data) -> Routed:
        step = self.instance
        step.on_data(data)
        question = step.get_prompt(data)
        if question is not None:
            step.on_prompt_response(data, self.run.prompter(self.id, question, data))
        step.on_after_item(data)
        return routed(step, step.route(data), data)


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


class BatchRunner(Runner):
    """Items of many dicts -> load_fn in the pool -> batches -> on_item_batch -> dump_fn."""

    def __init__(self, node: GraphNode, instance: Any, run: RunState) -> None:
        super().__init__(node, instance, run)
        self.batch_size = max(1, int(instance.batch_size))
        capacity = max(2 * self.batch_size, 2 * max(run.pool.workers, 1))
        load_fn, dump_fn = getattr(instance, "load_fn", None), getattr(instance, "dump_fn", None)
        self.loads: Lane | None = run.pool.lane(load_fn, capacity) if load_fn else None
        self.dumps: Lane | None = run.pool.lane(dump_fn, capacity, "dump") if dump_fn else None
        self.waiting: deque[tuple[Any, Holder]] = deque()
        self.loaded: deque[tuple[Any, Any, Holder]] = deque()
        self.holders: deque[Holder] = deque()
        self.dump_owners: deque[list[Holder]] = deque()

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

    def close(self, status: NodeStatus = "done") -> None:
        for lane in self._lanes():
            lane.close()
        super().close(status)

    def handle_chunk(self) -> None:
        self._take_in()
        self._collect()
        while self._batch_due():
            self._run_batch()
        self._collect_dumps()
        self._release()

    def _lanes(self) -> list[Lane]:
        return [lane for lane in (self.loads, self.dumps) if lane is not None]

    def _in_flight(self) -> int:
        return sum(lane.in_flight for lane in self._lanes())

    def _can_load(self) -> bool:
        return self.loads is None or self.loads.in_flight < self.loads.capacity

    def _upstream_done(self) -> bool:
        return self.open_upstream == 0 and not self.inbox and not self.waiting

    def _batch_due(self) -> bool:
        if self.dumps is not None and self.dumps.in_flight >= self.dumps.capacity:
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
        self.loads.submit(item)
        self.waiting.append((item, holder))

    def _collect(self) -> None:
        if self.loads is None:
            return
        for outcome in self.loads.take_ready():
            item, holder = self.waiting.popleft()
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
        try:
            result = self.instance.on_item_batch(
                [b[0] for b in batch], [b[1] for b in batch], [h.data for h in owners]
            )
            self._dispatch_dumps(result, _unique(owners))
        except Exception as exc:
            for holder in owners:
                holder.failed = True
            self.fail(exc)
        finally:
            for holder in owners:
                holder.remaining -= 1

    def _dispatch_dumps(self, result: Any, owners: list[Holder]) -> None:
        if result is None:
            return
        if self.dumps is None:
            raise GraphbookError(
                f"{type(self.instance).__name__}.on_item_batch returned values for dump_fn, but "
                "the step has no dump_fn; return None or give it a dump_fn"
            )
        for args in result:
            self.dumps.submit(*(args if isinstance(args, tuple) else (args,)))
            self.dump_owners.append(owners)
            for holder in owners:
                holder.dumps += 1

    def _collect_dumps(self) -> None:
        if self.dumps is None:
            return
        for outcome in self.dumps.take_ready():
            owners = self.dump_owners.popleft()
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


def _unique(holders: list[Holder]) -> list[Holder]:
    seen: dict[int, Holder] = {}
    for holder in holders:
        seen.setdefault(id(holder), holder)
    return list(seen.values())


def fork(value: Any) -> Any:
    """Copy containers (dicts, lists, tuples, sets) so branches don't see each other's edits;
    leaves such as tensors and images are shared, not copied."""
    if isinstance(value, dict):
        return {k: fork(v) for k, v in value.items()}
    if isinstance(value, list):
        return [fork(v) for v in value]
    if isinstance(value, tuple):
        return tuple(fork(v) for v in value)
    if isinstance(value, set):
        return set(value)
    return value


def runner_for(node: GraphNode, instance: Any, run: RunState) -> Runner:
    kind = node.spec.kind
    cls = {"source": SourceRunner, "batch": BatchRunner, "prompt": PromptRunner}.get(kind, Runner)
    return cls(node, instance, run)
