"""The Ray pool's sizing policy, on a clock of the test's own: grows while its actors are the
slowest stage, not while the consumer is; ends idle actors beyond the minimum; cancels an
actor that has not started once the work does not need it."""

from __future__ import annotations

from graphbook.engine.ray.sizing import (
    Decision,
    Limits,
    Load,
    Sizer,
    parse_limits,
    summary,
)

BUSY = Load(ready=2, starting=0, unfinished=8, idle=0)
"""Both actors working, six more tasks waiting for them."""
CALM = Load(ready=2, starting=0, unfinished=1, idle=1)


def run(sizer: Sizer, loads: list[Load], step: float = 0.1, cpus: float = 8) -> list[Decision]:
    return [sizer.observe(n * step, load, cpus) for n, load in enumerate(loads)]


def test_actors_that_stay_saturated_for_a_window_grow_by_one() -> None:
    decisions = run(Sizer(Limits(1, 4), window=1.0), [BUSY] * 12)
    assert [d.grow for d in decisions].count(True) == 1
    assert decisions.index(Decision(grow=True)) == 10, "after one window of 1 s, not before"


def test_a_slow_consumer_leaves_the_actors_idle_between_its_takes_so_they_do_not_grow() -> None:
    # the consumer takes a batch each second: the actors are busy for 0.2 s of it
    pattern = [BUSY, BUSY] + [Load(2, 0, 0, 2)] * 8
    decisions = run(Sizer(Limits(1, 4), window=1.0), pattern * 5)
    assert not any(d.grow for d in decisions)


def test_time_the_driver_spent_elsewhere_counts_only_if_the_actors_stayed_saturated() -> None:
    sizer = Sizer(Limits(1, 4), window=1.0)
    for n in range(5):  # tasks just handed out, then 2 s in the model: they were back long ago
        assert sizer.observe(n * 2.0, BUSY, 8) == Decision()
        assert sizer.observe(n * 2.0 + 1.99, CALM, 8) == Decision()


def test_no_growth_past_the_maximum_counting_actors_still_starting() -> None:
    at_most = Load(ready=4, starting=0, unfinished=20, idle=0)
    assert not any(d.grow for d in run(Sizer(Limits(1, 4)), [at_most] * 30))
    starting = Load(ready=2, starting=2, unfinished=20, idle=0)
    assert not any(d.grow or d.cancel for d in run(Sizer(Limits(1, 4)), [starting] * 30))


def test_growth_goes_on_while_an_actor_starts_if_there_is_work_for_one_more() -> None:
    work = Load(ready=2, starting=1, unfinished=20, idle=0)
    assert [d.grow for d in run(Sizer(Limits(1, 8)), [work] * 21)].count(True) == 2
    little = Load(ready=2, starting=1, unfinished=3, idle=0)
    assert not any(d.grow or d.cancel for d in run(Sizer(Limits(1, 8)), [little] * 30))


def test_without_a_maximum_the_cluster_s_cpus_now_are_the_maximum() -> None:
    three = Load(ready=3, starting=0, unfinished=20, idle=0)
    assert not any(d.grow for d in run(Sizer(Limits(1, None)), [three] * 30, cpus=3))
    assert any(d.grow for d in run(Sizer(Limits(1, None)), [three] * 30, cpus=4)), "a node joined"


def test_exactly_n_never_changes() -> None:
    sizer = Sizer(Limits.exactly(2), idle=1.0)
    decisions = run(sizer, [BUSY] * 30 + [Load(2, 0, 0, 2)] * 30)
    assert decisions == [Decision()] * 60


def test_an_actor_not_started_is_cancelled_once_the_work_no_longer_needs_it() -> None:
    waiting = Load(ready=1, starting=1, unfinished=5, idle=0)
    done = Load(ready=1, starting=1, unfinished=0, idle=1)
    decisions = run(Sizer(Limits(1, 4)), [waiting] * 20 + [done] * 12)
    assert not any(d.cancel for d in decisions[:20]), "kept while work waits for it"
    assert any(d.cancel for d in decisions[20:])


def test_the_minimum_is_never_cancelled_while_it_starts() -> None:
    starting = Load(ready=0, starting=2, unfinished=6, idle=0)
    assert not any(d.cancel for d in run(Sizer(Limits(2, 4)), [starting] * 30))


def test_idle_actors_beyond_the_minimum_end_one_at_a_time() -> None:
    sizer = Sizer(Limits(1, 4), idle=30.0)
    idle = Load(ready=3, starting=0, unfinished=0, idle=3)
    assert sizer.observe(0.0, idle, 8, idle_for=[29.0, 29.0, 29.0]) == Decision()
    assert sizer.observe(1.0, idle, 8, idle_for=[30.0, 30.0, 30.0]) == Decision(end=1)
    at_min = Load(ready=1, starting=0, unfinished=0, idle=1)
    assert sizer.observe(2.0, at_min, 8, idle_for=[99.0]) == Decision(), "the minimum stays"


def test_limits_are_read_from_min_colon_max() -> None:
    assert parse_limits("2:8") == Limits(2, 8)
    assert parse_limits("2:") == Limits(2, None)
    assert parse_limits(":8") == Limits(1, 8)
    assert parse_limits("3") == Limits.exactly(3)
    assert parse_limits("a:b") == "expected MIN:MAX actors (whole numbers, e.g. 1:8), got 'a:b'"
    assert parse_limits("0:4") == "the minimum of actors is 1 or more, got 0"
    assert parse_limits("5:2") == "the maximum of actors (2) is below the minimum (5)"


def test_the_summary_says_what_the_pool_did() -> None:
    assert summary("load", 2, 6, 2, 8) == "load actors: 2 -> 6 on 2 nodes (max 8)"
    assert summary("dump", 1, 1, 1, 1) == "dump actors: 1 on 1 node (max 1)"
