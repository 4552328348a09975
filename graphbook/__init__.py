"""Graphbook: build, watch and run ML data pipelines as graphs of Python nodes.

Graphbook 0.13's names (`graphbook.Graph`, `graphbook.Note`, `graphbook.utils`) are imported
from compat013/ when first used, so `import graphbook` does not load the 0.13 layer."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from graphbook import prompts as prompts
from graphbook import resources as resources
from graphbook import steps as steps
from graphbook.decorators import batch, event, output, param, prompt, resource, source, step
from graphbook.engine.executor import Executor, RayBackend, RunControl, RunResult, run_workflow
from graphbook.errors import GraphbookError, Problem, WorkflowError, WorkflowFormatError
from graphbook.events import Event
from graphbook.graph import build_graph
from graphbook.logs import log, log_metric, log_metrics
from graphbook.registry import Registry
from graphbook.workflow import Workflow

if TYPE_CHECKING:  # the names __getattr__ gives, for the type checker
    from graphbook import utils as utils
    from graphbook.compat013.note import Note as Note
    from graphbook.compat013.script import Graph as Graph

__version__ = "0.1.0"

__all__ = [
    "Event",
    "Executor",
    "Graph",
    "GraphbookError",
    "Note",
    "Problem",
    "RayBackend",
    "Registry",
    "RunControl",
    "RunResult",
    "Workflow",
    "WorkflowError",
    "WorkflowFormatError",
    "batch",
    "build_graph",
    "event",
    "log",
    "log_metric",
    "log_metrics",
    "output",
    "param",
    "prompt",
    "prompts",
    "resource",
    "resources",
    "run_workflow",
    "source",
    "step",
    "steps",
    "utils",
]

COMPAT013 = {
    "Graph": ("graphbook.compat013.script", "Graph"),
    "Note": ("graphbook.compat013.note", "Note"),
    "utils": ("graphbook.utils", None),
}
"""Graphbook 0.13's names on the package: the module that defines each (and its name there;
None: the module itself)."""


def __getattr__(name: str) -> Any:
    if name not in COMPAT013:
        raise AttributeError(f"module 'graphbook' has no attribute {name!r}")
    module, attribute = COMPAT013[name]
    found = import_module(module)
    return found if attribute is None else getattr(found, attribute)
