"""The runner of a batch step: items of many dicts -> load_fn in the pool -> batches ->
on_item_batch -> dump_fn in the pool; a dict moves on once all of its items are done.

Items go to the load workers a part of a batch at a time (graphbook/engine/slabs.py): the
runner cuts its items at the batch's boundaries as they come in, and sends the items of the
batch being formed when it is whole, or before that when no part is in flight (the source is
slower than the workers; waiting for a whole batch would leave them idle). Each part comes
back as one message and one slab, and a batch made of one part reaches `on_item_batch` as a
`Loaded` list with its stacked form, a view of the slab (see NOTE [ A part is a batch ]).
On a pool with stage actors (Ray), items load one by one, their values kept where they were
made, and on_item_batch runs on the stage (`Stage`).
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphbook.engine import feed
from graphbook.engine.devices import SLICES_ENV
from graphbook.engine.pool import WORKER_DIED, BatchResult, Done, Failed, Lane, Outcome, Stage
from graphbook.engine.runners.base import CHUNK, RunContext, Runner
from graphbook.engine.slabs import LoadEach, Part, in_memory
from graphbook.engine.timing import BatchClock
from graphbook.engine.trace import Timed, now
from graphbook.errors import GraphbookError
from graphbook.events import BatchTiming, NodeStatus
from graphbook.graph import GraphNode
from graphbook.lifecycle import BatchStep, Data, items_of, routed
from graphbook.stacking import Loaded


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


@dataclass(slots=True)
class Ready:
    """A loaded item waiting for its batch."""

    value: Any
    """What load_fn made of it."""
    item: Any
    holder: Holder
    part: Part | None = None
    """The part it came back in, and its row there (for the batch's stacked form)."""
    row: int = 0
    ends: bool = False
    """The last item of its batch: the batch runs up to here."""


Group = tuple[list[tuple[Any, Holder]], bool]
"""A part's task context: its items with their holders, and whether it ends its batch."""


class BatchRunner(Runner[BatchStep]):
    """Items of many dicts -> load_fn in the pool -> batches -> on_item_batch -> dump_fn."""

    def __init__(self, node: GraphNode, instance: BatchStep, run: RunContext) -> None:
        super().__init__(node, instance, run)
        self.batch_size = max(1, int(instance.batch_size))
        workers = max(run.pool.workers, 1)
        capacity = max(2 * self.batch_size, 2 * workers)
        self.item_capacity = self.batch_size * (workers + 2)
        """Items loading or loaded and not yet batched, at most: a part for each worker and
        two batches ahead of the model, however fast the workers are."""
        load_fn, dump_fn = getattr(instance, "load_fn", None), getattr(instance, "dump_fn", None)
        self.stage: Stage | None = run.pool.stage(node.id, instance, capacity)
        """Where on_item_batch runs when not here."""
        self.batches: Lane[list[Ready]] | None = self.stage.batches if self.stage else None
        """Each batch on the stage, with its loaded items as the task's context."""
        self.loads: Lane[Any] | None = None
        """Parts of batches (or, on a stage, single items) to load."""
        if load_fn and self.stage is not None:
            self.loads = self.stage.loads(load_fn, capacity)
        elif load_fn:
            self.loads = run.pool.lane(LoadEach(load_fn), capacity)
        if dump_fn and run.tracer is not None:
            dump_fn = TimedCall(dump_fn)
        self.dumps: Lane[list[Holder]] | None = (
            run.pool.lane(dump_fn, capacity, "dump") if dump_fn else None
        )
        """Each dump, with the holders of the batch it came from as the task's context."""
        self.loaded: deque[Ready] = deque()
        self.holders: deque[Holder] = deque()
        self.group: list[tuple[Any, Holder]] = []
        """Items of the batch being formed, not yet sent to be loaded."""
        self.formed = 0
        """Items of the batch being formed already sent, in parts before `group`."""
        self.loading = 0
        """Items sent to be loaded (or waiting in `group`) whose outcome has not come back."""
        self.ends = 0
        """Batches whose last item is loaded (`Ready.ends` in `loaded`)."""
        self.clock = BatchClock(node.id, run.tracer)
        self.devices: set[Any] = set()
        """The devices its batches went to (learnt as it runs): the next ones are sent ahead."""
        self._threads_set = not run.pool.workers

    def start(self) -> None:
        if self.stage is not None:
            self.on_log(self.id, self.stage.notice, "info")
        super().start()

    def ready(self) -> bool:
        if not self.has_room():
            return False
        return (
            (bool(self.inbox) and self._can_load())
            or (bool(self.group) and self._part_due())
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
        if self._starved():
            self.clock.starve()

    def timing(self) -> BatchTiming | None:
        """Its compute and wait seconds (on_item_batch here; none while on a stage)."""
        return self.clock.timing() if self.stage is None else None

    def close(self, status: NodeStatus = "done") -> None:
        self.clock.fed()
        for lane in self._lanes():
            lane.close()
        super().close(status)

    def _starved(self) -> bool:
        """No batch to run, yet items are still to come: the step waits for its input."""
        if self._batch_due():
            return False
        return bool(self.inbox or self.group or self.loading or self.open_upstream > 0) or bool(
            self.loads is not None and self.loads.in_flight
        )

    def _lanes(self) -> list[Lane[Any]]:
        return [lane for lane in (self.loads, self.batches, self.dumps) if lane is not None]

    def _in_flight(self) -> int:
        return sum(lane.in_flight for lane in self._lanes())

    @property
    def _parts(self) -> bool:
        """Whether items load a part of a batch at a time (not on a stage)."""
        return self.loads is not None and self.stage is None

    def _can_load(self) -> bool:
        """Whether to take in more: items loading and loaded but not yet batched are bounded,
        so decoded items wait ahead of the model in at most that number however fast the
        workers are."""
        if self.loads is None:
            return True
        if self._parts:
            return self.loading + len(self.loaded) < self.item_capacity
        return self.loads.in_flight + len(self.loaded) < self.loads.capacity

    def _upstream_done(self) -> bool:
        return (
            self.open_upstream == 0
            and not self.inbox
            and not self.group
            and (self.loads is None or not self.loads.in_flight)
        )

    def _batch_due(self) -> bool:
        if self.dumps is not None and self.dumps.in_flight >= self.dumps.capacity:
            return False
        if self.batches is not None and self.batches.in_flight >= self.batches.capacity:
            return False
        return (
            len(self.loaded) >= self.batch_size
            or self.ends > 0
            or (bool(self.loaded) and self._upstream_done())
        )

    # -- taking items in ---------------------------------------------------------------------
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
        if self.group and self._part_due():
            self._send(ends=self.open_upstream == 0 and not self.inbox)

    def _submit(self, item: Any, holder: Holder) -> None:
        if self.loads is None:
            self.loaded.append(Ready(item, item, holder))
        elif not self._parts:
            self.loads.submit((item, holder), (item,))
        else:
            self.group.append((item, holder))
            self.loading += 1
            if self.formed + len(self.group) >= self.batch_size:
                self._send(ends=True)

    def _part_due(self) -> bool:
        """Whether to send the items of the batch being formed before it is whole: no part is
        loading (the workers would wait), or no more items will come."""
        assert self.loads is not None
        no_more = self.open_upstream == 0 and not self.inbox
        return no_more or not self.loads.in_flight

    def _send(self, ends: bool) -> None:
        assert self.loads is not None
        group, self.group = self.group, []
        self.formed = 0 if ends else self.formed + len(group)
        self.loads.submit((group, ends), ([item for item, _ in group],))

    # -- loaded items ------------------------------------------------------------------------
    def _collect(self) -> None:
        if self.loads is None:
            return
        for context, outcome in self.loads.take_ready():
            self.reported(outcome)
            if self._parts:
                self._part_loaded(context, outcome)
            else:
                item, holder = context
                self._item_loaded(item, holder, outcome)

    def _part_loaded(self, context: Group, outcome: Outcome) -> None:
        group, ends = context
        self.loading -= len(group)
        if isinstance(outcome, Failed):  # the whole part failed
            if outcome.error.type == WORKER_DIED and len(group) > 1:
                self._one_by_one(group, ends)
                return
            for item, holder in group:
                self._item_loaded(item, holder, outcome)
            return
        part: Part = outcome.value
        if not self.run.pool.workers:  # laid out as the workers lay it out, for `stack`
            part = in_memory(part)
        tracer = self.run.tracer
        if tracer is not None and part.timed is not None:
            tracer.worker(f"{self.id}: {len(group)} items", "load", part.timed)
        last: Ready | None = None
        for row, ((item, holder), each) in enumerate(zip(group, part.outcomes, strict=True)):
            self.reported(each)
            last = self._item_loaded(item, holder, each, part, row) or last
        if ends and last is not None:
            last.ends = True
            self.ends += 1

    def _one_by_one(self, group: list[tuple[Any, Holder]], ends: bool) -> None:
        """A part whose worker died is loaded again an item at a time: only the item that
        ends its worker again fails (the others' loads are run again)."""
        assert self.loads is not None
        for n, (item, holder) in enumerate(group):
            self.loading += 1
            last = ends and n == len(group) - 1
            self.loads.submit(([(item, holder)], last), ([item],))

    def _item_loaded(
        self, item: Any, holder: Holder, outcome: Outcome, part: Part | None = None, row: int = 0
    ) -> Ready | None:
        if isinstance(outcome, Done):
            ready = Ready(outcome.value, item, holder, part, row)
            self.loaded.append(ready)
            return ready
        holder.remaining -= 1
        holder.failed = True
        self.fail(outcome.error, item)
        return None

    # -- running a batch ---------------------------------------------------------------------
    def _take_batch(self) -> list[Ready]:
        batch: list[Ready] = []
        while self.loaded and len(batch) < self.batch_size:
            ready = self.loaded.popleft()
            batch.append(ready)
            if ready.ends:
                self.ends -= 1
                break
        return batch

    def _run_batch(self) -> None:
        batch = self._take_batch()
        owners = [ready.holder for ready in batch]
        items, data = [r.item for r in batch], [h.data for h in owners]
        if self.batches is not None:  # on a stage actor: it comes back in _collect_batches
            self.batches.submit(batch, ([r.value for r in batch], items, data))
            return
        outputs = _outputs(batch)
        if not self._threads_set:
            self._threads_set = one_intra_op_thread()
        if self.devices:
            self._send_ahead()
        self.clock.begin()
        try:
            with feed.feeding() as fed:
                result = self.instance.on_item_batch(outputs, items, data)
            self.devices |= fed.devices
            self._dispatch_dumps(dump_calls(self.instance, result), _unique(owners))
        except Exception as exc:
            for holder in owners:
                holder.failed = True
            self.fail(exc)
        finally:
            self.clock.end(len(batch), outputs.stacked is not None)
            if self.devices and _is_tensor(outputs.stacked):
                feed.passed(self.devices, outputs.stacked)
            for holder in owners:
                holder.remaining -= 1

    def _send_ahead(self) -> None:
        """Queue the copies of the next batches (whole, stacked in one slab) to the devices
        this step moves its batches to, before it runs the current one (see feed.py)."""
        coming = [b for b in self._coming(feed.IN_FLIGHT - 1) if _is_tensor(b)]
        if not coming:
            return
        began = now()
        feed.send_ahead(self.devices, coming)
        if self.run.tracer is not None:
            self.run.tracer.span(f"{len(coming)} batches ahead", "copy", self.id, began)

    def _coming(self, count: int) -> list[Any]:
        """The stacked forms of up to `count` whole batches waiting in `loaded`, in order."""
        found: list[Any] = []
        batch: list[Ready] = []
        for ready in self.loaded:
            batch.append(ready)
            if ready.ends or len(batch) == self.batch_size:
                found.append(_outputs(batch).stacked)
                batch = []
                if len(found) == count:
                    break
        return found

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
            owners = [ready.holder for ready in batch]
            if isinstance(outcome, Done) and outcome.value.lost:
                for ready in batch:
                    self._submit(ready.item, ready.holder)
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
            timed = outcome.value if isinstance(outcome, Done) else None
            if self.run.tracer is not None and isinstance(timed, Timed):
                self.run.tracer.worker(f"{self.id}: dump", "dump", timed)
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


# NOTE [ Batch steps copy on one intra-op thread ]
# What a batch step does around its model is copying: `torch.stack(images)`, normalising, moving
# outputs. torch spreads a copy over one intra-op thread per core, and each copy then waits for
# the slowest of them, on cores the worker pool keeps busy: stacking 32 decoded 224x224 images
# took 8.2 ms on 2 threads against 0.18 ms on one, with the load workers running (bench/README.md,
# transport). So once a batch step with a worker pool runs its first batch, the run's thread
# takes one intra-op thread, as it does when it feeds a GPU (feed.py) or cuts a CPU model into
# slices (slices.py), where each slice has a thread of its own. GRAPHBOOK_CPU_SLICES=1 (the model
# as torch runs it) leaves torch's threads alone.


def one_intra_op_thread() -> bool:
    """Put this thread on one torch intra-op thread (see the NOTE above); False while torch is not
    imported yet (asked again at the next batch)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    if os.environ.get(SLICES_ENV, "").strip() != "1":
        torch.set_num_threads(1)
    return True


def _is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _outputs(batch: list[Ready]) -> Loaded:
    """The batch's loaded values, with their stacked form when they are consecutive rows of
    one part (a view of its slab)."""
    first = batch[0]
    stacked = None
    if first.part is not None and all(
        r.part is first.part and r.row == first.row + n for n, r in enumerate(batch)
    ):
        stacked = first.part.stacked(first.row, len(batch))
    return Loaded([r.value for r in batch], stacked)


@dataclass(frozen=True)
class TimedCall:
    """A dump function timed where it runs, for the run's trace: returns when it ran."""

    fn: Callable[..., Any]

    def __call__(self, *args: Any) -> Timed:
        start = now()
        self.fn(*args)
        return Timed(os.getpid(), start, now())


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
