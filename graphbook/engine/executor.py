"""The executor: `Executor.run(graph, sink)` is the one way a graph runs.

One scheduler thread moves chunks of dicts between runners, always preferring the node
furthest downstream that can make progress, so data streams through while sources still
produce and a full inbox holds back whatever feeds it. Load and dump work goes to the pool.
Resources are built beside it (resourcebuilds.py): the nodes that need none start at once, and
a node built with a resource waits (runners/waiting.py) until it has arrived.
"""

from __future__ import annotations

import functools
import logging
import os
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from graphbook.components import flatten
from graphbook.engine.cache import Entry, Plan, WorkflowCache
from graphbook.engine.control import RunControl
from graphbook.engine.devices import prepare, put_in_eval, resume_training, trains
from graphbook.engine.metrics import MetricBook
from graphbook.engine.pool import InlinePool, Pool, RemoteError
from graphbook.engine.preview import preview
from graphbook.engine.ray.pool import RayBackend
from graphbook.engine.resourcebuilds import Logged, ResourceBuilds
from graphbook.engine.runners import (
    PreviewFn,
    Prompter,
    ReplayRunner,
    RunAborted,
    RunContext,
    Runner,
    runner_for,
)
from graphbook.engine.runners.waiting import Waiting
from graphbook.engine.trace import Tracer
from graphbook.errors import RunTargetError
from graphbook.events import (
    EndStatus,
    ErrorInfo,
    NodeError,
    NodeFinished,
    NodeLog,
    NodeOutput,
    NodePlan,
    NodeStarted,
    NodeTitle,
    RunFinished,
    RunMode,
    RunPaused,
    RunResumed,
    RunStarted,
    Sink,
    null_sink,
)
from graphbook.graph import Graph, GraphNode, target_problem
from graphbook.lifecycle import Data
from graphbook.logs import metric_context, node_context
from graphbook.nodes import library_registry
from graphbook.overrides import Overrides
from graphbook.params import coerce
from graphbook.paths import absolute_paths
from graphbook.registry import Registry
from graphbook.run_request import RunRequest, check_run
from graphbook.workflow import Workflow

logger = logging.getLogger(__name__)
IDLE_WAIT = 0.05
TRAINED = (
    "the model is being trained (node {holder!r} holds an optimizer of its parameters): left "
    "in training mode, as its code set it"
)
PUT_IN_EVAL = (
    "the model was in training mode and is put in eval mode for inference (dropout off, batch "
    "norm statistics frozen); to train it, hold its parameters in an optimizer (a resource, or "
    "a step's attribute) or give the resource `trains` = true (or `Trains = True`)"
)


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
        session = _GraphRun(graph, state, control, cache, trigger)
        state.metrics = book = MetricBook(state.run_id, record)
        with metric_context(book.add):
            status, seconds = session.run(started)
        book.flush()
        counts = session.counts()
        paused = session.state.paused
        record(RunFinished(session.run_id, status, seconds, counts, len(errors), paused))
        return RunResult(session.run_id, status, seconds, counts, errors, state.outputs)


class _GraphRun:
    """One run of one graph: plan, build resources and steps, schedule, and always clean up."""

    def __init__(
        self,
        graph: Graph,
        state: RunContext,
        control: RunControl,
        cache: WorkflowCache | None = None,
        trigger: str | None = None,
    ) -> None:
        self.graph = graph
        self.state = state
        self.control = control
        self.cache = cache
        self.trigger = trigger
        self.plan: Plan | None = None
        self.run_id = state.run_id
        self.runners: list[Runner[Any]] = []
        self._by_id: dict[str, Runner[Any]] = {}
        self.started: list[Runner[Any]] = []
        self.values: dict[str, Any] = {}
        self._feeds: dict[str, set[str]] = {}
        """Per stepped node: it and the nodes that feed it."""
        self.builds = ResourceBuilds(control.wake)
        self._unbuilt: list[GraphNode] = []
        """Resources this run builds that have not been asked for yet (they need others)."""
        self._settled = False

    def run(self, started: RunStarted) -> tuple[EndStatus, float]:
        start = time.perf_counter()
        self.state.sink(started)
        status: EndStatus = "failed"
        try:
            self._plan()
            self._build()
            self._start()
            self._arrive()
            status = self._loop()
        except RunAborted:
            status = "failed"
        except KeyboardInterrupt:
            status = "stopped"
        finally:
            self.builds.close()
            self._end()
            self._keep_outputs()
        if status == "completed" and self.state.failed:
            status = "failed"
        return status, max(0.0, time.perf_counter() - start - self.state.paused)

    def counts(self) -> dict[str, dict[str, int]]:
        """Counts per node and output, in graph order; reused nodes count their cached outputs."""
        counts = {r.id: dict(r.counts) for r in self.runners}
        for node_id in self.graph.nodes:
            entry = self.cache.entry(node_id) if self.cache is not None else None
            if node_id not in counts and self._reused(node_id) and entry is not None:
                counts[node_id] = dict(entry.counts)
        return {i: counts[i] for i in self.graph.nodes if i in counts}

    # -- planning ----------------------------------------------------------------------------
    def _plan(self) -> None:
        if self.cache is None:
            return
        self.plan = self.cache.plan(self.graph, self.trigger)
        for decision in self.plan.decisions.values():
            self.state.sink(
                NodePlan(
                    self.run_id, decision.node_id, decision.action, decision.cause, decision.reason
                )
            )
        for node_id in self.graph.nodes:
            if not self._reused(node_id):
                continue
            if self.graph.nodes[node_id].spec.is_resource:  # not needed: it is not built
                self.state.sink(NodeFinished(self.run_id, node_id, "cached", {}, 0, 0.0))
            else:
                self._show_cached(node_id)

    def _reused(self, node_id: str) -> bool:
        return self.plan is not None and not self.plan.runs(node_id)

    def _show_cached(self, node_id: str) -> None:
        entry = self.cache.entry(node_id) if self.cache is not None else None
        if entry is None:
            return
        counts = dict(entry.counts)
        self.state.sink(NodeFinished(self.run_id, node_id, "cached", counts, 0, 0.0))
        for output, items in entry.by_output.items():
            if items:
                shown = self.state.preview(items[-1])
                index = len(items) - 1
                self.state.sink(NodeOutput(self.run_id, node_id, output, index, shown))
        self._show_cached_logs(node_id, entry)

    def _show_cached_logs(self, node_id: str, entry: Entry) -> None:
        """What the node logged when its reused outputs were made, then a note saying so (last,
        so that a view keeping the last lines keeps it)."""
        if not entry.logs:
            return
        earlier = entry.logs_total - len(entry.logs)
        for i, (level, message) in enumerate(entry.logs):
            skipped = earlier if i == 0 else 0
            self.state.sink(NodeLog(self.run_id, node_id, level, message, skipped))
        note = "reused outputs: the lines above were logged by the run that made them"
        self.state.sink(NodeLog(self.run_id, node_id, "info", note))

    # -- building ----------------------------------------------------------------------
    def _build(self) -> None:
        """Runners for the nodes that run, wired; resources asked of the builds, and the
        nodes built with them waiting for them (`_arrive` builds those)."""
        replays = self.plan.replays(self.graph) if self.plan is not None else set()
        for node in self.graph.nodes.values():
            if node.id in replays:
                self.runners.append(self._replay(node))
            elif self._reused(node.id):
                continue
            elif node.spec.is_resource:
                self._unbuilt.append(node)
            elif self._needs_building(node):
                self.runners.append(Waiting(node, self.state))
            else:
                self.runners.append(self._runner(node))
        self._by_id = by_id = {r.id: r for r in self.runners}
        for edge in self.graph.data_edges():
            if edge.source in by_id and edge.target in by_id:
                target = by_id[edge.target]
                by_id[edge.source].targets[edge.output].append(target)
                target.open_upstream += 1
        self._ask_builds()

    def _needs_building(self, node: GraphNode) -> bool:
        """Whether a resource the node is built with is not built yet."""
        return any(source not in self.values for source in node.resources.values())

    def _runner(self, node: GraphNode) -> Runner[Any]:
        try:
            instance = self._instantiate(node)
        except RunAborted:  # it failed before it started: it ends failed, not waiting
            self.state.sink(NodeFinished(self.run_id, node.id, "failed", {}, 1, 0.0))
            raise
        runner = runner_for(node, instance, self.state)
        if self.cache is not None:
            runner.recording = self.cache.recording(node.id)
        if self.plan is not None:
            runner.cleared = self.plan.decisions[node.id].cause == "cleared"
        return runner

    def _ask_builds(self) -> None:
        """Start building each resource whose own resources are built: where the pool places
        it (a model on a Ray actor) here and now, else beside the run."""
        for node in [n for n in self._unbuilt if not self._needs_building(n)]:
            self._unbuilt.remove(node)
            self.state.sink(NodeStarted(self.run_id, node.id))
            params = self._params(node)
            try:
                with node_context(node.id, self._log_to_sink):
                    placed = self.state.pool.place_resource(node, params)
            except Exception as exc:
                self._resource_failed(node.id, exc, 0.0)
            if placed is not None:
                self._resource_built(node.id, placed, 0.0)
            else:
                self.builds.build(node.id, functools.partial(self._build_here, node, params))

    def _build_here(self, node: GraphNode, params: dict[str, Any]) -> Any:
        """A resource's value built in this process (on the builds' thread)."""
        instance = node.spec.build(params)
        instance.id = node.id
        return prepare(instance.value(), node.params, trains(instance, node.params))

    def _arrive(self) -> None:
        """What the builds brought: their logs, their resources (or errors, which end the run
        as before), and the nodes that waited for them, built and started in their place.
        Once everything is built, models held by optimizers are settled."""
        for item in self.builds.arrived():
            if isinstance(item, Logged):
                self.state.sink(NodeLog(self.run_id, item.node_id, item.level, item.message))
            elif item.error is not None:
                self._resource_failed(item.node_id, item.error, item.seconds)
            else:
                self._resource_built(item.node_id, item.value, item.seconds)
        for waiting in [r for r in self.runners if isinstance(r, Waiting)]:
            if not waiting.closed and not self._needs_building(waiting.node):
                self._take_place(waiting, self._built(waiting))
        if not self._settled and not self._unbuilt and not self.builds.building:
            self._settled = True
            self._settle_models()

    def _built(self, waiting: Waiting) -> Runner[Any]:
        """The runner of a node that waited; one that fails to build ended failed (said)."""
        try:
            return self._runner(waiting.node)
        except RunAborted:
            waiting.closed, waiting.status = True, "failed"
            raise

    def _resource_built(self, node_id: str, value: Any, seconds: float) -> None:
        self.values[node_id] = value
        self.state.sink(NodeFinished(self.run_id, node_id, "done", {}, 0, seconds))
        self._ask_builds()

    def _resource_failed(self, node_id: str, exc: BaseException, seconds: float) -> None:
        """Its error on the node, the node failed, the run aborted (KeyboardInterrupt: stopped)."""
        if isinstance(exc, KeyboardInterrupt):
            self.state.sink(NodeFinished(self.run_id, node_id, "stopped", {}, 0, seconds))
            raise exc
        error = exc.error if isinstance(exc, RemoteError) else ErrorInfo.from_exception(exc)
        self.state.sink(NodeError(self.run_id, node_id, error))
        self.state.failed = True
        self.state.sink(NodeFinished(self.run_id, node_id, "failed", {}, 1, seconds))
        raise RunAborted(node_id)

    def _take_place(self, waiting: Waiting, runner: Runner[Any]) -> None:
        """`runner` where `waiting` was: the dicts it holds, its wires both ways, its turn."""
        runner.inbox = waiting.inbox
        runner.open_upstream = waiting.open_upstream
        runner.targets = waiting.targets
        for other in self.runners:
            for targets in other.targets.values():
                targets[:] = [runner if t is waiting else t for t in targets]
        self.runners[self.runners.index(waiting)] = runner
        self._by_id[runner.id] = runner
        self._start_runner(runner)

    def _replay(self, node: GraphNode) -> Runner[Any]:
        entry = self.cache.entry(node.id) if self.cache is not None else None
        return ReplayRunner(node, entry.pairs if entry is not None else (), self.state)

    def _params(self, node: GraphNode) -> dict[str, Any]:
        """The node's parameters with the values of the resources wired to it; when the pool
        ships work to other machines (a Ray cluster), those declared as paths made absolute
        against this process's folder (graphbook/paths.py)."""
        params = dict(node.params)
        for name, source in node.resources.items():
            spec = node.spec.param(name)
            value = self.values[source]
            params[name] = (
                coerce(spec, value) if spec is not None and not spec.is_resource else value
            )
        if self._ships:
            params = absolute_paths({p.name: p for p in node.spec.params}, params, os.getcwd())
        return params

    @functools.cached_property
    def _ships(self) -> bool:
        """Whether the pool ships work to other machines, asked once a run (a Ray pool asks
        its cluster)."""
        return self.state.pool.ships

    def _instantiate(self, node: GraphNode) -> Any:
        try:
            params = self._params(node)
            with node_context(node.id, self._log_to_sink):
                instance = node.spec.build(params)
        except Exception as exc:  # a resource's value of the wrong type fails here too
            self._fail(node.id, exc)
        instance.id = node.id
        return instance

    def _fail(self, node_id: str, exc: BaseException) -> Any:
        """Report `exc` on the node (with its own traceback when it came from elsewhere) and
        abort the run."""
        error = exc.error if isinstance(exc, RemoteError) else ErrorInfo.from_exception(exc)
        self.state.sink(NodeError(self.run_id, node_id, error))
        self.state.failed = True
        raise RunAborted(node_id)

    def _log_to_sink(self, node_id: str, message: Any, level: str) -> None:
        self.state.sink(NodeLog(self.run_id, node_id, level, message))

    def _start(self) -> None:
        for runner in self.runners:
            if not isinstance(runner, Waiting):
                self._start_runner(runner)

    def _start_runner(self, runner: Runner[Any]) -> None:
        try:
            runner.start()
        except Exception as exc:
            runner.errors += 1
            self._fail(runner.id, exc)
        self.started.append(runner)

    # -- scheduling --------------------------------------------------------------------
    def _settle_models(self) -> None:
        """Once every node is built and started: a model an optimizer holds is being trained,
        so it is put back in the training mode its code set; a node-folder model left in eval
        mode from training mode is told so on its node (docs/graphbook-013.md)."""
        steps = {r.id: r.instance for r in self.runners if hasattr(r, "instance")}
        for model_id, holder in resume_training(self.values, steps):
            self.state.sink(NodeLog(self.run_id, model_id, "info", TRAINED.format(holder=holder)))
        for node_id, value in self.values.items():
            spec = self.graph.nodes[node_id].spec
            if spec.pack_kind == "custom" and put_in_eval(value):
                self.state.sink(NodeLog(self.run_id, node_id, "info", PUT_IN_EVAL))

    def _loop(self) -> EndStatus:
        downstream_first = list(reversed(self.runners))
        pending = list(self.runners)
        waited = False
        while pending:
            if self.control.stopping:
                return "stopped"
            if self.control.paused is not None:
                self._pause()
                continue
            if not self._settled:  # resources built beside the run, and nodes that waited
                self._arrive()
                downstream_first = [self._by_id[r.id] for r in downstream_first]
                pending = [self._by_id[r.id] for r in pending]
            if not waited:  # the pool's I/O: tasks out, outcomes in, without blocking
                self._wait_pool(0)
            if self.state.metrics is not None and self.state.metrics.pending:
                self.state.metrics.flush_if_due()
            runner = self._next(downstream_first)
            waited = False
            if runner is not None:
                runner.work()
                continue
            closed = _close_exhausted(pending)
            if closed:
                pending = [r for r in pending if not r.closed]
            else:
                waited = self._idle()
        return "completed"

    def _next(self, downstream_first: list[Runner[Any]]) -> Runner[Any] | None:
        """The runner to give a turn: the furthest downstream that can progress; while
        stepping, only the step's node and what feeds it (see `_step_node`)."""
        ready = (r for r in downstream_first if not r.closed and r.ready())
        if not self.control.stepping:
            return next(ready, None)
        node = self._step_node(downstream_first)
        if node is None:
            return next(ready, None)
        if node.closed:  # it has nothing left to do: that ends its step
            self.control.unit_done(node.id)
            return None
        feeding = self._feeds.get(node.id)
        if feeding is None:
            feeding = self._feeds[node.id] = self.graph.ancestors(node.id)
        turn = next((r for r in ready if r.id in feeding), None)
        if turn is None and node.pending() and not node.has_room():
            return next((r for r in downstream_first if not r.closed and r.ready()), None)
        return turn

    def _step_node(self, downstream_first: list[Runner[Any]]) -> Runner[Any] | None:
        """The node the current step runs one unit of: the one asked for, else the furthest
        downstream that holds dicts, else the first that has not ended (a source)."""
        asked = self.control.step_node
        if asked in self._by_id:
            return self._by_id[asked]
        steppable = [r for r in downstream_first if not isinstance(r, ReplayRunner)]
        node = next((r for r in steppable if not r.closed and r.pending()), None)
        if node is None:
            node = next((r for r in reversed(steppable) if not r.closed), None)
        if node is not None:
            self.control.aim(node.id, asked)
        return node

    def _pause(self) -> None:
        """Block (without spinning) until resumed, stepped or stopped."""
        pause = self.control.paused
        if pause is None:
            return
        for runner in self.runners:  # the counts as they stand, for the person to read
            if not runner.closed:
                runner.report_progress(force=True)
        began = time.perf_counter()
        paused = RunPaused(self.run_id, pause.reason, pause.node_id, time.time(), self.state.paused)
        self.state.sink(paused)
        self.control.wait_while_paused()
        self.state.paused += time.perf_counter() - began
        if not self.control.stopping:
            self.state.sink(RunResumed(self.run_id, self.state.paused))

    def _idle(self) -> bool:
        """Nothing can progress: wait for the pool's outcomes (True: the pool was waited on),
        or for a wake-up (an answer)."""
        busy = any(r.waiting_on_pool() for r in self.runners)
        if busy:
            self._wait_pool(IDLE_WAIT)
        else:
            self.control.idle(IDLE_WAIT)
        return busy

    def _wait_pool(self, timeout: float) -> None:
        """The pool's I/O; its notices (where dumps run, Ray spilling) go to the log of a node
        whose work is in the pool (else the first node's), each at its own level."""
        self.state.pool.wait(timeout)
        self._pool_notices()

    def _pool_notices(self) -> None:
        notices = self.state.pool.notices()
        if notices and self.runners:
            busy = next((r for r in self.runners if r.waiting_on_pool()), self.runners[0])
            for notice in notices:
                self.state.sink(NodeLog(self.run_id, busy.id, notice.level, notice.message))

    def _end(self) -> None:
        """Close what is still open (as stopped, unless it failed itself), then `on_end`; a
        resource still building ends stopped (its build is left to finish on its own)."""
        for node_id in sorted(self.builds.building, key=list(self.graph.nodes).index):
            self.state.sink(NodeFinished(self.run_id, node_id, "stopped", {}, 0, 0.0))
        for runner in self.runners:
            if not runner.closed:
                runner.close("stopped")
        self._pool_notices()  # what the pool said as the run's last work left it
        for runner in self.started:
            try:
                runner.end()
            except Exception as exc:
                error = ErrorInfo.from_exception(exc)
                self.state.sink(NodeError(self.run_id, runner.id, error))
                self.state.failed = True

    def _keep_outputs(self) -> None:
        """Cache the outputs of nodes that ran to completion; forget those that did not."""
        if self.cache is None or self.plan is None:
            return
        for runner in self.runners:
            if runner.recording is None:
                continue
            if runner.status == "done":
                self.cache.commit(runner.id, self.plan.keys[runner.id], runner.recording)
            else:
                self.cache.abandon(runner.id, self.plan.keys[runner.id])
        built = {r.id for r in self.runners if not isinstance(r, Waiting)}
        for node_id, decision in self.plan.decisions.items():
            node = self.graph.nodes[node_id]
            if decision.action == "run" and node_id not in built and not node.spec.is_resource:
                # the run failed before this node was built
                self.cache.abandon(node_id, self.plan.keys[node_id])


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


def _close_exhausted(pending: list[Runner[Any]]) -> bool:
    """Close runners with nothing left to do, sources first; True if any closed."""
    closed = False
    for runner in pending:
        if not runner.closed and runner.exhausted():
            runner.close()
            closed = True
    return closed


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
