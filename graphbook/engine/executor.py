"""The executor: `Executor.run(graph, sink)` is the one way a graph runs.

One scheduler thread moves chunks of dicts between runners, always preferring the node
furthest downstream that can make progress, so data streams through while sources still
produce and a full inbox holds back whatever feeds it. Load and dump work goes to the pool.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphbook.engine.devices import prepare
from graphbook.engine.events import (
    ErrorInfo,
    NodeFailed,
    NodeStarted,
    RunFinished,
    RunStarted,
    RunStatus,
    Sink,
    null_sink,
)
from graphbook.engine.pool import InlinePool, Pool
from graphbook.engine.runners import Prompter, RunAborted, Runner, RunState, runner_for
from graphbook.graph import Graph, GraphNode, build_graph
from graphbook.logs import node_context
from graphbook.params import coerce
from graphbook.registry import Registry
from graphbook.steps import Data
from graphbook.workflow import Workflow

logger = logging.getLogger(__name__)
IDLE_WAIT = 0.05


@dataclass
class RunResult:
    """How a run ended, with counts per node and output, and every error."""

    run_id: str
    status: RunStatus
    seconds: float
    counts: dict[str, dict[str, int]]
    errors: list[NodeFailed] = field(default_factory=list)
    outputs: dict[str, dict[str, list[Data]]] = field(default_factory=dict)
    """Every dict each node handed on, by output; filled only when the run collects."""

    @property
    def ok(self) -> bool:
        return self.status == "completed" and not self.errors

    def output(self, node_id: str, output: str = "out") -> list[Data]:
        return self.outputs.get(node_id, {}).get(output, [])


class RunControl:
    """Lets another thread stop a run; the executor checks it between chunks."""

    def __init__(self) -> None:
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()


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
    ) -> None:
        self.pool = pool or InlinePool()
        self.continue_on_error = continue_on_error
        self.collect = collect
        self.prompter = prompter

    def run(
        self,
        graph: Graph,
        sink: Sink = null_sink,
        *,
        until: str | None = None,
        control: RunControl | None = None,
    ) -> RunResult:
        """Run `graph` (or only what `until` needs) to the end, streaming events to `sink`."""
        if until is not None:
            graph = graph.subgraph(graph.ancestors(until))
        errors: list[NodeFailed] = []

        def record(event: Any) -> None:
            if isinstance(event, NodeFailed):
                errors.append(event)
            sink(event)

        state = RunState(record, self.pool, self.prompter, self.continue_on_error, self.collect)
        session = _Session(graph, state, control or RunControl())
        status, seconds = session.run()
        counts = {r.id: dict(r.counts) for r in session.runners}
        record(RunFinished(session.run_id, status, seconds, counts, len(errors)))
        return RunResult(session.run_id, status, seconds, counts, errors, state.outputs)


class _Session:
    """One run of one graph: build resources and steps, schedule, and always clean up."""

    def __init__(self, graph: Graph, state: RunState, control: RunControl) -> None:
        self.graph = graph
        self.state = state
        self.control = control
        self.run_id = uuid.uuid4().hex[:12]
        self.runners: list[Runner] = []
        self.started: list[Runner] = []
        self.values: dict[str, Any] = {}

    def run(self) -> tuple[RunStatus, float]:
        start = time.perf_counter()
        titles = {i: n.title for i, n in self.graph.nodes.items()}
        self.state.sink(RunStarted(self.run_id, titles))
        status: RunStatus = "failed"
        try:
            self._build()
            self._start()
            status = self._loop()
        except RunAborted:
            status = "failed"
        except KeyboardInterrupt:
            status = "stopped"
        finally:
            self._end()
        if status == "completed" and self.state.failed:
            status = "failed"
        return status, time.perf_counter() - start

    # -- building ----------------------------------------------------------------------
    def _build(self) -> None:
        for node in self.graph.nodes.values():
            instance = self._instantiate(node)
            if node.spec.is_resource:
                self.values[node.id] = self._value(node, instance)
            else:
                self.runners.append(runner_for(node, instance, self.state))
        by_id = {r.id: r for r in self.runners}
        for edge in self.graph.data_edges():
            target = by_id[edge.target]
            by_id[edge.source].targets[edge.output].append(target)
            target.open_upstream += 1

    def _instantiate(self, node: GraphNode) -> Any:
        params = dict(node.params)
        for name, source in node.resources.items():
            spec = node.spec.param(name)
            value = self.values[source]
            params[name] = (
                coerce(spec, value) if spec is not None and not spec.is_resource else value
            )
        try:
            with node_context(node.id, self._log_to_sink):
                instance = node.spec.build(params)
        except Exception as exc:
            self._fail(node.id, exc)
        instance.id = node.id
        return instance

    def _value(self, node: GraphNode, instance: Any) -> Any:
        try:
            with node_context(node.id, self._log_to_sink):
                return prepare(instance.value(), node.params)
        except Exception as exc:
            self._fail(node.id, exc)

    def _fail(self, node_id: str, exc: BaseException) -> Any:
        self.state.sink(NodeFailed(node_id, ErrorInfo.from_exception(exc)))
        self.state.failed = True
        raise RunAborted(node_id)

    def _log_to_sink(self, node_id: str, message: Any, level: str) -> None:
        from graphbook.engine.events import NodeLog

        self.state.sink(NodeLog(node_id, level, message))

    def _start(self) -> None:
        for runner in self.runners:
            self.state.sink(NodeStarted(runner.id))
            try:
                with node_context(runner.id, runner.on_log):
                    runner.instance.on_start()
            except Exception as exc:
                runner.errors += 1
                self._fail(runner.id, exc)
            self.started.append(runner)

    # -- scheduling --------------------------------------------------------------------
    def _loop(self) -> RunStatus:
        downstream_first = list(reversed(self.runners))
        pending = list(self.runners)
        while pending:
            if self.control.stopping:
                return "stopped"
            runner = next((r for r in downstream_first if not r.closed and r.ready()), None)
            if runner is not None:
                runner.work()
                continue
            closed = _close_exhausted(pending)
            if closed:
                pending = [r for r in pending if not r.closed]
            else:
                self.state.pool.wait(IDLE_WAIT)
        return "completed"

    def _end(self) -> None:
        """Close what is still open (as stopped, unless it failed itself), then `on_end`."""
        for runner in self.runners:
            if not runner.closed:
                runner.close("stopped")
        for runner in self.started:
            try:
                with node_context(runner.id, runner.on_log):
                    runner.instance.on_end()
            except Exception as exc:
                self.state.sink(NodeFailed(runner.id, ErrorInfo.from_exception(exc)))
                self.state.failed = True


def _close_exhausted(pending: list[Runner]) -> bool:
    """Close runners with nothing left to do, sources first; True if any closed."""
    closed = False
    for runner in pending:
        if not runner.closed and runner.exhausted():
            runner.close()
            closed = True
    return closed


def make_pool(workers: int) -> Pool:
    """The pool for `workers` processes; 0 runs everything inline."""
    if workers < 0:
        raise ValueError(f"workers must be 0 or more, got {workers}")
    if workers == 0:
        return InlinePool()
    from graphbook.engine.processes import ProcessPool

    return ProcessPool(workers)


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
) -> RunResult:
    """Validate and run a workflow (object or file) with its node folders, here and now."""
    if not isinstance(workflow, Workflow):
        workflow = Workflow.load(workflow)
    registry = registry or Registry.with_builtins()
    for folder in nodes:
        registry.load_folder(folder)
    graph = build_graph(workflow, registry)
    pool = make_pool(workers)
    try:
        executor = Executor(pool, continue_on_error=continue_on_error, collect=collect)
        return executor.run(graph, sink, until=until, control=control)
    finally:
        pool.close()
