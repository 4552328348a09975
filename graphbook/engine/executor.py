"""The executor: `Executor.run(graph, sink)` is the one way a graph runs (each run a GraphRun:
graphrun.py), and `run_workflow` the one way a front end runs a workflow file or object: its
request checked once (run_request.py), its pool made and closed, its trace written.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from graphbook.components import flatten
from graphbook.engine.cache import WorkflowCache
from graphbook.engine.control import RunControl
from graphbook.engine.graphrun import GraphRun
from graphbook.engine.metrics import MetricBook
from graphbook.engine.pool import InlinePool, Pool
from graphbook.engine.preview import preview
from graphbook.engine.ray.pool import RayBackend
from graphbook.engine.runners import (
    PreviewFn,
    Prompter,
    RunContext,
)
from graphbook.engine.trace import Tracer
from graphbook.errors import RunTargetError
from graphbook.events import (
    EndStatus,
    NodeError,
    NodeTitle,
    RunFinished,
    RunMode,
    RunStarted,
    Sink,
    null_sink,
)
from graphbook.graph import Graph, target_problem
from graphbook.lifecycle import Data
from graphbook.logs import metric_context
from graphbook.nodes import library_registry
from graphbook.overrides import Overrides
from graphbook.registry import Registry
from graphbook.run_request import RunRequest, check_run
from graphbook.workflow import Workflow

logger = logging.getLogger(__name__)


@dataclass
class RunResult:
    """How a run ended, with counts per node and output, and every error."""

    run_id: str
    status: EndStatus
    seconds: float
    counts: dict[str, dict[str, int]]
    errors: list[NodeError] = field(default_factory=list)
    outputs: dict[str, dict[str, list[Data]]] = field(default_factory=dict)
    """Every dict each node handed on, by output; filled only when the run collects."""

    @property
    def ok(self) -> bool:
        return self.status == "completed" and not self.errors

    def output(self, node_id: str, output: str = "out") -> list[Data]:
        return self.outputs.get(node_id, {}).get(output, [])


__all__ = [
    "Backend",
    "Executor",
    "RayBackend",
    "RunControl",
    "RunResult",
    "load_nodes",
    "make_pool",
    "run_workflow",
]


def default_prompter(node_id: str, question: dict[str, Any], data: Data) -> Any:
    """With no one to ask (a headless run), a prompt takes its default answer."""
    logger.warning(
        "node %s asked %r; no one to answer, using the default", node_id, question.get("msg")
    )
    return question.get("def")


class Executor:
    """Runs graphs with one pool; keep it to run again without restarting workers."""

    def __init__(
        self,
        pool: Pool | None = None,
        *,
        continue_on_error: bool = False,
        collect: bool = False,
        prompter: Prompter = default_prompter,
        previewer: PreviewFn = preview,
    ) -> None:
        self.pool = pool or InlinePool()
        self.continue_on_error = continue_on_error
        self.collect = collect
        self.prompter = prompter
        self.previewer = previewer

    def run(
        self,
        graph: Graph,
        sink: Sink = null_sink,
        *,
        until: str | None = None,
        control: RunControl | None = None,
        cache: WorkflowCache | None = None,
        run_id: str | None = None,
        workflow: str = "",
        trigger: str | None = None,
        tracer: Tracer | None = None,
    ) -> RunResult:
        """Run `graph` (or only what `until` needs) to the end, streaming events to `sink`.

        With a `cache`, nodes whose outputs are cached and unchanged are not run again: their
        cached dicts feed the nodes that do run, and complete outputs are kept for next time.
        `trigger` runs that step again, never from the cache, and what it feeds (with what they
        need besides); `workflow` names the run's workflow file in its `RunStarted` event.
        A `tracer` collects where the run's time goes (graphbook/engine/trace.py).
        """
        graph = _scope(graph, until, trigger)
        errors: list[NodeError] = []

        def record(event: Any) -> None:
            if isinstance(event, NodeError):
                errors.append(event)
            sink(event)

        control = control or RunControl()
        state = RunContext(
            record,
            self.pool,
            self.prompter,
            self.continue_on_error,
            self.collect,
            control=control,
            preview=self.previewer,
            run_id=run_id or uuid.uuid4().hex[:12],
            tracer=tracer,
        )
        mode = _mode(control, until, trigger)
        node = trigger if trigger is not None else until
        started = RunStarted(state.run_id, workflow, mode, node, titles(graph), time.time())
        session = GraphRun(graph, state, control, cache, trigger)
        state.metrics = book = MetricBook(state.run_id, record)
        with metric_context(book.add):
            status, seconds = session.run(started)
        book.flush()
        counts = session.counts()
        paused = session.state.paused
        record(RunFinished(session.run_id, status, seconds, counts, len(errors), paused))
        return RunResult(session.run_id, status, seconds, counts, errors, state.outputs)


def _scope(graph: Graph, until: str | None, trigger: str | None) -> Graph:
    """The part of `graph` a run needs: what `until` needs, or what `trigger` feeds and what
    those nodes need besides. A target that cannot be one raises RunTargetError."""
    for node, retrigger in ((trigger, True), (until, False)):
        problem = None if node is None else target_problem(graph, node, retrigger=retrigger)
        if problem is not None:
            raise RunTargetError(problem)
    if trigger is not None:
        needed: set[str] = set()
        for node_id in graph.descendants(trigger):
            needed |= graph.ancestors(node_id)
        graph = graph.subgraph(needed)
    if until is not None:
        graph = graph.subgraph(graph.ancestors(until))
    return graph


def _mode(control: RunControl, until: str | None, trigger: str | None) -> RunMode:
    if control.stepping:
        return "step"
    return "trigger" if trigger is not None else "until" if until is not None else "all"


def titles(graph: Graph) -> list[NodeTitle]:
    """Every node of `graph` by id and title, as a run's start names them."""
    return [NodeTitle(node_id, node.title) for node_id, node in graph.nodes.items()]


Backend = Literal["local", "ray"] | RayBackend
"""Where pool work runs: `local` (worker processes, or inline with 0 workers), `ray` (Ray
actors: the Ray this process runs, or a new local one), or a `RayBackend` (an address, retries)."""


def make_pool(workers: int, backend: Backend = "local") -> Pool:
    """The pool for `workers` processes; 0 runs everything inline. On Ray, `workers` actors
    per kind (0: one per CPU of the cluster)."""
    if workers < 0:
        raise ValueError(f"workers must be 0 or more, got {workers}")
    if backend == "ray":
        backend = RayBackend()
    if isinstance(backend, RayBackend):
        return backend.pool(workers)
    if backend != "local":
        raise ValueError(f"backend is 'local', 'ray' or a RayBackend, got {backend!r}")
    if workers == 0:
        return InlinePool()
    from graphbook.engine.processes import ProcessPool

    return ProcessPool(workers)


def load_nodes(
    workflow: Workflow, nodes: Iterable[Path | str] = (), registry: Registry | None = None
) -> Registry:
    """`registry` (default: the built-ins) with the node kinds the workflow's running nodes use
    that it lacks: from the files of the `nodes` folders that define them, else the modules the
    nodes name (a 0.13 file's `data.module`). A kind it has is not loaded again, so a front end
    that loaded them (to read `--set` values by type) hands its registry on and nothing runs
    twice; a file that fails to import is in `registry.failures`."""
    registry = registry if registry is not None else library_registry()
    flat = flatten(workflow)[0]  # the node kinds inside components are needed too
    running = [node for node in flat.nodes.values() if node.mode == "active"]
    missing = {node.type for node in running} - workflow.code.keys()
    missing = {kind for kind in missing if kind not in registry}
    if missing:
        modules = {node.type: node.module for node in flat.nodes.values() if node.module}
        registry.load_needed(nodes, missing, modules)
    return registry


def run_workflow(
    workflow: Workflow | Path | str,
    *,
    registry: Registry | None = None,
    nodes: Iterable[Path | str] = (),
    workers: int = 0,
    sink: Sink = null_sink,
    continue_on_error: bool = False,
    collect: bool = False,
    until: str | None = None,
    control: RunControl | None = None,
    pool: Pool | None = None,
    prompter: Prompter = default_prompter,
    backend: Backend = "local",
    overrides: Overrides | None = None,
    inputs: Mapping[str, Any] | None = None,
    trace: Path | str | None = None,
    request: RunRequest | None = None,
) -> RunResult:
    """Validate and run a workflow (object or file) with its node folders, here and now.

    `overrides` (`{node id or unique title: {parameter: value}}`) are set on a copy of the
    workflow before it is checked (graphbook/overrides.py): validated as the file's values are.
    `inputs` (`{input name: value}`) set the workflow's inputs (graphbook/inputs.py), merged
    with `overrides` (one parameter given two different values raises WorkflowError). A front
    end that made a `request` (graphbook/run_request.py: `graphbook run` does) gives it instead
    of `until`, `continue_on_error`, `overrides` and `inputs`. The run is checked once
    (run_request.check_run): its problems raise WorkflowError, a node it cannot run up to
    RunTargetError.

    The run has a pool of `workers` processes of its own (or Ray actors, with `backend` "ray"
    or a `RayBackend`), closed at the end, unless `pool` is given: then it runs on that one,
    which stays open (its owner closes it). `prompter` answers the questions of prompt steps
    (default: each prompt's default answer). `trace` names a file to write where the run's
    time went, as a Chrome/Perfetto trace (graphbook/engine/trace.py), however the run ends."""
    name = ""
    if not isinstance(workflow, Workflow):
        name = Path(workflow).name
        workflow = Workflow.load(workflow)
    if request is None:
        request = _request(name, until, continue_on_error, overrides, inputs)
    registry = load_nodes(workflow, nodes, registry)
    checked = check_run(request, workflow, registry)
    if checked.graph is None:
        raise checked.error()
    own = pool is None
    pool = make_pool(workers, backend) if pool is None else pool
    tracer = Tracer() if trace is not None else None
    control = control or RunControl()
    if request.stepping is not None:
        control.step(request.stepping or None)
    try:
        executor = Executor(
            pool, continue_on_error=request.continue_on_error, collect=collect, prompter=prompter
        )
        until, trigger = request.until, request.trigger
        run = functools.partial(executor.run, control=control, workflow=name, tracer=tracer)
        return run(checked.graph, sink, until=until, trigger=trigger)
    finally:
        if own:
            pool.close()
        if tracer is not None and trace is not None:
            tracer.write(trace)


def _request(
    name: str,
    until: str | None,
    continue_on_error: bool,
    overrides: Overrides | None,
    inputs: Mapping[str, Any] | None,
) -> RunRequest:
    """The request `run_workflow`'s keyword arguments make."""
    mode: RunMode = "until" if until is not None else "all"
    given = {k: dict(v) for k, v in overrides.items()} if overrides is not None else None
    values = dict(inputs) if inputs is not None else None
    return RunRequest(name, mode, until, None, continue_on_error, given, values)
