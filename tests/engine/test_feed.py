"""Feeding a GPU: pinned buffers reused in turn and bounded, batches moved ahead of use, a CUDA
model taking CPU batches. The ring and the prefetching are tested here on the CPU; the CUDA
paths run only where CUDA is present."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

import pytest
import torch

from graphbook import Workflow, batch, run_workflow, source, step
from graphbook.engine.devices import on_cuda, prepare
from graphbook.engine.feed import (
    MARK,
    DeviceFeed,
    Fed,
    PinnedRing,
    feed_on_device,
    key_of,
    prefetch,
    to_device,
)
from graphbook.stacking import stack

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


class Copied:
    """Stands in for a CUDA event: notes when the ring had to wait for it."""

    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def synchronize(self) -> None:
        self.log.append(f"waited {self.name}")


def test_the_ring_reuses_its_buffers_in_turn_and_waits_for_the_copy_out_of_each() -> None:
    ring = PinnedRing(slots=2, pin=False)
    log: list[str] = []
    pointers = []
    for n in range(5):
        staged, slot = ring.stage(torch.full((4, 3), float(n)))
        assert torch.equal(staged, torch.full((4, 3), float(n)))
        pointers.append(staged.data_ptr())
        ring.release(slot, Copied(log, f"batch {n}"))
    # batch 2 goes where batch 0 was, once batch 0's copy is done: never more than 2 in flight
    assert log == ["waited batch 0", "waited batch 1", "waited batch 2"]
    assert ring.waits == 3
    assert pointers[0] == pointers[2] == pointers[4] and pointers[1] == pointers[3]
    assert pointers[0] != pointers[1]


def test_the_ring_stacks_items_straight_into_a_buffer_that_grows_to_the_largest_batch() -> None:
    ring = PinnedRing(slots=1, pin=False)
    items = [torch.randn(3, 8, 8) for _ in range(5)]
    staged, _ = ring.stage(items)
    assert torch.equal(staged, torch.stack(items))
    first = staged.data_ptr()
    smaller, _ = ring.stage(items[:2])
    assert smaller.shape == (2, 3, 8, 8) and smaller.data_ptr() == first
    larger, _ = ring.stage([*items, *items])
    assert torch.equal(larger, torch.stack([*items, *items]))
    halves, _ = ring.stage([i.half() for i in items])  # another dtype: another buffer
    assert halves.dtype == torch.float16


def test_the_ring_refuses_what_it_cannot_stage() -> None:
    with pytest.raises(ValueError, match="1 slot or more"):
        PinnedRing(slots=0, pin=False)
    with pytest.raises(ValueError, match="empty batch"):
        PinnedRing(pin=False).stage([])


def test_prefetch_moves_the_next_batch_before_handing_out_the_current() -> None:
    log: list[str] = []

    def move(batch: int) -> int:
        log.append(f"move {batch}")
        return batch * 10

    for moved in prefetch(range(4), move, ahead=1):
        log.append(f"use {moved // 10}")
    assert log == ["move 0", "move 1", "use 0", "move 2", "use 1", "move 3", "use 2", "use 3"]
    assert list(prefetch(range(3), lambda b: b, ahead=0)) == [0, 1, 2]
    with pytest.raises(ValueError, match="0 or more"):
        list(prefetch(range(3), lambda b: b, ahead=-1))


class Feed:
    def __init__(self) -> None:
        self.moved: list[torch.Tensor] = []

    def to_device(self, batch: torch.Tensor) -> torch.Tensor:
        self.moved.append(batch)
        return batch * 2


def test_a_fed_forward_sends_cpu_batches_through_the_feed_and_nothing_else() -> None:
    feed = Feed()
    seen: list[Any] = []

    def forward(x: Any, scale: int = 1) -> Any:
        seen.append(x)
        return x

    fed = Fed(forward, torch.device("cuda"))
    fed.feed = feed  # made on the first CPU batch where CUDA exists
    x = torch.ones(2, 3)
    assert torch.equal(fed(x, scale=3), x * 2)
    assert fed("not a tensor") == "not a tensor"
    assert len(feed.moved) == 1 and seen[1] == "not a tensor"


def scale(x: Any) -> Any:
    return x


def test_a_fed_forward_pickles_without_its_feed() -> None:
    fed = Fed(scale, torch.device("cuda", 1), slots=3)
    fed.feed = Feed()
    copy = pickle.loads(pickle.dumps(fed))
    assert (copy.forward, copy.device, copy.slots, copy.feed) == (scale, fed.device, 3, None)


def test_a_cpu_model_is_not_fed_and_a_device_feed_wants_cuda() -> None:
    model = prepare(torch.nn.Linear(3, 2), {"device": "cpu", "cpu_slices": 1})
    assert not on_cuda(model) and MARK not in model.__dict__
    with pytest.raises(ValueError, match="CUDA device"):
        DeviceFeed("cpu")


@cuda
def test_a_cuda_model_resource_takes_cpu_batches_through_pinned_memory() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    x = torch.randn(32, 16)
    expected = model(x)
    prepare(model, {"device": "cuda"})
    assert MARK in model.__dict__
    with torch.no_grad():
        outputs = [model(x) for _ in range(5)]  # more batches than pinned buffers
        on_device = model(x.cuda())
    assert all(torch.allclose(o.cpu(), expected, atol=1e-5) for o in outputs)
    assert torch.allclose(on_device.cpu(), expected, atol=1e-5)
    feed = model.__dict__[MARK].feed
    assert feed.ring.slots == 3 and feed.ring.waits == 2


@cuda
def test_a_device_feed_with_prefetch_gives_every_batch_in_order() -> None:
    feed = DeviceFeed("cuda")
    batches = [torch.full((8, 4), float(n)) for n in range(6)]
    moved = list(prefetch(batches, feed.to_device))
    assert [float(m[0, 0]) for m in moved] == [float(n) for n in range(6)]
    assert all(m.is_cuda for m in moved)


@cuda
def test_feed_on_device_is_idempotent() -> None:
    model = torch.nn.Linear(3, 2).cuda()
    assert feed_on_device(feed_on_device(model)) is model


def test_the_thread_that_feeds_a_gpu_copies_on_one_intra_op_thread(monkeypatch: Any) -> None:
    """Stacking and staging are copies; spread over a thread per core they wait on cores the
    worker pool keeps busy (NOTE [ One thread feeds the GPU ])."""
    import threading

    import graphbook.engine.feed as feed

    class Fake:
        def __init__(self, device: Any, *args: Any) -> None:
            self.device = device

        def to_device(self, batch: torch.Tensor) -> torch.Tensor:
            return batch

    monkeypatch.setattr(feed, "DeviceFeed", Fake)
    monkeypatch.setattr(feed, "_feeds", {})
    fed = Fed(lambda batch: batch * 2, torch.device("cpu"))
    seen: list[int] = []

    def feeding() -> None:
        torch.set_num_threads(4)
        fed(torch.ones(2, 3))
        seen.append(torch.get_num_threads())

    others = torch.get_num_threads()
    thread = threading.Thread(target=feeding)
    thread.start()
    thread.join()
    assert seen == [1]
    assert torch.get_num_threads() == others  # only the feeding thread


class Copies:
    """A copier on the CPU: the "device" tensor is a clone; it notes each copy and hand-out."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def copy(self, host: torch.Tensor) -> tuple[torch.Tensor, Any]:
        self.log.append(f"copy {int(host.flatten()[0])}")
        return host.clone(), Copied(self.log, f"copy {int(host.flatten()[0])}")

    def hand_out(self, moved: torch.Tensor, done: Any) -> None:
        self.log.append(f"use {int(moved.flatten()[0])}")


def test_a_batch_sent_ahead_is_handed_out_without_a_second_copy() -> None:
    copies = Copies()
    feed = DeviceFeed("cuda:0", copier=copies, pin=False)
    batches = [torch.full((2, 3), float(n)) for n in range(4)]
    feed.ahead(batches[1])
    feed.ahead(batches[1])  # once is enough
    moved = feed.to_device(batches[0])  # not sent ahead: copied now
    assert torch.equal(feed.to_device(batches[1]), batches[1])
    assert torch.equal(moved, batches[0]) and feed.hits == 1
    assert copies.log == ["copy 1", "copy 0", "use 0", "use 1"]
    for each in batches:
        feed.ahead(each)
    assert len(feed._ahead) == feed.ring.slots, "what waits ahead is bounded by the ring"
    feed.forget(batches[3])
    assert key_of(batches[3]) not in feed._ahead


SENT: list[tuple[int, float]] = []


def square(i: int) -> torch.Tensor:
    return torch.full((4, 4), float(i))


@step("Tests/Numbers")
@source()
def numbers(ctx: Any) -> Iterator[dict[str, Any]]:
    yield {"i": list(range(48))}  # one dict: every batch is loaded before the first runs


@step("Tests/OnDevice")
@batch(8, "i", load_fn=square)
def on_device(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None:
    moved = to_device(stack(outputs), "cuda:0")
    SENT.append((items[0], float(moved[0, 0, 0])))


def test_a_batch_step_sends_its_next_batches_to_the_device_before_running_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import graphbook.engine.feed as feed

    copies = Copies()
    device = DeviceFeed("cuda:0", copier=copies, pin=False)
    monkeypatch.setattr(feed, "_feeds", {device.device: device})
    SENT.clear()
    flow = Workflow()
    flow.connect(flow.add(numbers), flow.add(on_device))
    assert run_workflow(flow, workers=0).ok  # inline: which batches are loaded is certain
    assert [(n, float(n)) for n in range(0, 48, 8)] == SENT, "each batch its own values"
    assert device.hits == 4, copies.log  # batches 3 to 6: from the second on, two ahead
    first_ahead = copies.log.index("copy 16")
    assert first_ahead < copies.log.index("use 8"), "batch 3 copied before batch 2 ran"
