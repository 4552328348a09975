"""Graphbook 0.13's Python workflows: `g = graphbook.Graph()`, nodes added inside `@g()`.

```python
g = graphbook.Graph()

@g()
def _():
    numbers = g.step(GenerateNumbers)
    mean = g.step(CalcMean)
    mean.bind(numbers)            # numbers' "out" -> mean's input
    model = g.resource(Model)
    mean.param("model", model)    # a resource wired to a parameter

g.run()                           # or: graphbook run this_file.py
```

The graph is a `Workflow` underneath (`g.workflow`): it validates, runs and saves like any
other. A front end: `run()` shows the run in the terminal as `graphbook run` does.
"""

from __future__ import annotations

import inspect
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphbook.errors import GraphbookError, WorkflowFormatError
from graphbook.registry import spec_of
from graphbook.workflow import Edge, NodeRef, Workflow

GRAPH_GLOBAL = "_GRAPHBOOK_WORKFLOW_"
"""Where `@g()` leaves the graph in its module, as 0.13 did; `load_script` looks there."""


class ScriptNode:
    """A node added with `g.step` or `g.resource`: set parameters on it, bind it to others."""

    def __init__(self, graph: Graph, kind: Any, ref: NodeRef) -> None:
        self.graph = graph
        self.node = kind
        self.ref = ref

    @property
    def id(self) -> str:
        return self.ref.id

    def get(self) -> Any:
        return self.node

    def param(self, key: str, arg: Any) -> None:
        """Set parameter `key`; a resource node given here is wired to it."""
        workflow = self.graph.workflow
        if isinstance(arg, ScriptNode):
            workflow.edges.append(_resource_edge(arg, self, key))
        else:
            workflow.set(self.id, **{key: arg})

    def bind(self, src: ScriptNode, key: str = "out") -> None:
        """Feed this step with `src`'s output `key`."""
        outputs = spec_of(src.node).outputs
        if key not in outputs:
            raise ValueError(
                f"Pin {key!r} not found in available pins: {list(outputs)} for node "
                f"{spec_of(src.node).name}; bind to one of those outputs"
            )
        self.graph.workflow.connect(src.ref[key], self.ref)


def _resource_edge(resource: ScriptNode, target: ScriptNode, key: str) -> Edge:
    return Edge(resource.id, "resource", target.id, key)


class Graph:
    """A workflow written in Python as Graphbook 0.13 wrote it (see the module's docstring)."""

    def __init__(self) -> None:
        self.workflow = Workflow()
        self.nodes: list[ScriptNode] = []
        self.module_name: str | None = None

    @property
    def doc(self) -> str:
        return self.workflow.doc

    def step(self, n: Any) -> ScriptNode:
        """Add a step (a Step class or a decorated function)."""
        return self._add(n)

    def resource(self, n: Any) -> ScriptNode:
        """Add a resource (a Resource class or a decorated function)."""
        return self._add(n)

    def _add(self, kind: Any) -> ScriptNode:
        node = ScriptNode(self, kind, self.workflow.add(kind))
        self.nodes.append(node)
        return node

    def md(self, text: str) -> None:
        """The workflow's documentation (Markdown)."""
        self.workflow.doc = text

    def get_steps(self) -> list[ScriptNode]:
        return [n for n in self.nodes if not spec_of(n.node).is_resource]

    def get_resources(self) -> list[ScriptNode]:
        return [n for n in self.nodes if spec_of(n.node).is_resource]

    def save(self, path: Path | str) -> Path:
        """Write the workflow file (its node classes must then be in a node folder)."""
        return self.workflow.save(path)

    def __call__(self, *args: Any, **kwargs: Any) -> Callable[[Callable[[], Any]], Any]:
        """`@g()`: run the decorated function, which adds the nodes."""

        def decorator(build: Callable[[], Any]) -> Callable[[], Any]:
            build()
            self.module_name = Path(inspect.getfile(build)).name
            build.__globals__[GRAPH_GLOBAL] = self
            return build

        return decorator

    def run(
        self,
        executor: Any = None,
        step_id: str | None = None,
        start_web_server: bool = True,
        host: str = "localhost",
        port: int = 8005,
    ) -> Any:
        """Run the workflow here and now, shown in the terminal; returns its RunResult.

        `step_id` runs only that step and what it needs. `executor` may be 0.13's
        `DefaultExecutor(num_workers=N)`; a web server is not started (open the saved workflow
        in `graphbook serve` to watch it in the browser)."""
        if executor is not None and not isinstance(executor, DefaultExecutor):
            raise GraphbookError(
                f"Graph.run: a {type(executor).__name__} cannot run here; pass "
                "graphbook.core.DefaultExecutor(num_workers=N) or nothing"
            )
        return _run(self.workflow, executor.num_workers if executor else 0, step_id)


class DefaultExecutor:
    """0.13's executor settings for `Graph.run`: `num_workers` worker processes. `copy_outputs`
    and `log_dir` are accepted and change nothing (each branch gets its own copy of a dict's
    containers; runs are recorded in the run store)."""

    def __init__(
        self, copy_outputs: bool = True, num_workers: int = 1, log_dir: str | None = "logs"
    ) -> None:
        self.num_workers = num_workers


def _run(workflow: Workflow, workers: int, until: str | None) -> Any:
    """As `graphbook run` runs a workflow (graphbook/cli/running.py): the terminal view,
    prompts asked there, Ctrl-C stopping it cleanly.

    The only import of the CLI outside it, made when `g.run()` is called: `import graphbook`
    exports `Graph` and must not load the front end (which itself imports graphbook)."""
    from graphbook.cli.consoles import error_console, output_console
    from graphbook.cli.running import run_here
    from graphbook.cli.terminal import TerminalSink
    from graphbook.engine.executor import make_pool
    from graphbook.run_request import RunRequest

    pool = make_pool(workers)
    sink = TerminalSink(output_console(), error_console(), pool_stats=pool.stats)
    request = RunRequest("workflow", "until" if until is not None else "all", until)
    result, _ = run_here(workflow, request, pool, sink)
    return result


def load_script(path: Path | str) -> Workflow:
    """The workflow a Python file defines: the `Graph` its `@g()` built, or a `Workflow` it
    names `workflow`; the file runs as a module, not as `__main__`, so `g.run()` under
    `if __name__ == "__main__":` does not start. Its folder goes first on `sys.path`, as
    `python script.py` puts it, so it imports the modules beside it (0.13's scripts import
    `custom_nodes.*`); it stays there for the run, whose workers import them too."""
    folder = str(Path(path).resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        found = runpy.run_path(str(path), run_name="graphbook_script")
    except FileNotFoundError:
        raise WorkflowFormatError(f"cannot read workflow {str(path)!r}: no such file") from None
    except Exception as exc:
        raise GraphbookError(f"{path}: the script raised {type(exc).__name__}: {exc}") from exc
    graph = found.get(GRAPH_GLOBAL)
    if isinstance(graph, Graph):
        return graph.workflow
    workflow = found.get("workflow")
    if isinstance(workflow, Workflow):
        return workflow
    raise WorkflowFormatError(
        f"{path} defines no workflow: build one with `g = graphbook.Graph()` and `@g()` (as in "
        "Graphbook 0.13), or name a graphbook.Workflow `workflow`"
    )
