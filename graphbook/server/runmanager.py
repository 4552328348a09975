"""RunManager: the server's interactive runs, one at a time, each in the run host (a child
process, graphbook/server/runhost/, NOTE [ Run host ]), on `serve --ray` too (the host is then
the Ray driver).

Outputs are cached per workflow file between runs (graphbook.engine.cache); the run can be
paused, stepped, resumed and stopped; prompts wait for any client's answer; every run is
recorded in the run store. Events travel from the run (the host's pipe reader) to the event
loop through the Outbox, in order, and are published by the Hub. Starting a run reads and
checks its workflow in a thread: the loop never builds a graph (4,000 nodes took it 0.9 s).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from graphbook import protocol as p
from graphbook.engine.control import RunControl
from graphbook.engine.executor import Backend, RayBackend, titles
from graphbook.engine.ray.connection import local_ray_address
from graphbook.engine.ray.detached import LEASE, LEASE_SETTING
from graphbook.errors import WorkflowError
from graphbook.events import Event, RunFinished, RunStarted
from graphbook.graph import Graph
from graphbook.outputs import shown_outputs
from graphbook.registry import Registry
from graphbook.run_request import CheckedRun, check_run
from graphbook.server.desk import check_answer
from graphbook.server.errors import ServerError, bad_message, conflict, not_found
from graphbook.server.gallery import GalleryQuery, GalleryQueryError, check_query
from graphbook.server.history import HistorySink, Recorder, RunConfig
from graphbook.server.hub import Hub
from graphbook.server.media import MediaStore
from graphbook.server.outbox import Outbox
from graphbook.server.results import RESULTS, place
from graphbook.server.runhost.messages import (
    Answer,
    ClearCached,
    HostConfig,
    HostExited,
    KeepResults,
    Pause,
    ReadGallery,
    ReadImage,
    ReadOutput,
    Report,
    Request,
    Resume,
    RunCrashed,
    RunEnded,
    RunEvent,
    RunOrder,
    RunOutputs,
    Step,
    Stop,
)
from graphbook.server.runhost.parent import HostCache, HostGone, HostPool, RunHost
from graphbook.server.settings import ServerSettings
from graphbook.server.workflows import WorkflowFiles, from_body
from graphbook.store import Store
from graphbook.workflow import Workflow

logger = logging.getLogger(__name__)
R = TypeVar("R")
STOP_GRACE = 2.0
"""Seconds a stopped run has to end by itself before its run host is ended."""

HOST_LOAD = 60.0
"""Seconds the server waits at its start for its run host to load (imports, node files)."""
RECORD_GRACE = 1.0
"""Seconds a run's end waits for its record to be written before clients are told: a store
that another process holds locked delays the record (written later), not the run."""
FOLD_WAIT = 5.0
"""Seconds a run's end waits for the loop to read what its nodes did, to record it."""

# NOTE [ Stop ]
#
# Stop asks the executor to stop (it checks between units of work), and cancels open prompts.
# Work in worker processes (or Ray actors) is the pool's: a stopped run's busy workers are ended
# (the pool is replaced; on Ray, only the busy actors are).
#
# Every run executes in the run host (graphbook/server/runhost/, NOTE [ Run host ]), on
# `serve --ray` too: node code that ignores the request gets STOP_GRACE seconds, then the host is
# ended with SIGKILL, whatever the code is doing (a loop, a call blocked in C, a C call holding
# the GIL), its worker processes with it (on Ray its load and dump actors are kept: the next
# host attaches to them and kills those still busy, graphbook/engine/ray/detached.py). The run is
# recorded `stopped`, with the node details the server had folded from the run's messages until
# then; a fresh host starts, and the workflows whose cached outputs the old one held re-run their
# nodes with the cause `lost`. Nothing is left behind, and the server takes the next run at once
# (it waits in the new host's pipe until the host has loaded).


@dataclass
class ActiveRun:
    run_id: str
    config: RunConfig
    control: RunControl
    graph: Graph
    began: float
    """time.time() when it started."""
    host: RunHost
    """The run host it runs in."""
    history: HistorySink
    ended: bool = False
    """The host has said the run is over (or the host has ended)."""
    released: bool = False
    """The run manager has been told the run is over (`RunManager._release`)."""
    order: RunOrder | None = None
    """What the host was sent to run (sent again if the host ended before it began)."""
    heard: bool = False
    """The host has sent a message of this run: it began there."""
    resent: bool = False
    """The order went to a second host once (it is not sent a third time)."""


class RunManager:
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
        self.host: RunHost | None = None
        """The run host (NOTE [ Run host ]): every run goes there."""
        self.backend: Backend = settings.backend
        """Where the host's pool works; on `serve --ray`, with the address every host joins and
        the namespace its actors are kept in (`_kept`, in `open`)."""
        self.cache = HostCache(settings.cache_budget, self._host)
        self.pool = HostPool(self._host)
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
        self.results = settings.data.resolve() / RESULTS
        """Where app runs write their files and keep their results (server/results.py)."""
        self.on_finished: list[Callable[[RunFinished], None]] = []
        """Called on the loop with each run's end, once clients were told and runs are taken
        again (the job queue starts its next job)."""

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._outbox = Outbox(self._loop)
        if isinstance(self.backend, RayBackend):
            self.backend = await asyncio.to_thread(_kept, self.backend)
        # the server is ready when it can run: its run host has loaded
        self.host = host = await asyncio.to_thread(self._new_host, frozenset())
        if not await asyncio.to_thread(host.ready.wait, HOST_LOAD):
            logger.warning("the run host has not loaded in %.0f s; runs wait for it", HOST_LOAD)

    async def close(self) -> None:
        self._closing = True  # a run being read and checked now does not start
        active = self.active
        if active is not None:
            active.history.interrupted = True  # as its job will say
            active.control.stop()
        if self.host is not None:
            await asyncio.to_thread(self.host.close, STOP_GRACE * 2)
        await asyncio.to_thread(self.recorder.close)

    # -- the run host ------------------------------------------------------------------------
    def _host(self) -> RunHost:
        if self.host is None:
            raise HostGone("the run host has not started")
        return self.host

    def _new_host(self, lost: frozenset[str]) -> RunHost:
        settings = self.settings
        budget = self.cache.budget
        config = HostConfig(
            settings.nodes,
            settings.roots(),
            settings.workers,
            budget,
            lost,
            self.backend,
            self.media.thumbnails.secret,
            frozenset(self.registry.failures),
        )
        return RunHost(config, self._from_host)

    def _from_host(self, host: RunHost, report: Report) -> None:
        """A report from a run host (in its reader thread), in the order it was sent."""
        if isinstance(report, HostExited):
            self._host_exited(host, report.code)
            return
        active = self._current
        if active is None or active.host is not host or active.run_id != report.run_id:
            return
        active.heard = True
        match report:
            case RunEvent(_, event, messages):
                self._deliver(active, event, messages)
            case RunOutputs(_, outputs):
                active.history.outputs(outputs)
            case RunCrashed(_, error):
                active.history.error = active.history.error or error
                self._deliver(active, _end_message(active, "failed"), None)
            case RunEnded():
                active.ended = True

    def _deliver(
        self, active: ActiveRun, event: Event | None, messages: Sequence[p.ServerMessage] | None
    ) -> None:
        """Record and publish one event of a hosted run, as the run's own thread did."""
        if active.released:
            return
        shown: Sequence[p.ServerMessage] = (
            messages if messages is not None else [event] if isinstance(event, RunFinished) else []
        )
        if isinstance(event, RunFinished):  # clients that see the end find it recorded
            before, end = shown[:-1], shown[-1:] or [event]  # held-back logs, then the end
            if before:
                self._call_soon(self.hub.publish_all, before)
            active.history.finished(event, self._nodes_at_end(event))
            self.recorder.wait(RECORD_GRACE)
            self._release(active, end)
            return
        active.history(event)
        if shown:
            self._call_soon(self.hub.publish_all, shown)

    def _nodes_at_end(self, end: RunFinished) -> list[p.NodeSnapshot] | None:
        """What each node of the run did, from the hub's view (the server's one fold of the
        run), read on the loop once every message before `end` is folded there. None if the
        loop did not answer within FOLD_WAIT (the server is stopping)."""
        answer: Future[list[p.NodeSnapshot] | None] = Future()

        def read() -> None:
            try:
                answer.set_result(self.hub.view.nodes_after(end))
            except Exception as exc:
                answer.set_exception(exc)
                raise

        self._call_soon(read)
        try:
            return answer.result(FOLD_WAIT)
        except Exception:
            logger.warning("run %s: its nodes are not recorded (no answer)", end.run_id)
            return None

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
            if self._resend(active, host):
                return
        if not active.heard:  # clients never saw it start: they see it start and fail
            start = _start_message(active)
            self._deliver(active, start, [start])
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
            active.history.error = active.history.error or reason
            self._deliver(active, _end_message(active, status), None)
        active.ended = True

    def _resend(self, active: ActiveRun, ended: RunHost) -> bool:
        """Send a run whose host ended before the run began there (a host killed from outside
        between runs, found by the next run) to the host started in its place, once; True if
        sent. Called holding the host lock."""
        fresh = self.host
        if active.heard or active.resent or active.order is None or fresh is None:
            return False
        if ended.killed or active.control.stopping or active.released:
            return False
        active.resent = True
        active.host = fresh
        logger.warning(
            "run %s: its run process ended before the run began; sent to a new one", active.run_id
        )
        return fresh.run(active.order)

    # -- starting ----------------------------------------------------------------------------
    async def start(self, request: p.RunRequest) -> str:
        """Check and start a run; raises ServerError when it cannot start. The workflow is
        read and checked (run_request.check_run) in a thread; meanwhile the manager is
        `starting` and refuses other runs as it does while one is active."""
        self._refuse_another()
        name = self.files.name(request.workflow)
        registry = self.registry.copy()  # a reload of node files may replace the registry's
        run_id = uuid.uuid4().hex[:12]
        self.starting = name
        try:
            prepared = await asyncio.to_thread(self._prepare, request, name, registry, run_id)
        finally:
            self.starting = None
        checked, config, keep = prepared
        if self._closing:
            raise conflict("the server is shutting down", "conflict")
        control = RunControl()
        if config.request.stepping is not None:
            control.step(config.node)
        history = HistorySink(self.recorder, config)
        graph = checked.graph
        assert graph is not None  # _prepare refused it otherwise
        with self._host_lock:
            if self.host is None:
                self.host = self._new_host(self._lost)
            active = ActiveRun(run_id, config, control, graph, time.time(), self.host, history)
            order = RunOrder(run_id, config.request, checked.workflow, keep=keep)
            self._start_hosted(active, order)
        return run_id

    async def check(self, request: p.RunRequest) -> None:
        """Raise the ServerError `start` would raise for the request's workflow, overrides,
        inputs and node (read and checked in a thread), without starting it."""
        name = self.files.name(request.workflow)
        await asyncio.to_thread(self._checked, request, name, self.registry.copy())

    def _start_hosted(self, active: ActiveRun, order: RunOrder) -> None:
        """Send the run to its host (holding the host lock). A host that has ended and whose
        reader has not yet started the next one is sent nothing: that reader, waiting on the
        lock, sends the run to the new host (`_resend`)."""
        order = replace(order, skip=frozenset(self.registry.failures))
        active.order = order
        self.active = self._current = active
        active.host.run(order)

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
        self, request: p.RunRequest, name: str, registry: Registry, run_id: str
    ) -> tuple[CheckedRun, RunConfig, KeepResults | None]:
        """The run checked, what its record keeps and, for an app's run, the results it keeps
        (in a thread); raises ServerError for what is wrong with it. An app's run writes its
        files into its own folder (results.place)."""
        folder = self.results / run_id
        checked, workflow, files = self._checked(request, name, registry, folder)
        params = {n.id: dict(n.params) for n in checked.workflow.nodes.values()}
        config = RunConfig(checked.request, params, workflow.to_json())
        if not request.app:
            return checked, config, None
        outputs = shown_outputs(checked.workflow, registry)
        return checked, config, KeepResults(folder, outputs, files)

    def _checked(
        self, request: p.RunRequest, name: str, registry: Registry, folder: Path | None = None
    ) -> tuple[CheckedRun, Workflow, dict[str, list[str]]]:
        """The request checked (run_request.check_run), the workflow it names (the file's,
        or the request's inline graph) and, for an app's run placed in `folder`, the files its
        nodes write; raises ServerError for what is wrong with it."""
        if request.graph is not None:
            workflow = from_body(request.graph, name)
            workflow.library = self.files.library
        else:
            workflow = self.files.load(name)
        request = replace(request, workflow=name, graph=None)  # the graph is the workflow now
        files: dict[str, list[str]] = {}
        if request.app and folder is not None:
            request, files = place(request, workflow, registry, folder)
        checked = check_run(request, workflow, registry)
        refused = refusal(checked)
        if refused is not None:
            raise refused
        return checked, workflow, files

    def _release(self, active: ActiveRun, messages: Sequence[p.ServerMessage] = ()) -> None:
        """The run has ended: free the manager for the next run, then send its last `messages`
        (run_finished), in one step on the loop, so that no client sees run_finished while
        runs are refused. (Workers a stopped run left busy are the host's to end.)"""
        if active.released:
            return
        active.released = True
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
        self.hub.publish_all(messages)
        end = next((m for m in messages if isinstance(m, RunFinished)), None)
        for hook in self.on_finished:
            hook(end or _end_message(active, "failed"))

    # -- control -----------------------------------------------------------------------------
    def require_active(self) -> ActiveRun:
        if self.active is None:
            raise conflict("no run is going", "no_run")
        return self.active

    def pause(self) -> None:
        active = self.require_active()
        active.control.pause()
        active.host.send(Pause(active.run_id))

    def resume(self) -> None:
        active = self.require_active()
        active.control.resume()
        active.host.send(Resume(active.run_id))

    def step(self, node: str | None) -> None:
        active = self.require_active()
        if node is not None and node not in active.graph.nodes:
            raise bad_message(f"the run has no node {node!r}")
        active.control.step(node)
        active.host.send(Step(active.run_id, node))

    def stop(self) -> None:
        active = self.require_active()
        active.control.stop()  # the host cancels its open prompts
        active.host.send(Stop(active.run_id))
        if self._loop is not None:
            self._loop.call_later(STOP_GRACE, self._interrupt, active)

    def _interrupt(self, active: ActiveRun) -> None:
        """The run did not stop by itself (node code stuck in a loop, or in C): end its run
        host. See NOTE [ Stop ]."""
        if self.active is not active or active.released or active.ended:
            return
        logger.warning("run %s did not stop in %.0fs; ending its host", active.run_id, STOP_GRACE)
        active.host.kill()  # its reader thread ends the run when the pipe closes

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
        if active is None:
            raise not_found(f"no open prompt {prompt_id!r} (the run ended)")
        active.host.send(Answer(info.node_id, answer))
        # answered now for every client and wait, not once the run process says so (it
        # says so too: a second prompt_answered changes nothing)
        self.hub.publish(p.PromptAnswered(active.run_id, prompt_id, info.node_id, answer))

    async def clear(self, workflow: str, node: str | None) -> p.CacheCleared:
        name = self.files.name(workflow)
        self.refuse_while_running(name)
        dropped = await self._ask(ClearCached(name, node))
        cleared = p.CacheCleared(name, dropped)
        self.hub.publish(cleared)
        return cleared

    async def output(
        self, workflow: str, node: str, output: str, index: int, *, brief: bool = False
    ) -> p.OutputItem:
        """Dict #index of a node's output in the workflow's last run, previewed in full (or,
        `brief`, as the live view previews it)."""
        name = self.files.name(workflow)
        found = await self._ask(ReadOutput(name, node, output, index, brief))
        if found is None:
            raise not_found(f"no outputs of node {node!r} are kept for {name}; run it first")
        count = found.count
        if not 0 <= index < count:
            raise not_found(f"node {node!r} has {count} dict(s) on {output!r}, not #{index}")
        return p.OutputItem(name, node, output, index, count, found.shown)

    async def gallery(
        self, workflow: str, node: str, output: str, query: GalleryQuery
    ) -> p.GalleryPage:
        """A page of a node's dicts on `output`, filtered and sorted where they are kept."""
        name = self.files.name(workflow)
        try:
            check_query(query)
        except GalleryQueryError as exc:
            raise bad_message(str(exc)) from None
        found = await self._ask(ReadGallery(name, node, output, query))
        if found is None:
            raise not_found(f"no outputs of node {node!r} are kept for {name}; run it first")
        return found

    async def image(self, media_id: str) -> bytes | None:
        """An image a run made, as PNG: the bytes fetched before, else from the run host that
        keeps it (encoded there the first time); None if it is no longer kept."""
        data = await asyncio.to_thread(self.media.encoded, media_id)
        if data is None:
            data = await self._ask(ReadImage(media_id))
            if data is not None:
                self.media.put(media_id, data)
        return data

    async def _ask(self, request: Request[R]) -> R:
        try:
            return await self._host().ask(request)
        except HostGone:
            raise ServerError(503, "conflict", "the run process is restarting; try again") from None


def _kept(backend: RayBackend) -> RayBackend:
    """The Ray backend of the server's run hosts: a local Ray lives with the server (a host
    ended by a Stop does not take it down), and the pool's actors are kept in a namespace of
    this server's, so that the next host attaches to them warm
    (graphbook/engine/ray/detached.py)."""
    address = backend.address if backend.address is not None else local_ray_address()
    lease = float(os.environ.get(LEASE_SETTING) or LEASE)
    return replace(backend, address=address, keep=f"graphbook-{uuid.uuid4().hex}", lease=lease)


def _start_message(active: ActiveRun) -> RunStarted:
    """The start of a run whose host ended before the run began there."""
    config = active.config
    nodes = titles(active.graph)
    return RunStarted(active.run_id, config.workflow, config.mode, config.node, nodes, active.began)


def _end_message(active: ActiveRun, status: Literal["failed", "stopped"]) -> RunFinished:
    """The end of a run the executor did not report (it failed outside, or its host ended)."""
    seconds = max(0.0, time.time() - active.began)
    return RunFinished(active.run_id, status, seconds, {}, 1 if status == "failed" else 0)


def refusal(checked: CheckedRun) -> ServerError | None:
    """What the HTTP API (and every front end over it) answers a run with problems: 400 for a
    request whose mode's node cannot be one, 422 listing the workflow's problems."""
    problems = checked.problems
    if not problems:
        return None
    if checked.about == "request":
        return bad_message(problems[0].message)
    return ServerError(422, "invalid_workflow", str(WorkflowError(problems)), problems)
