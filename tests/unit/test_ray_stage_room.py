"""What a stage's replicas still starting take from the room a new reservation sees (no Ray:
the driver's bookkeeping only). A GPU machine cannot be had here, so the GPU case is checked on
that bookkeeping."""

from __future__ import annotations

from graphbook.engine.ray.stage import RayStage, _fits, _Replica


def stage_with(gpu: bool, *replicas: _Replica) -> RayStage:
    stage = RayStage.__new__(RayStage)  # its replicas and kind, without a pool
    stage.gpu, stage.replicas = gpu, list(replicas)
    return stage


def replica(placed: bool, reserves: bool = True) -> _Replica:
    placing = None if placed else object()
    return _Replica(None, None, object(), kind=("", False, reserves), placing=placing)


def test_replicas_not_yet_placed_that_reserve_a_cpu_are_taken_from_the_room() -> None:
    stage = stage_with(False, replica(placed=False), replica(placed=True), replica(False, False))
    assert stage.asked() == [(None, 1.0)], "one not placed, reserving a CPU"


def test_replicas_given_a_gpu_take_no_cpu_from_the_room() -> None:
    assert stage_with(True, replica(placed=False)).asked() == []


def test_a_replica_takes_a_cpu_from_the_room_only_where_one_is_free() -> None:
    room = {"a": 1.0, "b": 0.5}
    assert _fits(room, "a") and room["a"] == 0.0
    assert not _fits(room, "a") and not _fits(room, "b") and not _fits(room, "c")
    assert _fits(None, "a"), "room unknown: it reserves"
