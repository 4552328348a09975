"""Graphbook 0.13's `graphbook.core.steps`: our steps, the shipped nodes and `StepOutput`."""

from graphbook.builtins import Copy, DumpJSONL, LoadJSONL, Split
from graphbook.logs import log
from graphbook.steps import BatchStep, GeneratorSourceStep, PromptStep, SourceStep, Step

StepOutput = dict[str, list[dict]]  # type: ignore[type-arg]

__all__ = [
    "BatchStep",
    "Copy",
    "DumpJSONL",
    "GeneratorSourceStep",
    "LoadJSONL",
    "PromptStep",
    "SourceStep",
    "Split",
    "Step",
    "StepOutput",
    "log",
]
