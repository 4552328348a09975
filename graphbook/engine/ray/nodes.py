"""The nodes of a Ray cluster as the Ray pool sees them: where to place each actor, and whether
an actor that died was lost with its node (or never started) rather than killed by its task.

Ray's `SPREAD` is best-effort: every actor of a pool could land on one node, and an actor that
replaced one on a node that was dying went to that same node (Ray had not noticed yet), was
cancelled before it ran, and its task was blamed. So each actor is pinned to a node, in turn
over the nodes that can run it, and a node is struck off when an actor of the pool is lost with
it (its raylet no longer answers) or cannot start on it (graphbook is not installed there).
Work lost that way is not the items' fault: it runs again on another node.

Dump actors go to the driver's node by default (`DRIVER`), so the files a `dump_fn` writes
land on the driver's disk; `anywhere` deals them over the nodes as load actors are.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import socket
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

DRIVER = "driver"
"""Dump actors on the driver's node: what dump functions write lands on the driver's disk."""
ANYWHERE = "anywhere"
"""Dump actors on any node, in turn: outputs go to shared storage or remote URIs."""
DUMPS = (DRIVER, ANYWHERE)
"""Where dump actors may run (`RayBackend.dumps`, `--ray-dumps`)."""

PROBE_TIMEOUT = 2.0
"""Seconds a raylet has to accept a connection before its node counts as lost."""
NODE_LOST = ("node has died", "node died", "never ran", "cancelled before it started")
"""Words of Ray's errors for an actor lost with its node or never started."""


@dataclass(frozen=True)
class Node:
    id: str
    host: str
    raylet: tuple[str, int] | None
    """Where its raylet listens, or None when unknown (it is then not probed)."""

    def describe(self) -> str:
        return f"Ray node {self.id[:8]} on {self.host}"


@dataclass
class Nodes:
    """The cluster's live nodes, dealt to actors in turn, minus the ones struck off."""

    ray: Any
    probe: bool = True
    """Whether a raylet can be reached from here (not through Ray Client)."""
    struck: dict[str, str] = field(default_factory=dict)
    """Node id -> why no actor goes there any more."""
    _known: dict[str, Node] = field(default_factory=dict)
    _turn: itertools.count[int] = field(default_factory=itertools.count)

    def refresh(self) -> list[Node]:
        """The live nodes that are not struck off, as Ray reports them now."""
        live = []
        for info in self.ray.nodes():
            if not info.get("Alive"):
                continue
            raylet = (info.get("NodeManagerAddress", ""), int(info.get("NodeManagerPort") or 0))
            node = Node(info["NodeID"], info.get("NodeManagerHostname", "?"), raylet)
            self._known[node.id] = node
            if node.id not in self.struck:
                live.append(node)
        return live

    def next(self) -> Node | None:
        """The node for the next actor, in turn; None when every node is struck off."""
        live = self.refresh()
        if not live:
            return None
        return live[next(self._turn) % len(live)]

    def fewest(
        self, count: dict[str, int], cpus: float, room: dict[str, float] | None
    ) -> Node | None:
        """The node for a new actor that reserves `cpus`: of the live nodes with room for it
        (all of them when it reserves none, or room is not known), the one with the fewest of
        its kind (`count` by node id), in turn among equals; None when none has room (Ray
        then places it once some node has: an autoscaler adds one for it)."""
        live = self.refresh()
        if cpus > 0 and room is not None:
            live = [node for node in live if room.get(node.id, 0.0) >= cpus]
        if not live:
            return None
        turn = next(self._turn)
        order = live[turn % len(live) :] + live[: turn % len(live)]
        return min(order, key=lambda node: count.get(node.id, 0))

    def room(self) -> dict[str, float] | None:
        """The CPUs free on each live node (node id -> CPUs) as Ray counts them now (a little
        behind the actors just asked for); None when Ray does not say (Ray Client)."""
        try:
            from ray._private import state

            free = state.available_resources_per_node()  # type: ignore[no-untyped-call]
        except Exception:
            return None
        return {node_id: float(left.get("CPU", 0.0)) for node_id, left in free.items()}

    def at(self, node_id: str) -> Node | None:
        """The node `node_id` (the driver's, for dump actors) if it is live and not struck
        off, else None."""
        return next((node for node in self.refresh() if node.id == node_id), None)

    def strategy(self, node: Node) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        return NodeAffinitySchedulingStrategy(node.id, soft=False)

    def get(self, node_id: str) -> Node | None:
        return self._known.get(node_id)

    def strike(self, node: Node, why: str) -> None:
        if node.id not in self.struck:
            logger.warning("%s is not used any more: %s", node.describe(), why)
        self.struck[node.id] = why

    def lost(self, node: Node, exc: BaseException) -> bool:
        """Whether an actor on `node` that died with `exc` was lost with its node, or never
        started there: then its tasks are innocent, and the node is struck off."""
        text = str(exc)
        if getattr(exc, "actor_init_failed", False):
            self.strike(node, f"an actor could not start there: {first_line(text)}")
            return True
        if any(words in text for words in NODE_LOST) or not self._alive(node):
            self.strike(node, "it died (its raylet does not answer)")
            return True
        return False

    def _alive(self, node: Node) -> bool:
        for info in self.ray.nodes():
            if info.get("NodeID") == node.id and not info.get("Alive"):
                return False
        if not self.probe or node.raylet is None or not node.raylet[1]:
            return True
        with contextlib.suppress(OSError):
            socket.create_connection(node.raylet, timeout=PROBE_TIMEOUT).close()
            return True
        return False


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    useful = [line for line in lines if "Error" in line or "error" in line]
    return (useful or lines or [""])[-1][:300]


def dumps_problem(where: str) -> str | None:
    """Why `where` is not a place for dump actors, saying what is; None when it is one."""
    if where in DUMPS:
        return None
    return f"dump actors run on {' or '.join(map(repr, DUMPS))}, not {where!r}"


def dumps_notice(where: str, driver: Node | None) -> str:
    """The line the run's log shows once: where dump functions run, so where files land."""
    if where == ANYWHERE:
        return (
            "dump functions run on any node of the Ray cluster (--ray-dumps anywhere): the "
            "files they write land on the node that ran them, so write to shared storage or "
            "remote URIs"
        )
    on = driver.describe() if driver is not None else "the driver's Ray node"
    return (
        f"dump functions run on the driver's node ({on}): the files they write land on its "
        "disk (--ray-dumps anywhere lets them run on every node)"
    )


__all__ = ["ANYWHERE", "DRIVER", "DUMPS", "Node", "Nodes", "dumps_notice", "dumps_problem"]
