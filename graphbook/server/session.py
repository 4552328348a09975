"""Session: the server's interactive runs, one at a time, each in the run host (a child
process, graphbook/server/host.py, NOTE [ Run host ]); on `serve --ray`, in a background thread.

Outputs are cached per workflow file between runs (graphbook.engine.cache); the run can be
paused, stepped, resumed and stopped; prompts wait for any client's answer; every run is
recorded in the run store. Events travel from the run (the host's pipe reader, or the run's
thread) to the event loop through the Outbox, in order, and are published by the Hub. Starting
a run reads and checks its workflow in a thread: the loop never builds a graph (4,000 nodes
took it 0.9 s).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from graphbook import protocol as p
from graphbook.components import flatten
from graphbook.engine.cache import OutputCache
from graphbook.engine.control import RunControl, interrupt
from graphbook.engine.executor import Executor, make_pool
from graphbook.engine.pool import InlinePool, Pool
from graphbook.errors import GraphbookError, Problem, WorkflowError
from graphbook.events import Event, RunFinished
from graphbook.graph import Graph, build_graph
from graphbook.inputs import run_overrides
from graphbook.modes import OFF_WORDS
from graphbook.overrides import with_overrides
from graphbook.registry import Registry
from graphbook.server.desk import PromptDesk, check_answer
from graphbook.server.errors import ServerError, bad_message, conflict, not_found
from graphbook.server.history import HistorySink, Recorder, RunConfig
from graphbook.server.host import HostCache, HostGone, HostPool, RunHost
from graphbook.server.hub import Hub
from graphbook.server.media import MediaStore
from graphbook.server.outbox import Outbox
from graphbook.server.previews import FULL, LIVE, Previewer
from graphbook.server.runhost import HostConfig, RunOrder
from graphbook.server.settings import ServerSettings
from graphbook.server.translate import Translator
from graphbook.server.workflows import WorkflowFiles, from_body
from graphbook.store import Store
from graphbook.workflow import Workflow

logger = logging.getLogger(__name__)
STOP_GRACE = 2.0
"""Seconds a stopped run has to end by itself before its run host is ended (its thread is
interrupted, on `serve --ray`)."""
ABANDON_GRACE = 3.0
"""On `serve --ray`: seconds an interrupted run has to end before it is declared stopped and
its thread left behind; see NOTE [ Stop ]."""

HOST_LOAD = 60.0
"""Seconds the server waits at its start for its run host to load (imports, node files)."""
RECORD_GRACE = 1.0
"""Seconds a run's end waits for its record to be written before clients are told: a store
that another process holds locked delays the record (written later), not the run."""

# NOTE [ Stop ]
#
# Stop asks the executor to stop (it checks between units of work), and cancels open prompts.
# Work in worker processes is the pool's: a stopped run's busy workers are ended (the pool is
# replaced).
#
# In the run host (the default, graphbook/server/host.py, NOTE [ Run host ]): node code that
# ignores the request gets STOP_GRACE seconds, then the host is ended with SIGKILL, whatever the
# code is doing (a loop, a call blocked in C, a C call holding the GIL), its worker processes
# with it. The run is recorded `stopped`, with the node details the server had folded from the
# run's messages until then; a fresh host starts, and the workflows whose cached outputs the
# old one held re-run their nodes with the cause `lost`. Nothing is left behind, and the server
# takes the next run at once (it waits in the new host's pipe until the host has loaded).
#
# On `serve --ray` the engine still runs in a thread of the server: after STOP_GRACE the thread
# gets a KeyboardInterrupt at its next Python instruction (`interrupt`). Code blocked in C
# never reaches one: after ABANDON_GRACE more seconds the run is declared stopped, its thread is
# abandoned (a daemon thread) with a pool of its own, and nothing it does later reaches clients
# or the store. Python cannot kill a thread, so there code that holds the GIL freezes the server.


@dataclass
class ActiveRun:
    run_id: str
    config: RunConfig
    control: RunControl
    graph: Graph
    pool: Pool
    began: float
    """time.time() when it started."""
    thread: threading.Thread | None = None
    ended: bool = False
    """The executor has returned (the thread may still be cleaning up the pool)."""
    abandoned: bool = False
    """Declared stopped while its thread was stuck; see NOTE [ Stop ]."""
    released: bool = False
    """The session has been told the run is over (`Session._release`)."""
    retire_pool: bool = False
    """Its pool, replaced because a stop left workers busy, is closed when the thread ends."""
    host: RunHost | None = None
    """The run host it runs in (None: a thread of the server, on `serve --ray`)."""
    history: HistorySink | None = None
    answered: set[str] = field(default_factory=set)
    """Prompts answered (in the run host, where the answer is checked against nothing)."""


class Session:
    def __init__(
        self,
        settings: ServerSettings,
        registry: Registry,
        store: Store,
        hub: Hub,
        media: MediaStore,
        files: WorkflowFiles,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.store = store
        self.hub = hub
        self.files = files
        self.media = media
        self.hosted = settings.ray is None
        """Runs go to the run host (NOTE [ Run host ]); on `serve --ray`, to a thread here."""
        self.host: RunHost | None = None
        self.cache: OutputCache | HostCache = (
            HostCache(settings.cache_budget, self._host)
            if self.hosted
            else OutputCache(settings.cache_budget)
        )
        self.desk = PromptDesk()
        self.previewer = Previewer(media, LIVE)
        self.full_previewer = Previewer(media, FULL)
        self.pool: Pool | HostPool = HostPool(self._host) if self.hosted else InlinePool()
        self.active: ActiveRun | None = None
        self.starting: str | None = None
        """The workflow of the run being read and checked (`start`), before it is active."""
        self._current: ActiveRun | None = None
        """The run the host's messages are for (kept after it ends, for late messages)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outbox: Outbox | None = None
        self._closing = False
        self._host_lock = threading.Lock()
        self._lost: frozenset[str] = frozenset()
        """Workflows whose cached outputs went with an ended run host (NOTE [ Run host ])."""
        self.recorder = Recorder(store, self._warn_store_failed)
        """Every write of run history, in its own thread (never on the loop)."""
        self.on_finished: list[Callable[[RunFinished], None]] = []
        """Called on the loop with each run's end, once clients were told and runs are taken
        again (the job queue starts its next job)."""

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._outbox = Outbox(self._loop)
        if self.hosted:  # the server is ready when it can run: its run host has loaded
            self.host = host = await asyncio.to_thread(self._new_host, frozenset())
            if not await asyncio.to_thread(host.ready.wait, HOST_LOAD):
                logger.warning("the run host has not loaded in %.0f s; runs wait for it", HOST_LOAD)
        else:
            self.pool = make_pool(self.settings.workers, self.settings.backend)

    async def close(self) -> None:
        self._closing = True  # a run being read and checked now does not start
        active = self.active
        if active is not None:
            active.control.stop()
            self.desk.cancel_all()
            if active.thread is not None:
                await asyncio.to_thread(active.thread.join, STOP_GRACE * 2)
        if self.host is not None:
            await asyncio.to_thread(self.host.close, STOP_GRACE * 2)
        if not isinstance(self.pool, HostPool):
            await asyncio.to_thread(self.pool.close)
        await asyncio.to_thread(self.recorder.close)

    # -- the run host ------------------------------------------------------------------------
    def _host(self) -> RunHost:
        if self.host is None:
            raise HostGone("the run host has not started")
        return self.host

    def _new_host(self, lost: frozenset[str]) -> RunHost:
        budget = self.cache.budget
        config = HostConfig(
            self.settings.nodes, self.settings.roots(), self.settings.workers, budget, lost
        )
        return RunHost(config, self.media, self._from_host)

    def _from_host(self, host: RunHost, message: tuple[Any, ...]) -> None:
        """A message from a run host (in its reader thread), in the order it was sent."""
        kind = message[0]
        if kind == "exit":
            self._host_exited(host, message[1])
            return
        active = self._current
        if active is None or active.host is not host or active.run_id != message[1]:
            return
        if kind == "event":
            self._deliver(active, message[2], message[3])
        elif kind == "crash":
            if active.history is not None:
                active.history.error = active.history.error or str(message[2])
            self._deliver(active, _end_message(active, "failed"), None)
        elif kind == "ended":
            active.ended = True

    def _deliver(
        self, active: ActiveRun, event: Event | None, messages: Sequence[p.ServerMessage] | None
    ) -> None:
        """Record and publish one event of a hosted run, as the run's own thread did."""
        if active.released or active.history is None:
            return
        shown: Sequence[p.ServerMessage] = (
            messages if messages is not None else [event] if isinstance(event, RunFinished) else []
        )
        active.history(event, shown)
        if isinstance(event, RunFinished):  # clients that see the end find it recorded
            self.recorder.wait(RECORD_GRACE)
            self._release(active, shown)
        elif shown:
            self._call_soon(self.hub.publish_all, shown)

    def _host_exited(self, host: RunHost, code: int | None) -> None:
        """A host ended (ended by a Stop, or crashed): its run ends, a fresh host starts."""
        if self._closing:
            return
        with self._host_lock:
            if self.host is host:
                self._lost = host.config.lost | frozenset(host.ran)
                # one that never loaded is not started again in a loop, but for the next run
                self.host = self._new_host(self._lost) if host.loaded else None
                if not host.loaded:
                    logger.error("the run host ended before it loaded (exit code %s)", code)
        active = self._current
        if active is None or active.host is not host:
            return
        if not active.released:
            grace = f"{STOP_GRACE:.0f} s"
            if host.killed or active.control.stopping:
                status: Literal["failed", "stopped"] = "stopped"
                reason = (
                    f"stopped: node code did not stop within {grace}; its run process was ended"
                )
            else:
                status = "failed"
                reason = f"the run process ended unexpectedly (exit code {code})"
            logger.warning("run %s: %s", active.run_id, reason)
            if active.history is not None:
                active.history.error = active.history.error or reason
            self._deliver(active, _end_message(active, status), None)
        active.ended = True

    # -- starting ----------------------------------------------------------------------------
    async def start(self, request: p.Run) -> str:
        """Validate and start a run; raises ServerError when it cannot start. The workflow is
        read and its graph built in a thread; meanwhile the session is `starting` and refuses
        other runs as it does while one is active."""
        self._refuse_another()
        name = self.files.name(request.workflow)
        registry = self.registry.copy()  # a reload of node files may replace the registry's
        self.starting = name
        try:
            graph, config, running = await asyncio.to_thread(self._prepare, request, name, registry)
        finally:
            self.starting = None
        if self._closing:
            raise conflict("the server is shutting down", "conflict")
        control = RunControl()
        if request.mode == "step":
            control.step(config.node)
        run_id = uuid.uuid4().hex[:12]
        if self.host is not None:
            active = ActiveRun(run_id, config, control, graph, InlinePool(), time.time())
            self._start_hosted(active, running, request.mode == "step")
            return run_id
        assert not isinstance(self.pool, HostPool)
        active = ActiveRun(run_id, config, control, graph, self.pool, time.time())
        active.thread = threading.Thread(
            target=self._run, args=(active,), name=f"graphbook-run-{active.run_id}", daemon=True
        )
        self.active = active
        active.thread.start()
        return active.run_id

    def _start_hosted(self, active: ActiveRun, running: Workflow, stepping: bool) -> None:
        config = active.config
        with self._host_lock:
            if self.host is None:
                self.host = self._new_host(self._lost)
            host = self.host
        active.host = host
        active.history = HistorySink(self.recorder, config)
        until = config.node if config.mode in ("until", "step") else None
        trigger = config.node if config.mode == "trigger" else None
        order = RunOrder(
            active.run_id,
            running,
            config.workflow,
            until,
            trigger,
            (config.node or "") if stepping else None,
            config.continue_on_error,
        )
        self.active = self._current = active
        if not host.run(order):  # the host is gone; its reader starts the next one
            self.active = None
            raise ServerError(503, "conflict", "the run process is restarting; try again")

    def _refuse_another(self) -> None:
        if self.active is not None:
            raise conflict(
                f"run {self.active.run_id} is still going; stop it first, or queue this run "
                "to start when it ends (POST /api/jobs with the same body)",
                "run_active",
            )
        if self.starting is not None:
            raise conflict(f"a run of {self.starting} is starting; wait for it", "run_active")

    def _prepare(
        self, request: p.Run, name: str, registry: Registry
    ) -> tuple[Graph, RunConfig, Workflow]:
        """The run's graph and what it runs, checked (in a thread)."""
        if request.graph is not None:
            workflow = from_body(request.graph, name)
            workflow.library = self.files.library
        else:
            workflow = self.files.load(name)
        try:
            overrides = run_overrides(workflow, registry, request.overrides, request.inputs)
            running = with_overrides(workflow, overrides)
            graph = build_graph(running, registry)
            running = flatten(running)[0]  # the host runs what was checked, library read once
            refuse_broken_files(graph, registry)
        except WorkflowError as exc:
            raise ServerError(422, "invalid_workflow", str(exc), exc.problems) from None
        except GraphbookError as exc:
            raise ServerError(422, "invalid_workflow", str(exc)) from None
        node = _target(request, graph)
        params = {n.id: dict(n.params) for n in running.nodes.values()}
        given = {k: dict(v) for k, v in (request.overrides or {}).items()} or None
        config = RunConfig(
            name,
            request.mode,
            node,
            params,
            request.continue_on_error,
            workflow.to_json(),
            given,
            dict(request.inputs) if request.inputs is not None else None,
        )
        return graph, config, running

    # -- the run's thread (serve --ray) ------------------------------------------------------
    def _run(self, active: ActiveRun) -> None:
        config = active.config
        assert isinstance(self.cache, OutputCache)
        history = HistorySink(self.recorder, config)
        translate = Translator(self.previewer)

        def sink(event: Event) -> None:
            if active.abandoned:
                return
            messages = translate(event)
            history(event, messages)
            if isinstance(event, RunFinished):  # clients that see the end find it recorded
                self.recorder.wait(RECORD_GRACE)
                self._release(active, messages)
            elif messages:
                self._call_soon(self.hub.publish_all, messages)

        executor = Executor(
            active.pool,
            continue_on_error=config.continue_on_error,
            prompter=self.desk.ask,
            previewer=self.previewer,
        )
        try:
            executor.run(
                active.graph,
                sink,
                until=config.node if config.mode in ("until", "step") else None,
                trigger=config.node if config.mode == "trigger" else None,
                control=active.control,
                cache=self.cache.workflow(config.workflow),
                run_id=active.run_id,
                workflow=config.workflow,
            )
        except BaseException as exc:  # a bug, or an interrupt outside node code: the run ends
            logger.exception("run %s ended abnormally", active.run_id)
            if not active.abandoned:  # the record ends failed too, with what ended it
                history.error = history.error or f"the run ended abnormally: {exc!r:.300}"
                sink(_end_message(active, "failed"))
        finally:
            active.ended = True
            if not active.abandoned:
                self._release(active)
            if active.abandoned or active.retire_pool:
                active.pool.close()

    def _release(self, active: ActiveRun, messages: Sequence[p.ServerMessage] = ()) -> None:
        """The run has ended: free the session for the next run, then send its last `messages`
        (run_finished), in one step on the loop, so that no client sees run_finished while
        runs are refused.
        Stop is real: if a stopped run left workers busy, the next run gets a fresh pool and
        the old one (its workers ended) is closed when this thread is done with it."""
        if active.released:
            return
        active.released = True
        if active.host is None and self.pool is active.pool and _busy_after_stop(active):
            recycle = getattr(self.pool, "recycle_busy", None)
            if recycle is not None:  # a Ray pool replaces its busy actors and keeps the rest
                logger.info("replaced %d Ray actors still busy after a stop", recycle())
            else:
                logger.info("ending worker processes still busy after a stop")
                self.pool = make_pool(self.settings.workers, self.settings.backend)
                active.retire_pool = True
        self._call_soon(self._finished, active, messages)

    def _warn_store_failed(self, message: str) -> None:
        self._call_soon(self.hub.publish, p.Error("store_failed", message))

    def _call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """`fn(*args)` on the loop, after everything handed to it before (from any thread)."""
        if self._outbox is not None:
            self._outbox.post(fn, *args)

    def _finished(self, active: ActiveRun, messages: Sequence[p.ServerMessage]) -> None:
        if self.active is active:
            self.active = None
        self.desk.cancel_all()
        self.hub.publish_all(messages)
        end = next((m for m in messages if isinstance(m, RunFinished)), None)
        for hook in self.on_finished:
            hook(end or _end_message(active, "failed"))

    # -- control -----------------------------------------------------------------------------
    def require_active(self) -> ActiveRun:
        if self.active is None:
            raise conflict("no run is going", "no_run")
        return self.active

    def _control(self, active: ActiveRun, op: str, node: str | None = None) -> None:
        if active.host is not None:
            active.host.send(("control", active.run_id, op, node))

    def pause(self) -> None:
        active = self.require_active()
        active.control.pause()
        self._control(active, "pause")

    def resume(self) -> None:
        active = self.require_active()
        active.control.resume()
        self._control(active, "resume")

    def step(self, node: str | None) -> None:
        active = self.require_active()
        if node is not None and node not in active.graph.nodes:
            raise bad_message(f"the run has no node {node!r}")
        active.control.step(node)
        self._control(active, "step", node)

    def stop(self) -> None:
        active = self.require_active()
        active.control.stop()
        self.desk.cancel_all()
        self._control(active, "stop")
        if self._loop is not None:
            self._loop.call_later(STOP_GRACE, self._interrupt, active)

    def _interrupt(self, active: ActiveRun) -> None:
        """The run did not stop by itself (node code stuck in a loop, or in C): end its run
        host; on `serve --ray`, interrupt its thread. See NOTE [ Stop ]."""
        if self.active is not active or active.released or active.ended:
            return
        if active.host is not None:
            logger.warning(
                "run %s did not stop in %.0fs; ending its host", active.run_id, STOP_GRACE
            )
            active.host.kill()  # its reader thread ends the run when the pipe closes
            return
        thread = active.thread
        if thread is not None and thread.is_alive():
            logger.warning("run %s did not stop in %.0fs; interrupting", active.run_id, STOP_GRACE)
            interrupt(thread)
            if self._loop is not None:
                self._loop.call_later(ABANDON_GRACE, self._abandon, active)

    def _abandon(self, active: ActiveRun) -> None:
        """The interrupt did not land (node code blocked in C): declare the run stopped and
        leave its thread behind; see NOTE [ Stop ]."""
        if self.active is not active or active.ended:
            return
        grace = STOP_GRACE + ABANDON_GRACE
        reason = f"node code did not stop within {grace:.0f} s (blocked outside Python?)"
        logger.warning("run %s: %s; its thread is left behind", active.run_id, reason)
        active.abandoned = True
        if self.pool is active.pool:  # the stuck thread keeps the old pool, closed now
            self.pool = make_pool(self.settings.workers, self.settings.backend)
            threading.Thread(target=active.pool.close, name="graphbook-close", daemon=True).start()
        run_id, error = active.run_id, f"stopped: {reason}"
        self.recorder.submit(lambda s: s.finish_run(run_id, "stopped", {}, error))
        # after the messages its thread handed over before, which the outbox still holds
        self._call_soon(self._finished, active, [_end_message(active, "stopped")])

    def refuse_while_running(self, workflow: str) -> None:
        running = self.active.config.workflow if self.active is not None else self.starting
        if running == workflow:
            raise conflict(f"{workflow} is running; stop the run first", "run_active")

    # -- prompts, cache, outputs -------------------------------------------------------------
    def answer(self, prompt_id: str, answer: Any) -> None:
        info = self.hub.view.prompts.get(prompt_id)
        if info is None:
            raise not_found(f"no open prompt {prompt_id!r} (answered already, or the run ended)")
        check_answer(info.prompt, answer)
        active = self.active
        if active is not None and active.host is not None:
            if prompt_id in active.answered:
                raise not_found(f"prompt {prompt_id!r} was answered already")
            active.answered.add(prompt_id)
            active.host.send(("answer", info.node_id, answer))
            return
        if not self.desk.answer(info.node_id, answer):
            raise not_found(f"prompt {prompt_id!r} was answered already")

    async def clear(self, workflow: str, node: str | None) -> p.CacheCleared:
        name = self.files.name(workflow)
        self.refuse_while_running(name)
        if isinstance(self.cache, OutputCache):
            dropped = self.cache.workflow(name).clear(node)
        else:
            dropped = await self._ask("clear", name, node)
        cleared = p.CacheCleared(name, dropped)
        self.hub.publish(cleared)
        return cleared

    async def output(self, workflow: str, node: str, output: str, index: int) -> p.OutputItem:
        name = self.files.name(workflow)
        if isinstance(self.cache, OutputCache):
            items = self.cache.workflow(name).items(node, output)
            found = None if items is None else (len(items), _item(items, index))
            shown = self.full_previewer(found[1]) if found is not None else None
        else:
            found = await self._ask("output", name, node, output, index)
            shown = found[1] if found is not None else None
        if found is None:
            raise not_found(f"no outputs of node {node!r} are kept for {name}; run it first")
        count = found[0]
        if not 0 <= index < count:
            raise not_found(f"node {node!r} has {count} dict(s) on {output!r}, not #{index}")
        return p.OutputItem(name, node, output, index, count, shown)

    async def _ask(self, method: str, *args: Any) -> Any:
        try:
            return await self._host().ask(method, *args)
        except HostGone:
            raise ServerError(503, "conflict", "the run process is restarting; try again") from None


def _busy_after_stop(active: ActiveRun) -> bool:
    current = active.pool.stats()
    if not active.control.stopping or current is None:
        return False
    return bool(current.load.running or current.dump.running or current.load.waiting)


def _item(items: list[Any], index: int) -> Any:
    return items[index] if 0 <= index < len(items) else None


def _end_message(active: ActiveRun, status: Literal["failed", "stopped"]) -> RunFinished:
    """The end of a run the executor did not report (it failed outside, or was abandoned)."""
    seconds = max(0.0, time.time() - active.began)
    return RunFinished(active.run_id, status, seconds, {}, 1 if status == "failed" else 0)


def _target(request: p.Run, graph: Graph) -> str | None:
    node = request.node
    if request.mode == "until" and node is None:
        raise bad_message('mode "until" needs the node to run up to')
    if request.mode == "trigger" and node is None:
        raise bad_message('mode "trigger" needs the node to run again')
    if node is not None and node in graph.off:
        word = OFF_WORDS[graph.off[node]]
        raise bad_message(f"node {node!r} is {word}, so it does not run; turn it back on first")
    if node is not None and node not in graph.nodes:
        raise bad_message(f"the workflow has no node {node!r}")
    if request.mode == "trigger" and node is not None and graph.nodes[node].spec.is_resource:
        raise bad_message(f"node {node!r} is a resource; re-trigger a source or a step")
    return node


def refuse_broken_files(graph: Graph, registry: Registry) -> None:
    """Raises WorkflowError naming each node whose node file has stopped loading (a syntax
    error saved): it would run the last definition that loaded, not the file as it is now."""
    problems = []
    for node in graph.nodes.values():
        failure = registry.broken_file(node.spec.name)
        if failure is not None:
            message = (
                f"its node file {Path(failure.path).name} does not load ({failure.error}); "
                f"a run now would use the last {node.spec.name} that loaded"
            )
            fix = "fix the file (the palette shows its error); the run starts once it loads"
            problems.append(Problem(node.id, message, fix))
    if problems:
        raise WorkflowError(problems)
