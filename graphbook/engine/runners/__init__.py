"""How each kind of node runs inside the executor: sources, steps, batch steps and prompts
(one module each), and `runner_for`, which picks a node's runner by its kind."""

from __future__ import annotations

from typing import Any

from graphbook.engine.runners.base import (
    CHUNK,
    CHUNK_SECONDS,
    INBOX_CAPACITY,
    PreviewFn,
    Prompter,
    RunAborted,
    RunContext,
    Runner,
)
from graphbook.engine.runners.batches import BatchRunner, dump_calls
from graphbook.engine.runners.prompts import PromptRunner, json_data
from graphbook.engine.runners.sources import ReplayRunner, SourceRunner
from graphbook.graph import GraphNode
from graphbook.lifecycle import BatchStep, PromptStep, SourceStep, Step

__all__ = [
    "CHUNK",
    "CHUNK_SECONDS",
    "INBOX_CAPACITY",
    "PreviewFn",
    "Prompter",
    "ReplayRunner",
    "RunAborted",
    "RunContext",
    "Runner",
    "dump_calls",
    "json_data",
    "runner_for",
]


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
