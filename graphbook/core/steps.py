"""`graphbook.core.steps`, as Graphbook 0.13 node files import it."""

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
