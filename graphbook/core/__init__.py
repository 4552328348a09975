"""Graphbook 0.13's import paths (`graphbook.core.steps`, ...) for node files written for it."""

from graphbook.core import resources as resources
from graphbook.core import steps as steps
from graphbook.core import utils as utils
from graphbook.decorators import batch, event, output, param, prompt, resource, source, step
from graphbook.logs import log
from graphbook.script_graph import DefaultExecutor, Graph

__all__ = [
    "DefaultExecutor",
    "Graph",
    "batch",
    "event",
    "log",
    "output",
    "param",
    "prompt",
    "resource",
    "resources",
    "source",
    "step",
    "steps",
    "utils",
]
