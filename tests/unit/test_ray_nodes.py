"""Where the Ray pool puts a new actor, without Ray: the node with room and the fewest actors of
its kind, so a node that joins gets the next ones; none when no node has room."""

from __future__ import annotations

from typing import Any

from graphbook.engine.ray.nodes import Nodes


class FakeRay:
    """What `Nodes` asks of Ray: the cluster's nodes."""

    def __init__(self, *ids: str) -> None:
        self.ids = list(ids)

    def nodes(self) -> list[dict[str, Any]]:
        return [{"NodeID": i, "Alive": True, "NodeManagerHostname": f"host-{i}"} for i in self.ids]


def test_a_new_actor_goes_to_the_node_with_the_fewest_of_its_kind() -> None:
    ray = FakeRay("a", "b")
    nodes = Nodes(ray, probe=False)
    placed = [nodes.fewest({"a": 2, "b": 1}, 0.0, None) for _ in range(3)]
    assert {node.id for node in placed if node} == {"b"}
    ray.ids.append("c")  # a node joins
    joined = nodes.fewest({"a": 2, "b": 2}, 1.0, {"a": 4.0, "b": 4.0, "c": 4.0})
    assert joined is not None and joined.id == "c"


def test_equal_nodes_take_turns() -> None:
    nodes = Nodes(FakeRay("a", "b"), probe=False)
    turns = [nodes.fewest({}, 0.0, None) for _ in range(4)]
    assert [node.id for node in turns if node] == ["a", "b", "a", "b"]


def test_only_nodes_with_room_for_the_reservation_and_none_when_none_has() -> None:
    nodes = Nodes(FakeRay("a", "b"), probe=False)
    roomy = nodes.fewest({"b": 0, "a": 5}, 1.0, {"a": 2.0, "b": 0.5})
    assert roomy is not None and roomy.id == "a", "b has fewer actors but no room"
    assert nodes.fewest({}, 1.0, {"a": 0.0, "b": 0.5}) is None
    assert nodes.fewest({}, 0.0, {"a": 0.0, "b": 0.0}) is not None, "reserving none fits"
    nodes.strike(nodes.refresh()[0], "it died")
    assert [nodes.fewest({}, 0.0, None) for _ in range(2)] == [nodes.get("b")] * 2
