"""Session: the server's interactive runs, one at a time, each in a background thread.

Outputs are cached per workflow file between runs (graphbook.engine.cache); the run can be
paused, stepped, resumed and stopped; prompts wait at the PromptDesk for any client's answer;
every run is recorded in the run store. Events travel from the executor's thread to the event
loop through the Outbox, in order, and are published by the Hub. Starting a run reads and
checks its workflow in a thread: the loop never builds a graph (4,000 nodes took it 0.9 s).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from graphbook import protocol as p
from graphbook.engine.cache import OutputCache
from graphbook.engine.control import RunControl, interrupt
from graphbook.engine.executor import Executor, make_pool
from graphbook.engine.pool import InlinePool, Pool
from graphbook.errors import GraphbookError, WorkflowError
from graphbook.events import Event, RunFinished
from graphbook.graph import Graph, build_graph
from graphbook.modes import OFF_WORDS
from graphbook.overrides import with_overrides
from graphbook.registry import Registry
from graphbook.server.desk import PromptDesk, check_answer
from graphbook.server.errors import ServerError, bad_message, conflict, not_found
from graphbook.server.history import HistorySink, Recorder, RunConfig
from graphbook.server.hub import Hub
from graphbook.server.media import MediaStore
from graphbook.server.outbox import Outbox
from graphbook.server.previews import FULL, LIVE, Previewer
from graphbook.server.settings import ServerSettings
from graphbook.server.translate import Translator
from graphbook.server.workflows import WorkflowFiles, from_body
from graphbook.store import Store

logger = logging.getLogger(__name__)
STOP_GRACE = 2.0
"""Seconds a stopped run has to end by itself before its thread is interrupted."""
ABANDON_GRACE = 3.0
"""Seconds an interrupted run has to end before it is declared stopped and its thread left
behind: Stop ends every run within STOP_GRACE + ABANDON_GRACE; see NOTE [ Stop ]."""

RECORD_GRACE = 1.0
"""Seconds a run's end waits for its record to be written before clients are told: a store
that another process holds locked delays the record (written later), not the run."""

# NOTE [ Stop ]
#
# Stop asks the executor to stop (it checks between units of work), and cancels open prompts.
# Work in worker processes is the pool's: a stopped run's busy workers are ended (the pool is
# replaced). Node code in the run's own thread that ignores the request gets STOP_GRACE seconds,
# then a KeyboardInterrupt at its next Python instruction (`interrupt`). Code blocked in C (an
# Event.wait(), a socket read without timeout) never reaches one: after ABANDON_GRACE more
# seconds the run is declared stopped (run_finished, the store), its thread is abandoned (a
# daemon thread: it holds what it holds until it returns or the server ends), it gets a pool of
# its own, no longer the session's, and nothing it does later reaches clients or the store. The
# server takes new runs at once. Python cannot kill a thread, so code that blocks while holding
# the GIL freezes the whole server: no Stop can help there.


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
        self.cache = OutputCache(settings.cache_budget)
        self.desk = PromptDesk()
        self.previewer = Previewer(media, LIVE)
        self.full_previewer = Previewer(media, FULL)
        self.pool: Pool = InlinePool()
        self.active: ActiveRun | None = None
        self.starting: str | None = None
        """The workflow of the run being read and checked (`start`), before it is active."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outbox: Outbox | None = None
        self._closing = False
        self.recorder = Recorder(store, self._warn_store_failed)
        """Every write of run history, in its own thread (never on the loop)."""

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._outbox = Outbox(self._loop)
        self.pool = make_pool(self.settings.workers, self.settings.backend)

    async def close(self) -> None:
        self._closing = True  # a run being read and checked now does not start
        active = self.active
        if active is not None:
            active.control.stop()
            self.desk.cancel_all()
            if active.thread is not None:
                await asyncio.to_thread(active.thread.join, STOP_GRACE * 2)
        await asyncio.to_thread(self.pool.close)
        await asyncio.to_thread(self.recorder.close)

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
            graph, config = await asyncio.to_thread(self._prepare, request, name, registry)
        finally:
            self.starting = None
        if self._closing:
            raise conflict("the server is shutting down", "conflict")
        control = RunControl()
        if request.mode == "step":
            control.step(config.node)
        active = ActiveRun(uuid.uuid4().hex[:12], config, control, graph, self.pool, time.time())
        active.thread = threading.Thread(
            target=self._run, args=(active,), name=f"graphbook-run-{active.run_id}", daemon=True
        )
        self.active = active
        active.thread.start()
        return active.run_id

    def _refuse_another(self) -> None:
        if self.active is not None:
            raise conflict(f"run {self.active.run_id} is still going; stop it first", "run_active")
        if self.starting is not None:
            raise conflict(f"a run of {self.starting} is starting; wait for it", "run_active")

    def _prepare(self, request: p.Run, name: str, registry: Registry) -> tuple[Graph, RunConfig]:
        """The run's graph and what it runs, checked (in a thread)."""
        if request.graph is not None:
            workflow = from_body(request.graph, name)
        else:
            workflow = self.files.load(name)
        try:
            running = with_overrides(workflow, request.overrides)
            graph = build_graph(running, registry)
        except WorkflowError as exc:
            raise ServerError(422, "invalid_workflow", str(exc), exc.problems) from None
        except GraphbookError as exc:
            raise ServerError(422, "invalid_workflow", str(exc)) from None
        node = _target(request, graph)
        params = {n.id: dict(n.params) for n in running.nodes.values()}
        overrides = {k: dict(v) for k, v in (request.overrides or {}).items()} or None
        config = RunConfig(
            name,
            request.mode,
            node,
            params,
            request.continue_on_error,
            workflow.to_json(),
            overrides,
        )
        return graph, config

    # -- the run's thread --------------------------------------------------------------------
    def _run(self, active: ActiveRun) -> None:
        config = active.config
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
        if self.pool is active.pool and _busy_after_stop(active):
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

    # -- control -----------------------------------------------------------------------------
    def require_active(self) -> ActiveRun:
        if self.active is None:
            raise conflict("no run is going", "no_run")
        return self.active

    def pause(self) -> None:
        self.require_active().control.pause()

    def resume(self) -> None:
        self.require_active().control.resume()

    def step(self, node: str | None) -> None:
        active = self.require_active()
        if node is not None and node not in active.graph.nodes:
            raise bad_message(f"the run has no node {node!r}")
        active.control.step(node)

    def stop(self) -> None:
        active = self.require_active()
        active.control.stop()
        self.desk.cancel_all()
        if self._loop is not None:
            self._loop.call_later(STOP_GRACE, self._interrupt, active)

    def _interrupt(self, active: ActiveRun) -> None:
        """The run did not stop by itself (node code stuck in a loop): interrupt its thread."""
        thread = active.thread
        stuck = self.active is active and not active.ended
        if stuck and thread is not None and thread.is_alive():
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
        if not self.desk.answer(info.node_id, answer):
            raise not_found(f"prompt {prompt_id!r} was answered already")

    def clear(self, workflow: str, node: str | None) -> p.CacheCleared:
        name = self.files.name(workflow)
        self.refuse_while_running(name)
        cleared = p.CacheCleared(name, self.cache.workflow(name).clear(node))
        self.hub.publish(cleared)
        return cleared

    def output(self, workflow: str, node: str, output: str, index: int) -> p.OutputItem:
        name = self.files.name(workflow)
        items = self.cache.workflow(name).items(node, output)
        if items is None:
            raise not_found(f"no outputs of node {node!r} are kept for {name}; run it first")
        if not 0 <= index < len(items):
            raise not_found(f"node {node!r} has {len(items)} dict(s) on {output!r}, not #{index}")
        item = self.full_previewer(items[index])
        return p.OutputItem(name, node, output, index, len(items), item)


def _busy_after_stop(active: ActiveRun) -> bool:
    current = active.pool.stats()
    if not active.control.stopping or current is None:
        return False
    return bool(current.load.running or current.dump.running or current.load.waiting)


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
