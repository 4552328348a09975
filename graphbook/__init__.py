"""Graphbook: build, watch and run ML data pipelines as graphs of Python nodes.

Every public name here is loaded when first used (`__getattr__` below), so importing one part
of the package (`graphbook.events`) loads that part only, not the engine; Graphbook 0.13's names
(`graphbook.Graph`, `graphbook.Note`, `graphbook.utils`) likewise load the 0.13 layer
(compat013/) only when a script uses them.

`graphbook.batch` is the `@batch` decorator. The batch-processing API is graphbook.batch_process;
its old path (`from graphbook.batch import torch_batch_process`) still imports it (OldPath).
"""

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names __getattr__ gives, for the type checker
    from graphbook import prompts as prompts
    from graphbook import resources as resources
    from graphbook import steps as steps
    from graphbook import utils as utils
    from graphbook.about import __version__ as __version__
    from graphbook.compat013.note import Note as Note
    from graphbook.compat013.script import Graph as Graph
    from graphbook.decorators import batch as batch
    from graphbook.decorators import event as event
    from graphbook.decorators import output as output
    from graphbook.decorators import param as param
    from graphbook.decorators import prompt as prompt
    from graphbook.decorators import resource as resource
    from graphbook.decorators import source as source
    from graphbook.decorators import step as step
    from graphbook.engine.executor import Executor as Executor
    from graphbook.engine.executor import RayBackend as RayBackend
    from graphbook.engine.executor import RunControl as RunControl
    from graphbook.engine.executor import RunResult as RunResult
    from graphbook.engine.executor import run_workflow as run_workflow
    from graphbook.engine.feed import to_device as to_device
    from graphbook.errors import GraphbookError as GraphbookError
    from graphbook.errors import Problem as Problem
    from graphbook.errors import WorkflowError as WorkflowError
    from graphbook.errors import WorkflowFormatError as WorkflowFormatError
    from graphbook.events import Event as Event
    from graphbook.graph import build_graph as build_graph
    from graphbook.logs import log as log
    from graphbook.logs import log_metric as log_metric
    from graphbook.logs import log_metrics as log_metrics
    from graphbook.registry import Registry as Registry
    from graphbook.stacking import stack as stack
    from graphbook.workflow import Workflow as Workflow

PUBLIC: dict[str, tuple[str, str | None]] = {
    "Event": ("graphbook.events", "Event"),
    "Executor": ("graphbook.engine.executor", "Executor"),
    "Graph": ("graphbook.compat013.script", "Graph"),
    "GraphbookError": ("graphbook.errors", "GraphbookError"),
    "Note": ("graphbook.compat013.note", "Note"),
    "Problem": ("graphbook.errors", "Problem"),
    "RayBackend": ("graphbook.engine.executor", "RayBackend"),
    "Registry": ("graphbook.registry", "Registry"),
    "RunControl": ("graphbook.engine.executor", "RunControl"),
    "RunResult": ("graphbook.engine.executor", "RunResult"),
    "Workflow": ("graphbook.workflow", "Workflow"),
    "WorkflowError": ("graphbook.errors", "WorkflowError"),
    "WorkflowFormatError": ("graphbook.errors", "WorkflowFormatError"),
    "__version__": ("graphbook.about", "__version__"),
    "batch": ("graphbook.decorators", "batch"),
    "build_graph": ("graphbook.graph", "build_graph"),
    "event": ("graphbook.decorators", "event"),
    "log": ("graphbook.logs", "log"),
    "log_metric": ("graphbook.logs", "log_metric"),
    "log_metrics": ("graphbook.logs", "log_metrics"),
    "output": ("graphbook.decorators", "output"),
    "param": ("graphbook.decorators", "param"),
    "prompt": ("graphbook.decorators", "prompt"),
    "prompts": ("graphbook.prompts", None),
    "resource": ("graphbook.decorators", "resource"),
    "resources": ("graphbook.resources", None),
    "run_workflow": ("graphbook.engine.executor", "run_workflow"),
    "to_device": ("graphbook.engine.feed", "to_device"),
    "source": ("graphbook.decorators", "source"),
    "stack": ("graphbook.stacking", "stack"),
    "step": ("graphbook.decorators", "step"),
    "steps": ("graphbook.steps", None),
    "utils": ("graphbook.utils", None),
}
"""Each public name: the module that defines it, and its name there (None: the module itself)."""

__all__ = sorted(name for name in PUBLIC if not name.startswith("_"))


def __getattr__(name: str) -> Any:
    if name not in PUBLIC:
        raise AttributeError(f"module 'graphbook' has no attribute {name!r}")
    module, attribute = PUBLIC[name]
    found = import_module(module)
    value = found if attribute is None else getattr(found, attribute)
    globals()[name] = value  # found once; the next use is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *PUBLIC})


class OldPath(ModuleType):
    """A module path kept for code written against an earlier Graphbook: its names are those of
    the module it now lives at, loaded on first use. It stands in `sys.modules` (so importing
    it never sets the package's attribute of that name: `graphbook.batch` stays the decorator)."""

    def __init__(self, name: str, target: str) -> None:
        super().__init__(name, f"`{name}`, now {target}")
        self.target = target

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":
            raise AttributeError(name)
        return getattr(import_module(self.target), name)


sys.modules.setdefault(f"{__name__}.batch", OldPath(f"{__name__}.batch", "graphbook.batch_process"))
