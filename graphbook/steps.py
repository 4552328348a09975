"""`graphbook.steps`: the step classes a node file subclasses (defined in lifecycle.py), and the
names Graphbook 0.13's step module also held (`gb.steps.Split`, `gb.steps.AsyncStep`), which are
found in graphbook/compat013/steps.py on first use.

A face for users: Graphbook's own modules import lifecycle.py, never this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphbook.lifecycle import (
    BatchStep,
    Data,
    GeneratorSourceStep,
    PromptStep,
    Routed,
    RouteError,
    SourceStep,
    Step,
    fork,
    node_name,
)

if TYPE_CHECKING:
    from graphbook.compat013.steps import AsyncStep as AsyncStep
    from graphbook.compat013.steps import Copy as Copy
    from graphbook.compat013.steps import DumpJSONL as DumpJSONL
    from graphbook.compat013.steps import LoadJSONL as LoadJSONL
    from graphbook.compat013.steps import Split as Split
    from graphbook.compat013.steps import SplitByItems as SplitByItems
    from graphbook.compat013.steps import SplitItemField as SplitItemField
    from graphbook.compat013.steps import StepOutput as StepOutput

__all__ = [
    "BatchStep",
    "Data",
    "GeneratorSourceStep",
    "PromptStep",
    "RouteError",
    "Routed",
    "SourceStep",
    "Step",
    "fork",
    "node_name",
]

STEPS_013 = frozenset(
    (
        "AsyncStep",
        "Copy",
        "DumpJSONL",
        "LoadJSONL",
        "Split",
        "SplitByItems",
        "SplitItemField",
        "StepOutput",
    )
)
"""Names Graphbook 0.13's step module also held; they live in graphbook/nodes/core.py and
graphbook/compat013/steps.py."""


def __getattr__(name: str) -> Any:
    if name in STEPS_013:
        from graphbook.compat013 import steps as steps013

        return getattr(steps013, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
