"""A node waiting for the resources it is built with: it holds what its inputs hand it (its
inbox fills, so what feeds it is held back as by any full inbox) and does nothing until the
executor builds it and puts its runner in its place (executor.py, `_GraphRun._arrive`)."""

from __future__ import annotations

from typing import Any

from graphbook.engine.runners.base import RunContext, Runner
from graphbook.graph import GraphNode


class Waiting(Runner[Any]):
    def __init__(self, node: GraphNode, run: RunContext) -> None:
        super().__init__(node, None, run)

    def ready(self) -> bool:
        return False

    def has_room(self) -> bool:
        return True

    def exhausted(self) -> bool:
        return False  # it ends when its runner does, or when the run ends

    def start(self) -> None:
        raise RuntimeError(f"node {self.id!r} is waiting for its resources: it cannot start")
