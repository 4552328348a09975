"""What the Ray pool tells a run's log, each once: warm actors attached to, where dump functions
run, the object store spilling, nodes struck off, and what it did with its actors."""

from __future__ import annotations

import logging
import time
from types import ModuleType

from graphbook.engine.pool import Notice, NoticeLevel
from graphbook.engine.ray.nodes import DRIVER, Nodes, dumps_notice

logger = logging.getLogger(__name__)

SPILL_CHECK = 10.0
"""Seconds between looks at how much Ray's object store has spilled to disk."""
SPILLED = (
    "Ray's object store is full and has spilled {mib:.0f} MiB to disk during this run, which "
    "slows it down (6x, measured): fewer dicts in flight help (a smaller batch size, fewer "
    "--workers), or more object store memory (ray start --object-store-memory BYTES)"
)
CLIENT = "not this machine unless it is a node of the cluster"
"""Where a Ray Client driver's files land (its driver runs on the node that serves it)."""


class Notices:
    """The pool's lines for the run's log, until `take` hands them to the executor."""

    def __init__(self, ray: ModuleType, nodes: Nodes) -> None:
        self._nodes = nodes
        self._pending: list[Notice] = []
        self._told_struck: set[str] = set()
        """The nodes struck off that a run's log was told of."""
        self._told_dumps = False
        """Whether this run's log was told where dump functions run."""
        self._spill = Spill(ray)

    def say(self, text: str, level: NoticeLevel = "info") -> None:
        """A line for the run's log, and for this process's log."""
        logger.log(logging.WARNING if level == "warning" else logging.INFO, text)
        self.add(text, level)

    def add(self, text: str, level: NoticeLevel = "info") -> None:
        """A line for the run's log only."""
        self._pending.append(Notice(level, text))

    def take(self) -> list[Notice]:
        """The lines not handed out yet, with the nodes struck off since the last time."""
        for node_id, why in self._nodes.struck.items():
            if node_id not in self._told_struck:
                self._told_struck.add(node_id)
                node = self._nodes.get(node_id)
                where = node.describe() if node is not None else f"Ray node {node_id[:8]}"
                self.add(f"{where} is not used any more: {why}", "warning")
        notices, self._pending = self._pending, []
        return notices

    def tell_dumps(self, dumps: str, driver_node: str, client: str | None) -> None:
        """Once a run: on a cluster of several nodes, where its dump functions run (`client`:
        the address of the Ray Client server, whose node is the driver's)."""
        if self._told_dumps or len(self._nodes.refresh()) < 2:
            return
        self._told_dumps = True
        notice = dumps_notice(dumps, self._nodes.get(driver_node))
        if client is not None and dumps == DRIVER:
            notice += f"; through Ray Client that is the node that serves {client}, {CLIENT}"
        self.say(notice)

    def check_spill(self) -> None:
        spilled = self._spill.news()
        if spilled:
            self.say(spilled, "warning")

    def new_run(self) -> None:
        """A run ended: the next one is told of its own spilling, and of where dumps run."""
        self._spill.rearm()
        self._told_dumps = False


class Spill:
    """Whether Ray's object store has spilled since the pool was made: looked at every
    SPILL_CHECK seconds while work is out, said once."""

    def __init__(self, ray: ModuleType) -> None:
        self._ray = ray
        self._said = False
        self._looked = time.monotonic()
        self._before = self._spilled()

    def rearm(self) -> None:
        if self._said:
            self._said, self._before = False, self._spilled()

    def news(self) -> str | None:
        if self._said or self._before is None or time.monotonic() - self._looked < SPILL_CHECK:
            return None
        self._looked = time.monotonic()
        now = self._spilled()
        if now is None or now <= self._before:
            return None
        self._said = True
        return SPILLED.format(mib=(now - self._before) / 2**20)

    def _spilled(self) -> int | None:
        """Bytes the cluster's object stores have spilled so far (None: Ray does not say)."""
        try:
            from ray._private import internal_api, state

            reply = internal_api.get_memory_info_reply(  # type: ignore[no-untyped-call]
                state.state, timeout_seconds=2.0
            )
            return int(reply.store_stats.spilled_bytes_total)
        except Exception:
            return None


def attached_notice(count: int, address: str | None) -> str:
    """The run's log line for the warm actors a pool attached to as it started."""
    actors = "actor" if count == 1 else "actors"
    where = address or "this Ray"
    return f"attached to {count} warm Ray {actors} on {where}, kept by an earlier run"


__all__ = ["Notices", "Spill", "attached_notice"]
