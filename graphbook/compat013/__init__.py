"""Graphbook 0.13 compatibility: what node files and scripts written for 0.13 import.

This package is the `graphbook.core` namespace of 0.13 (graphbook/core/ only re-exports it):
steps.py, resources.py, prompts.py and utils.py are 0.13's modules of those names, script.py
its Python workflows (`graphbook.Graph`). 0.13's workflow files are read by
graphbook/formats/graphbook013.py.
"""

from graphbook.compat013 import resources as resources
from graphbook.compat013 import steps as steps
from graphbook.compat013 import utils as utils
from graphbook.compat013.script import DefaultExecutor, Graph
from graphbook.decorators import batch, event, output, param, prompt, resource, source, step
from graphbook.logs import log

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
