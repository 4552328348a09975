"""The small exception hierarchy every Graphbook error belongs to."""

from __future__ import annotations

from dataclasses import dataclass


class GraphbookError(Exception):
    """Base class of all errors raised by Graphbook itself."""


class NodeDefinitionError(GraphbookError):
    """A node's code declares something impossible (bad decorator use, bad Parameters)."""


class ParamError(GraphbookError):
    """A parameter value does not fit its declared type."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a workflow, attached to the node it belongs to."""

    node_id: str | None
    message: str
    fix: str = ""

    def __str__(self) -> str:
        where = f"node {self.node_id!r}: " if self.node_id else ""
        hint = f" ({self.fix})" if self.fix else ""
        return f"{where}{self.message}{hint}"


class RunTargetError(GraphbookError, ValueError):
    """The node a run was asked to run up to (or to run again) cannot be one: the message says
    why (graph.py's `target_problem`)."""


class WorkflowError(GraphbookError):
    """A workflow cannot run; `problems` lists every reason, each naming its node."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"workflow has {len(self.problems)} problem(s):\n{lines}")


class WorkflowFormatError(GraphbookError):
    """A workflow file is not valid JSON or not in a format Graphbook reads."""


@dataclass(frozen=True)
class LoadFailure:
    """A node file that could not be imported, with the traceback that says why."""

    path: str
    error: str
    traceback: str
