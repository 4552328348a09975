"""Graphbook: build, watch and run ML data pipelines as graphs of Python nodes."""

from graphbook import prompts as prompts
from graphbook import resources as resources
from graphbook import steps as steps
from graphbook import utils as utils
from graphbook.compat013.note import Note
from graphbook.compat013.script import Graph
from graphbook.decorators import batch, event, output, param, prompt, resource, source, step
from graphbook.engine.executor import Executor, RayBackend, RunControl, RunResult, run_workflow
from graphbook.errors import GraphbookError, Problem, WorkflowError, WorkflowFormatError
from graphbook.events import Event
from graphbook.graph import build_graph
from graphbook.logs import log, log_metric, log_metrics
from graphbook.registry import Registry
from graphbook.workflow import Workflow

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
