"""RunHostChild: the run host's own side, the child process where a served run's engine runs
(see NOTE [ Run host ] in parent.py, whose RunHost starts it and talks to it).

It loads the registry from the server's node folder, keeps the output cache and the worker
pool, and runs one run at a time in its run thread; its main thread answers the server's
messages (messages.py: run controls, prompt answers, cache reads and changes) meanwhile. What
it sends back, in order over one pipe: the run's messages as clients get them (logs limited and
previewed here) with the events the run store needs, replies, and RunEnded. The images the
previews show are kept here, encoded when the server first asks for one.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from graphbook import protocol as p
from graphbook.engine.cache import OutputCache, WorkflowCache
from graphbook.engine.control import RunControl
from graphbook.engine.executor import Executor, make_pool
from graphbook.engine.pool import Pool
from graphbook.engine.ray.pool import RayPool
from graphbook.errors import GraphbookError
from graphbook.events import Event, NodeError, NodeFinished, NodeMetrics, RunFinished, RunStarted
from graphbook.graph import Graph, build_graph
from graphbook.node_index import node_files
from graphbook.nodes import library_registry
from graphbook.registry import file_key
from graphbook.server.desk import PromptDesk
from graphbook.server.gallery import Selections
from graphbook.server.gallery import page as gallery_page
from graphbook.server.loglimit import LogLimiter
from graphbook.server.media import MediaStore
from graphbook.server.previews import FULL, LIVE, Previewer
from graphbook.server.results import keep
from graphbook.server.runhost.messages import (
    Answer,
    CacheUsage,
    Call,
    ClearCached,
    Close,
    ForgetCached,
    FromHost,
    HostConfig,
    KeepResults,
    KeptOutputs,
    OutputShown,
    Pause,
    ReadCacheUsage,
    ReadGallery,
    ReadImage,
    ReadOutput,
    ReadPoolStats,
    Ready,
    Refused,
    RenameCached,
    Replied,
    Request,
    Resume,
    RunControlMessage,
    RunCrashed,
    RunEnded,
    RunEvent,
    RunOrder,
    RunOutputs,
    SetCacheBudget,
    Step,
    Stop,
    ToHost,
)

logger = logging.getLogger(__name__)
CLOSE_GRACE = 3.0
"""Seconds a run has to end when the server closes the host, before the host ends anyway."""
RECORDED = (RunStarted, NodeError, NodeMetrics, NodeFinished, RunFinished)
"""The events the server's run history needs as they are (the others only as clients see them)."""


@dataclass
class HostState:
    controls: dict[str, RunControl] = field(default_factory=dict)
    """The controls of the runs ordered and not yet ended, by run id. Each is made when its
    order arrives, not when the run thread takes it: a Stop sent right after the order is
    kept, not dropped (which left the run going until the server ended the host)."""
    files: dict[str, tuple[int, int]] = field(default_factory=dict)


class RunHostChild:
    """The run host process: its registry, cache and pool, its run thread, and its end of the
    pipe to the server."""

    def __init__(self, conn: Connection, config: HostConfig) -> None:
        self.conn = conn
        self.config = config
        self._send_lock = threading.Lock()
        self.registry = library_registry()
        self.state = HostState()
        self._load_nodes(config.skip)
        self.cache = OutputCache(config.cache_budget)
        self.cache.lost = set(config.lost)
        media = MediaStore(config.roots, secret=config.thumb_secret)
        self.media = media
        self.selections = Selections()
        self.previewer = Previewer(media, LIVE)
        self.full_previewer = Previewer(media, FULL)
        self.kept_previewer = KeptPreviewer(media, LIVE)
        self.desk = PromptDesk()
        self.pool: Pool = make_pool(config.workers, config.backend)
        self.orders: queue.Queue[RunOrder | None] = queue.Queue()
        self.runner = threading.Thread(target=self._runs, name="graphbook-host-run", daemon=True)

    # -- the pipe ----------------------------------------------------------------------------
    def send(self, message: FromHost) -> None:
        with self._send_lock:
            self.conn.send(message)

    def serve(self) -> None:
        """Answer the server until it closes the pipe (or sends Close)."""
        self.runner.start()
        self.send(Ready())
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):  # the server is gone (killed): so is its run
                os._exit(0)  # the workers end with this process (PR_SET_PDEATHSIG)
            if isinstance(message, Close):
                break
            self._handle(message)
        self._close()

    def _handle(self, message: ToHost) -> None:
        match message:
            case RunOrder():
                self.state.controls[message.run_id] = ordered_control(message)
                self.orders.put(message)
            case Answer(node_id, answer):
                self.desk.answer(node_id, answer)
            case Call(call, request):
                self._call(call, request)
            case Pause() | Resume() | Step() | Stop():
                self._control(message)

    def _control(self, message: RunControlMessage) -> None:
        control = self.state.controls.get(message.run_id)
        if control is None:
            return
        match message:
            case Stop():
                control.stop()
                self.desk.cancel_all()
            case Pause():
                control.pause()
            case Resume():
                control.resume()
            case Step(_, node):
                control.step(node)

    def _call(self, call: int, request: Request[Any]) -> None:
        try:
            value = self._answer(request)
        except Exception as exc:
            self.send(Refused(call, f"{type(exc).__name__}: {exc}"))
        else:
            self.send(Replied(call, value))

    def _close(self) -> None:
        for control in list(self.state.controls.values()):
            control.stop()
        self.desk.cancel_all()
        self.orders.put(None)
        self.runner.join(CLOSE_GRACE)
        self.pool.close()

    # -- requests with replies ---------------------------------------------------------------
    def _answer(self, request: Request[Any]) -> Any:
        """The reply to `request` (messages.py says what each is answered with)."""
        cache = self.cache
        match request:
            case ReadCacheUsage():
                return CacheUsage(*cache.usage())
            case SetCacheBudget(budget):
                return cache.set_budget(budget)
            case RenameCached(old, new):
                return cache.rename(old, new)
            case ForgetCached(name):
                return cache.forget(name)
            case ClearCached(name, node):
                return cache.workflow(name).clear(node)
            case ReadOutput():
                return self._output(request)
            case ReadGallery():
                return self._gallery(request)
            case ReadPoolStats():
                return self.pool.stats()
            case ReadImage(media_id):
                return self.media.encoded(media_id)
        raise TypeError(f"the run host has no answer to a {type(request).__name__}")

    def _output(self, request: ReadOutput) -> OutputShown | None:
        items = self.cache.workflow(request.name).items(request.node, request.output)
        if items is None:
            return None
        if not 0 <= request.index < len(items):
            return OutputShown(len(items), None)
        preview = self.previewer if request.brief else self.full_previewer
        return OutputShown(len(items), preview(items[request.index]))

    def _gallery(self, request: ReadGallery) -> p.GalleryPage | None:
        name, node, output = request.name, request.node, request.output
        items = self.cache.workflow(name).items(node, output)
        if items is None:
            return None
        link, selections = self.media.link, self.selections
        return gallery_page(name, node, output, items, request.query, link, selections)

    # -- runs --------------------------------------------------------------------------------
    def _runs(self) -> None:
        while True:
            order = self.orders.get()
            if order is None:
                return
            self._run(order)

    def _run(self, order: RunOrder) -> None:
        request = order.request
        control = self.state.controls[order.run_id]  # made as the order arrived (_handle)
        limit = LogLimiter(self.previewer)

        def sink(event: Event) -> None:
            if isinstance(event, RunFinished):  # its outputs, before clients see it ended
                cache = self.cache.workflow(request.workflow)
                outputs = kept_outputs(cache, event.counts, self.kept_previewer)
                self.send(RunOutputs(order.run_id, outputs))
                if order.keep is not None:
                    keep_results(order.run_id, order.keep, cache)
            kept = event if isinstance(event, RECORDED) else None
            self.send(RunEvent(order.run_id, kept, limit(event)))

        try:
            self._load_nodes(order.skip)
            graph = self._graph(order)
            executor = Executor(
                self.pool,
                continue_on_error=request.continue_on_error,
                prompter=self.desk.ask,
                previewer=self.previewer,
            )
            executor.run(
                graph,
                sink,
                until=request.until,
                trigger=request.trigger,
                control=control,
                cache=self.cache.workflow(request.workflow),
                run_id=order.run_id,
                workflow=request.workflow,
            )
        except BaseException as exc:  # a bug, or a graph that no longer builds here
            logger.exception("run %s ended abnormally", order.run_id)
            self.send(RunCrashed(order.run_id, f"the run ended abnormally: {exc!r:.300}"))
        finally:
            self.desk.cancel_all()
            self._renew_pool_if_busy(control)
            self.state.controls.pop(order.run_id, None)
            self.send(RunEnded(order.run_id))

    def _renew_pool_if_busy(self, control: RunControl) -> None:
        """Stop is real for worker processes too: a stopped run's busy workers are ended."""
        stats = self.pool.stats()
        if not control.stopping or stats is None:
            return
        if not (stats.load.running or stats.dump.running or stats.load.waiting):
            return
        if isinstance(self.pool, RayPool):  # the idle actors stay, warm
            logger.info("replaced %d Ray actors still busy after a stop", self.pool.recycle_busy())
        else:
            logger.info("ending worker processes still busy after a stop")
            old, self.pool = self.pool, make_pool(self.config.workers, self.config.backend)
            threading.Thread(target=old.close, name="graphbook-close", daemon=True).start()

    def _graph(self, order: RunOrder) -> Graph:
        """The run's graph; a node file that failed to import here is named in the error."""
        try:
            return build_graph(order.workflow, self.registry)
        except GraphbookError as exc:
            failed = "; ".join(f"{f.path}: {f.error}" for f in self.registry.failures.values())
            if not failed:
                raise
            raise GraphbookError(f"{exc} (node files that failed to import: {failed})") from exc

    def _load_nodes(self, skip: frozenset[str]) -> None:
        """Import the node files that are new or changed since the last look, as the server's
        catalog does, but for those it found failing (`skip`: one may end this process); drop
        those deleted. The cache stays: a node's key has its code."""
        root = self.config.nodes
        if not root.is_dir():
            return
        now = {}
        for path in node_files(root):
            try:
                stat = path.stat()
            except OSError:
                continue
            if file_key(path, root) not in skip:
                now[str(path)] = (stat.st_mtime_ns, stat.st_size)
        before = self.state.files
        for name, seen in now.items():
            if before.get(name) != seen:
                self.registry.load_file(Path(name), root)
        for name in set(before) - set(now):
            self.registry.unload_file(name)
        self.state.files = now


def ordered_control(order: RunOrder) -> RunControl:
    """The control of an ordered run: stepping from its first unit when the order says so."""
    control = RunControl()
    if order.request.stepping is not None:
        control.step(order.request.stepping or None)
    return control


class KeptPreviewer(Previewer):
    """Previews kept with a run in the store: an image in memory is said, not sent (the
    server keeps a bounded number of them; an image file's path outlives them)."""

    def image(self, value: Any) -> Any:
        size = getattr(value, "size", None)
        return {"type": "image", "size": list(size) if size else None, "kept": False}


KEPT_PER_OUTPUT = 5
"""Dicts of each output of each node whose previews a run keeps in the store."""
KEPT_PER_RUN = 200
"""Previews a run keeps in the store in all (the first nodes' first)."""


def kept_outputs(cache: WorkflowCache, counts: dict[str, Any], preview: Previewer) -> KeptOutputs:
    """Previews of the first dicts of each output of the run's nodes (`counts`: the nodes
    it ran or reused), at most KEPT_PER_OUTPUT an output and KEPT_PER_RUN in all."""
    kept: KeptOutputs = {}
    left = KEPT_PER_RUN
    for node in counts:
        entry = cache.entry(node)
        for output, items in entry.by_output.items() if entry is not None else ():
            shown = items[: min(KEPT_PER_OUTPUT, left)]
            left -= len(shown)
            previews = [preview(item) for item in shown]
            kept.setdefault(node, {})[output] = {"count": len(items), "items": previews}
    return kept


def keep_results(run_id: str, order: KeepResults, cache: WorkflowCache) -> None:
    """An app's run keeps its results (server/results.py) before it is seen ended; a failure
    to write them is logged, and the run ends as it did."""
    try:
        keep(order, cache)
    except Exception:
        logger.exception("run %s: its results could not be kept in %s", run_id, order.folder)


def main(fd: int) -> None:
    """The run host process: a fresh interpreter (`RunHost` starts `python -c` with a call of it),
    never a fork of the threaded server; its first message is its `HostConfig`."""
    logging.basicConfig(level=logging.WARNING, format="run host: %(levelname)s %(message)s")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # its own session: the server decides; a
    # KeyboardInterrupt here came from node code (a node file's import records it as its error)
    conn = Connection(fd)
    config: HostConfig = conn.recv()
    RunHostChild(conn, config).serve()
