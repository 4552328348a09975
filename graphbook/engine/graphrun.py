"""One run of one graph: plan it against the cache, build its resources (beside the run:
resourcebuilds.py) and its steps' runners, schedule them until every node is done, stopped or
failed, and always clean up (runners closed, `on_end`, outputs kept for the next run).

The scheduler moves chunks of dicts between runners, always preferring the node furthest
downstream that can make progress, so data streams through while sources still produce and a
full inbox holds back whatever feeds it. Load and dump work goes to the pool.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from typing import Any

from graphbook.engine.cache import Entry, Plan, WorkflowCache
from graphbook.engine.control import RunControl
from graphbook.engine.devices import prepare, put_in_eval, resume_training, trains
from graphbook.engine.pool import RemoteError
from graphbook.engine.resourcebuilds import Logged, ResourceBuilds
from graphbook.engine.runners import (
    ReplayRunner,
    RunAborted,
    RunContext,
    Runner,
    runner_for,
)
from graphbook.engine.runners.waiting import Waiting
from graphbook.events import (
    EndStatus,
    ErrorInfo,
    NodeError,
    NodeFinished,
    NodeLog,
    NodeOutput,
    NodePlan,
    NodeStarted,
    RunPaused,
    RunResumed,
    RunStarted,
)
from graphbook.graph import Graph, GraphNode
from graphbook.logs import node_context
from graphbook.params import coerce
from graphbook.paths import absolute_paths

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


class GraphRun:
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


def _close_exhausted(pending: list[Runner[Any]]) -> bool:
    """Close runners with nothing left to do, sources first; True if any closed."""
    closed = False
    for runner in pending:
        if not runner.closed and runner.exhausted():
            runner.close()
            closed = True
    return closed
