"""The Ray pool: load and dump functions run in Ray actors, on this machine or a cluster.

It implements the worker-pool seam (`graphbook.engine.pool`), so the executor, its scheduling,
the one event stream, counts, previews, prompts and stop stay on the driver exactly as in a
local run; only the work that a local run gives to worker processes goes to Ray. Each kind of
task (load, dump) has its own actors, so writing never waits behind loading. A lane's function
is put in Ray's object store once and learned once by each actor that runs it. Outcomes are
object refs until taken; a lane's capacity bounds the tasks in flight, so memory is flat in the
dataset's size. Tasks travel in small groups, as one call costs the driver about as much as
decoding an image. An actor that dies is replaced: the task that killed it is reported failed
(or run again, `retries` times), and the others it held run again (see `RayPool._bury`).

Ray is optional (`pip install 'graphbook[ray]'`): this module imports it only when a pool is
made, and says how to install it when it is missing.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from graphbook.engine.pool import (
    Done,
    Failed,
    Kind,
    Notice,
    NoticeLevel,
    OrderedLane,
    Outcome,
    call,
)
from graphbook.engine.ray.detached import (
    LEASE,
    Keeping,
    Lease,
    attach,
    code_namespace,
    named,
    release,
    watch,
)
from graphbook.engine.ray.nodes import DRIVER, Node, Nodes, dumps_notice, dumps_problem
from graphbook.engine.ray.ship import job_env, runtime_env, shippable
from graphbook.engine.ray.sizing import GROWING, Decision, Limits, Load, Sizer, summary
from graphbook.engine.ray.stage import AUTO, stages_problem
from graphbook.registry import NODES_PACKAGE

if TYPE_CHECKING:
    from graphbook.engine.ray.stage import RayStage, Watcher
    from graphbook.engine.ray.transfer import Packed
    from graphbook.steps import BatchStep
from graphbook.errors import GraphbookError
from graphbook.events import ErrorInfo, KindStats, PoolStats
from graphbook.logs import collect_in_this_process

logger = logging.getLogger(__name__)

KINDS: tuple[Kind, ...] = ("load", "dump")
PLACED: tuple[Kind, ...] = ("dump", "load")
"""The order a pool's first actors are placed in: dumps first, where they must go (the driver's
node), loads in the room left."""
LOCAL = "local"
"""The address that means: start Ray on this machine (or use the Ray this process runs)."""
GROUP = 16
"""Tasks of one lane sent in one actor call, at most. Each call costs the driver, the actor and
Ray's raylet about 1.5 ms of CPU in all (its reply goes through the object store), as much as
decoding a small image: a group shares that cost (bench/README.md, "Graphbook on Ray")."""
PER_ACTOR = 2 * GROUP
"""Tasks queued on one actor at a time: two full groups, so an actor starts the next group
while the driver takes the last one back. The rest wait on the driver, so a new actor (one
that replaced a dead one) or an idle one gets work first."""
PRELOAD = ("numpy", "torch", "torchvision", "PIL.Image")
"""Modules an actor imports as it starts, if the driver has imported them."""
INSTALL = "pip install 'graphbook[ray]'"
FILE_ERRORS = frozenset(
    {"FileNotFoundError", "NotADirectoryError", "IsADirectoryError", "PermissionError", "OSError"}
)
FOLDER_HINT = (
    " (this Ray node does not have the driver's folder {folder}, which relative paths and the "
    "nodes' path parameters mean: mount it at the same path on every node, or give paths on "
    "shared storage or remote URIs)"
)
SPILL_CHECK = 10.0
"""Seconds between looks at how much Ray's object store has spilled to disk."""
SPILLED = (
    "Ray's object store is full and has spilled {mib:.0f} MiB to disk during this run, which "
    "slows it down (6x, measured): fewer dicts in flight help (a smaller batch size, fewer "
    "--workers), or more object store memory (ray start --object-store-memory BYTES)"
)
CLIENT = "not this machine unless it is a node of the cluster"
"""Where a Ray Client driver's files land (its driver runs on the node that serves it)."""
ACTOR_CPUS = 1.0
"""CPUs each load and dump actor reserves by default, so that an autoscaler sees the demand of
actors that do not fit (`--ray-actor-cpus`)."""
CPU_CHECK = 5.0
"""Seconds between looks at the cluster's CPUs (the default maximum of actors)."""
NO_ROOM = (
    "the pool's first {count} actors would reserve {need:g} CPUs ({cpus:g} each) and the Ray "
    "cluster has {free:g} free where they go: they reserve none, as --ray-actor-cpus 0 would; "
    "actors the pool adds as work waits reserve {cpus:g} each"
)
AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"
AUTH_NOTICE = "Token authentication is enabled for this Ray cluster"


_OPEN_POOLS = [0]
_POOLS_STARTED_RAY = [False]
"""Pools open in this process, and whether one of them started (or joined) Ray: the last one
closed shuts it down. Ray that something else started (a test session, `graphbook serve`)
stays up."""


def require_ray() -> ModuleType:
    """The `ray` module, or an error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise GraphbookError(
            f"the Ray backend needs Ray, which is not installed: {INSTALL}"
        ) from None
    return ray


@contextmanager
def _driver_path() -> Iterator[None]:
    """While a local Ray starts, its workers inherit PYTHONPATH: give them this process's
    sys.path, so they import what the driver imports (as forked workers do)."""
    before = os.environ.get("PYTHONPATH")
    paths = dict.fromkeys(os.path.abspath(p or os.curdir) for p in sys.path)  # '' is the cwd
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in paths if os.path.isdir(p))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


class _DropAuthNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(AUTH_NOTICE)


@contextmanager
def _without_auth_notice() -> Iterator[None]:
    """A new local Ray turns token authentication on (unless RAY_AUTH_MODE says otherwise) and
    logs a warning that it did, on every start. Authentication stays on; the notice is not shown
    (docs/scale.md). Any other message of that logger still is."""
    auth = logging.getLogger(AUTH_LOGGER)
    notice = _DropAuthNotice()
    auth.addFilter(notice)
    try:
        yield
    finally:
        auth.removeFilter(notice)


def connect(
    address: str | None = None, num_cpus: int | None = None, ship: Sequence[str] = ()
) -> bool:
    """Join Ray: the one this process already runs, else a new local one (`None` or `local`:
    always a new one, never a cluster that happens to run here), else the cluster at `address`
    (`auto`, `ray://host:port`, `host:port`; through Ray Client, the folders to `ship` go with
    the job, `ship.job_env`). Returns True when this call started or joined it (and so the
    caller should shut it down). A failure is an error that says what to do."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    quiet = {"include_dashboard": False, "logging_level": logging.WARNING}
    local = address in (None, LOCAL)
    try:
        if local:
            with _driver_path(), _without_auth_notice():
                ray.init(address="local", num_cpus=num_cpus, **quiet)
            _watch_local_ray(ray)
        else:
            _check_auth(str(address))
            env = job_env(ship) if is_client(address) else None
            ray.init(address=address, logging_level=logging.WARNING, runtime_env=env)
    except Exception as exc:
        where = "a local Ray" if local else f"the Ray cluster at {address!r}"
        raise GraphbookError(f"could not start or join {where}: {_why(exc)}") from exc
    return True


def is_client(address: str | None) -> bool:
    """Whether `address` joins through Ray Client (`ray://host:port`): this process is then
    not a node of the cluster, the client server on the head runs its driver for it."""
    return str(address or "").startswith("ray://")


def local_ray_address() -> str:
    """The address of the Ray this process runs, started here (a new local one, with its
    watchdog) if it runs none: other processes of this machine join it there, and it outlives
    them (`graphbook serve --ray` holds it; its run hosts come and go)."""
    connect(LOCAL)
    return str(require_ray().get_runtime_context().gcs_address)


AUTH_HINT = (
    "auth: the cluster uses token authentication and refused this driver; set "
    "RAY_AUTH_MODE=token and the cluster's token in RAY_AUTH_TOKEN (or the file "
    "~/.ray/auth_token; `ray get-auth-token` on the head prints it)"
)


def _check_auth(address: str) -> None:
    """Ask the cluster's GCS once whether it takes this driver's token: `ray.init` retries a
    refused token for 20 s, printing a warning each second, then fails without saying why."""
    if address.startswith("ray://") or ":" not in address:
        return
    import importlib

    raylet: Any = importlib.import_module("ray._raylet")
    try:
        raylet.GcsClient(address=address)
    except Exception as exc:
        if _is_auth(exc):
            raise GraphbookError(AUTH_HINT) from exc  # anything else: ray.init says it


def _is_auth(exc: BaseException | None) -> bool:
    while exc is not None:
        if "Authentication" in type(exc).__name__ or "InvalidAuthToken" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _why(exc: BaseException) -> str:
    """The first line of Ray's error (its tracebacks stay out of the message), or the auth
    hint when the cluster refused the token."""
    if isinstance(exc, GraphbookError):
        return str(exc)
    if _is_auth(exc):
        return AUTH_HINT
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


WATCHDOG = Path(__file__).with_name("watchdog.py")


def _watch_local_ray(ray: ModuleType) -> None:
    """Start the watchdog that kills the Ray processes this process started when it dies, by
    any means (graphbook/engine/ray/watchdog.py): Ray's agents outlived a `kill -9` by 60 s."""
    if not sys.platform.startswith("linux"):
        return  # the watchdog reads /proc
    roots: list[int] = []
    with contextlib.suppress(Exception):  # Ray's own record of what it started
        node = ray._private.worker._global_node
        roots = [p.process.pid for ps in node.all_processes.values() for p in ps]
    if not roots:  # else everything under this process: Ray's processes among them
        children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
        with contextlib.suppress(OSError, ValueError):
            roots = [int(pid) for pid in children.read_text().split()]
    command = [sys.executable, "-I", str(WATCHDOG), str(os.getpid()), *map(str, roots)]
    try:
        _WATCHDOGS.append(
            subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
    except OSError as exc:
        logger.warning("could not start the local Ray's watchdog: %s", exc)


_WATCHDOGS: list[subprocess.Popen[bytes]] = []
"""The watchdogs of local Rays this process started (each exits when its Ray is shut down)."""


def _share_node_modules(ray: ModuleType) -> None:
    """Make node files' modules travel by value: Ray workers have no `graphbook_nodes`."""
    # Node files are imported under NODES_PACKAGE; Ray workers cannot import it, so its
    # modules travel by value (their code is pickled with the functions).
    if NODES_PACKAGE in sys.modules:
        ray.cloudpickle.register_pickle_by_value(sys.modules[NODES_PACKAGE])


class _Actor:
    """One Ray actor: learns lanes' functions, then runs their tasks in order, in the driver's
    folder when its machine has that folder (relative paths then mean what they mean there)."""

    def __init__(
        self,
        seed: int,
        cwd: str,
        preload: Sequence[str] = (),
        driver_node: str = "",
        shipped: Sequence[str] = (),
        keep: str = "",
        lease: float = LEASE,
    ) -> None:
        from graphbook.engine.ray.ship import importable

        if keep:  # kept across drivers: it ends itself when no driver renews the lease
            watch(keep, lease)
        collect_in_this_process()  # the metrics a task reports go back with its outcome
        importable(shipped)  # folders shipped with the pool import as on the driver
        self.fns: dict[int, Callable[..., Any] | ErrorInfo] = {}
        self.where = self.elsewhere = ""
        self.reset(seed, cwd, driver_node)
        self.preload(preload)

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        """The id of its node: answered once it has started (imports included)."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def reset(self, seed: int = 0, cwd: str = "", driver_node: str = "") -> str:
        """Serve a new driver (one that made it, or one that attaches): no lanes (its lanes are
        numbered anew), its folder, its seed, errors placed relative to its node. Returns the
        id of this actor's node."""
        import random

        import ray

        self.fns.clear()
        self.seed = seed
        self.where = _where(driver_node)
        self.elsewhere = "" if not cwd or os.path.isdir(cwd) else cwd
        """The driver's folder when this node does not have it (relative paths then miss)."""
        if cwd and not self.elsewhere:  # the driver's folder, where relative paths point
            os.chdir(cwd)
        random.seed(seed)
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.manual_seed(seed)
        return str(ray.get_runtime_context().get_node_id())

    def preload(self, modules: Sequence[str]) -> None:
        """Import what the driver has imported (torch: seconds), before the first task needs it."""
        import importlib

        had_torch = "torch" in sys.modules
        for module in modules:
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
        torch = sys.modules.get("torch")
        if torch is not None and not had_torch:
            torch.manual_seed(self.seed)
            torch.set_num_threads(1)

    def learn(self, lane: int, pickled: bytes) -> None:
        """Load a lane's function; one that cannot be loaded fails each of its tasks."""
        from ray import cloudpickle

        try:
            self.fns[lane] = cloudpickle.loads(pickled)
        except Exception as exc:
            error = ErrorInfo.from_exception(exc)
            message = f"the function could not be loaded on the Ray actor: {error.message}"
            hint = " (is the module it needs installed on every Ray node?)"
            self.fns[lane] = ErrorInfo(error.type, message + hint, error.traceback)

    def forget(self, lane: int) -> None:
        self.fns.pop(lane, None)

    def run(self, lane: int, packed: Packed, refs: Sequence[Any] = (), count: int = 0) -> Packed:
        """Run a group of tasks of one lane, in order; each outcome is a value. Tasks and
        outcomes are packed, so their tensors are not copied (graphbook/engine/ray/transfer.py);
        `refs`: the values kept in the object store that the `count` tasks take (fetched here)."""
        from graphbook.engine.ray.transfer import pack

        return pack(self._outcomes(lane, packed, refs, count))

    def run_kept(
        self, lane: int, packed: Packed, refs: Sequence[Any] = (), count: int = 0
    ) -> tuple[Any, ...]:
        """`run`, its values kept apart: (the outcomes without their values, the values). The
        driver reads the first and hands on the second as an object ref (called with
        `num_returns=2`), so the values stay in this node's object store."""
        from graphbook.engine.ray.transfer import pack

        outcomes = self._outcomes(lane, packed, refs, count)
        values = [o.value if isinstance(o, Done) else None for o in outcomes]
        bare = [Done(None) if isinstance(o, Done) else o for o in outcomes]
        for plain, outcome in zip(bare, outcomes, strict=True):
            if plain is not outcome and outcome.metrics:
                object.__setattr__(plain, "metrics", outcome.metrics)
        return pack(bare), pack(values)

    def _outcomes(
        self, lane: int, packed: Packed, refs: Sequence[Any], count: int
    ) -> list[Outcome]:
        from graphbook.engine.ray.transfer import spread, unpack_refs

        try:
            tasks: list[tuple[Any, ...]] = unpack_refs(packed, list(refs))
        except Exception as exc:  # a value it takes was lost (with its node)
            failed = Failed(ErrorInfo.from_exception(exc))
            return [self._placed(failed)] * count
        fn = self.fns.get(lane)
        if fn is None:
            fn = ErrorInfo("LookupError", "the actor has no function for this lane", "")
        if isinstance(fn, ErrorInfo):
            return [self._placed(Failed(fn)) for _ in tasks]
        return [self._placed(call(fn, spread(args))) for args in tasks]

    def _placed(self, outcome: Outcome) -> Outcome:
        """A failure on another node than the driver's says which node and host it ran on; a
        file not found where the driver's folder is missing says why relative paths missed."""
        if not isinstance(outcome, Failed):
            return outcome
        error = outcome.error
        message = error.message
        if self.elsewhere and error.type in FILE_ERRORS:
            message += FOLDER_HINT.format(folder=self.elsewhere)
        if self.where:
            message += f" (on {self.where})"
        if message == error.message:
            return outcome
        placed = Failed(replace(error, message=message))
        if outcome.metrics:  # what it reported goes back with it
            object.__setattr__(placed, "metrics", outcome.metrics)
        return placed


def _where(driver_node: str) -> str:
    """'Ray node ID on HOST' when this actor runs on another node than the driver, else ''."""
    import socket

    import ray

    node = ray.get_runtime_context().get_node_id()
    if not driver_node or node == driver_node:
        return ""
    return f"Ray node {node[:8]} on {socket.gethostname()}"


@dataclass
class Timings:
    """Where the driver's time went (seconds), for bench/ray.py."""

    sending: float = 0.0
    """Making calls: arguments serialized, calls queued to actors."""
    receiving: float = 0.0
    """Taking outcomes back: results fetched and deserialized."""
    waiting: float = 0.0
    """Blocked with nothing else to do until some call finished."""
    tasks: int = 0
    calls: int = 0
    """Actor calls that carried those tasks."""
    received: int = 0
    """Bytes of outcomes the driver read back (values kept in the object store not counted:
    they never reach it)."""


@dataclass(frozen=True)
class RayBackend:
    """Where a run's pool work goes when it runs on Ray: `address` None (or `local`) starts
    Ray here, `auto` or `ray://host:port` joins a cluster; `workers` actors per kind, exactly
    (0: as many as the work needs within `actors`); `retries` runs a task again when its actor
    dies."""

    address: str | None = None
    workers: int = 0
    actors: Limits = GROWING
    """With `workers` 0: the fewest and most actors per kind (graphbook/engine/ray/sizing.py)."""
    actor_cpus: float = ACTOR_CPUS
    """CPUs each load and dump actor reserves (0: none, they never wait to be placed)."""
    retries: int = 0
    models_on_actors: bool = False
    """Models run on actors of their own even on the CPU (with a GPU, they always do)."""
    ship: tuple[str, ...] = ()
    """Folders of Python modules that travel to every actor (the nodes folders, and more)."""
    keep: str | None = None
    """A namespace to keep the load and dump actors in, detached: the next pool made with it
    (by another process) attaches to them warm (graphbook/engine/ray/detached.py)."""
    lease: float = LEASE
    """With `keep`: seconds the kept actors outlive the last driver that renewed their lease."""
    dumps: str = DRIVER
    """Where dump actors run: `driver` (its node: what dump functions write lands on the
    driver's disk) or `anywhere` (every node, for outputs on shared storage or remote URIs)."""
    keep_after: float | None = None
    """Keep the actors for the next driver that runs the same code (`graphbook run --ray
    ADDRESS`): in the namespace of that code (`keep` is then ignored), left idle by `close()`
    for this many seconds (0: killed, as without it). None: the namespace is `keep`, and
    `close()` kills them (a server that shuts down)."""

    stages: str = AUTO
    """Where batch steps' `on_item_batch` runs: `on` stage actors (graphbook/engine/
    ray/stage.py), `off` the driver, `auto` stage actors when the cluster has nodes besides the
    driver's."""
    replicas: int = 0
    """Stage actors per batch step at most (0: one per node, one per GPU on GPU nodes)."""

    def pool(self, workers: int = 0) -> RayPool:
        return RayPool(
            self.address,
            workers or self.workers,
            actors=self.actors,
            actor_cpus=self.actor_cpus,
            retries=self.retries,
            models_on_actors=self.models_on_actors,
            ship=self.ship,
            keep=self.keep,
            lease=self.lease,
            dumps=self.dumps,
            keep_after=self.keep_after,
            stages=self.stages,
            replicas=self.replicas,
        )


@dataclass
class _Task:
    ticket: int
    lane: int
    kind: Kind
    args: tuple[Any, ...]
    deaths: int = 0
    """Times an actor died running this task, known for certain (it ran alone)."""
    suspect: bool = False
    """Its actor died while it was one of several calls: it runs again alone, to find out."""
    actor: _Handle | None = None


@dataclass(eq=False)
class _Handle:
    """The driver's view of one actor: its calls in flight (oldest first), lanes it knows."""

    actor: Any
    node: Node | None = None
    """The node it was placed on (None: where Ray chose)."""
    name: str = ""
    """Its name in the pool's namespace, when it is kept (detached.py)."""
    calls: deque[tuple[Any, tuple[int, ...]]] = field(default_factory=deque)
    """(object ref, tickets) of each call not yet collected, in the order they were made."""
    load: int = 0
    """Tasks in those calls."""
    lanes: set[int] = field(default_factory=set)
    dead: bool = False
    alone: bool = False
    """Running a suspect task: it gets nothing else until that task is back."""
    starting: Any = None
    """Until it has started: the object ref of its first call (its node's id)."""
    room: bool = True
    """Whether a node had room for it when it was asked for. One that had gets tasks while it
    starts (they run once it has, even if the driver is then busy for good); one that had not
    gets none until it has started (Ray may never place it: an autoscaler may add no node)."""
    cpus: float = 0.0
    """CPUs it reserves."""
    idle_since: float = field(default_factory=time.monotonic)
    """When it last had no task."""


class RayPool:
    """Ray actors for load functions and others for dump functions: `workers` of each, or
    (`workers` 0) `actors.least` of each to start with, grown as work waits for them up to
    `actors.most` (graphbook/engine/ray/sizing.py); each reserves `actor_cpus`. With
    `retries`, a task that killed its actor runs again (on another actor) up to that many
    times before it is reported failed. Dump actors run on the driver's node unless `dumps` is
    `anywhere` (graphbook/engine/ray/nodes.py)."""

    def __init__(
        self,
        address: str | None = None,
        workers: int = 0,
        *,
        actors: Limits = GROWING,
        actor_cpus: float = ACTOR_CPUS,
        retries: int = 0,
        num_cpus: int | None = None,
        models_on_actors: bool = False,
        ship: Sequence[str | os.PathLike[str]] = (),
        keep: str | None = None,
        lease: float = LEASE,
        dumps: str = DRIVER,
        keep_after: float | None = None,
        stages: str = AUTO,
        replicas: int = 0,
    ) -> None:
        if workers < 0 or retries < 0 or actor_cpus < 0 or replicas < 0:
            raise ValueError(
                "workers, retries, actor_cpus and replicas must be 0 or more, got "
                f"{workers}, {retries}, {actor_cpus}, {replicas}"
            )
        problem = dumps_problem(dumps) or stages_problem(stages)
        if problem is not None:
            raise GraphbookError(problem)
        self.stages = stages
        self.replicas = replicas
        self.dumps = dumps
        self._told_dumps = False
        """Whether this run's log was told where dump functions run."""
        self._ray = require_ray()
        from graphbook.engine.ray import transfer

        self._transfer = transfer
        self.shipped = shippable(ship)
        if connect(address, num_cpus, self.shipped):
            _POOLS_STARTED_RAY[0] = True
        _OPEN_POOLS[0] += 1
        self.limits = Limits.exactly(workers) if workers else actors
        self.actor_cpus = actor_cpus
        self.elastic = address not in (None, LOCAL)
        """Whether the cluster may grow (one joined, not a Ray started here): an actor with
        no room yet is then asked for all the same, and waits for a node."""
        self._cpus = (0.0, 0.0)
        """(when it was read, the cluster's CPUs then)."""
        self.workers = self.limits.most_now(self._cluster_cpus())
        """The most actors of each kind now (nodes join and leave)."""
        self._sizers = {kind: Sizer(self.limits) for kind in KINDS}
        self._warm: set[Kind] = set()
        """Kinds whose actors have sent outcomes back: until then, a slow first call (the
        function learned, modules imported) says nothing of the load."""
        self._run: dict[Kind, list[int]] = {}
        """Per kind used by the run: actors at its start, the most ready since, on how many
        nodes."""
        self.retries = retries
        self.models_on_actors = models_on_actors
        self._client = is_client(address)
        self._address = address
        self._nodes = Nodes(self._ray, probe=not self._client)
        self._driver_node = self._ray.get_runtime_context().get_node_id()
        options: dict[str, Any] = {"num_cpus": 0}  # each start says what its actor reserves
        self.runtime_env = runtime_env(self.shipped, sent=self._client)
        if self.runtime_env is not None:
            options["runtime_env"] = self.runtime_env
        self._remote = self._ray.remote(**options)(_Actor)
        if keep_after is not None:  # actors that run this code, placed alike, whoever made them
            keep = code_namespace((self.runtime_env or {}).get("py_modules", []), dumps)
        self.keep = keep
        """The namespace the actors are kept in (None: not kept)."""
        self.lease = lease
        self.keep_after = keep_after
        self.attached = 0
        """Actors this pool found warm, kept by a driver before it, and uses."""
        self._lease = Lease(keep, lease) if keep else None
        self._models = Keeping(keep, lease) if keep else None
        """The model actors this pool keeps, when it keeps its actors (models.py)."""
        self._actors: dict[Kind, list[_Handle]] = {kind: [] for kind in KINDS}
        self._backlog: dict[Kind, deque[int]] = {kind: deque() for kind in KINDS}
        self._tasks: dict[int, _Task] = {}
        self._refs: dict[Any, tuple[_Handle, tuple[int, ...]]] = {}
        """Object ref of each call in flight -> its actor and tickets, in the order made."""
        self._lanes: dict[int, RayLane] = {}
        self._keeps: set[int] = set()
        """Lanes whose values stay in the object store (`lane(keep=True)`)."""
        self._kept: dict[Any, tuple[Any, str]] = {}
        """Object ref of a call of such a lane -> the ref of its values, and their node."""
        self._watchers: list[Watcher] = []
        """Others whose calls `wait` waits for too (the stage actors of batch steps)."""
        self.spare_stages: list[Any] = []
        """Stage actors idle since their run ended, for the next run's (stage.py)."""
        self._fns: dict[int, Any] = {}
        """Lane id -> the object ref of the pickled function, or why it could not be pickled."""
        self._tickets = itertools.count()
        self._lane_ids = itertools.count()
        self._seed = secrets.randbits(32)
        self._numbers = itertools.count()
        self.closed = False
        self.timings = Timings()
        self._notices: list[Notice] = []
        self._told_struck: set[str] = set()
        """The nodes struck off that a run's log was told of."""
        self._spill = _Spill(self._ray)
        self._start_least()  # started now, they are ready by the first task
        if self.attached:
            self._notices.append(Notice("info", attached_notice(self.attached, address)))

    # -- the Pool protocol ----------------------------------------------------------------
    def lane(
        self, fn: Callable[..., Any], capacity: int, kind: Kind = "load", keep: bool = False
    ) -> RayLane:
        """A lane for `fn`; with `keep`, the values of its outcomes stay in the object store
        of the node that made them: each comes back as a `Kept` for another actor to read."""
        if kind not in KINDS:
            raise ValueError(f"a lane's kind is one of {KINDS}, got {kind!r}")
        self._check_open()
        lane = RayLane(self, next(self._lane_ids), kind, capacity)
        self._lanes[lane.id] = lane
        if kind not in self._run:
            live = sum(1 for h in self._actors[kind] if not h.dead)
            self._run[kind] = [live, *self._ready_on(kind)]
        if keep:
            self._keeps.add(lane.id)
        if kind == "dump":
            self._tell_dumps()
        _share_node_modules(self._ray)
        try:
            self._fns[lane.id] = self._ray.put(self._ray.cloudpickle.dumps(fn))
        except Exception as exc:
            error = ErrorInfo.from_exception(exc)
            name = getattr(fn, "__qualname__", fn)
            message = f"function {name!r} could not be sent to Ray: {error.message}"
            self._fns[lane.id] = ErrorInfo(error.type, message, error.traceback)
        return lane

    def wait(self, timeout: float) -> None:
        """Block until some call finishes (or `timeout` passes), then route what finished."""
        start = time.perf_counter()
        self.collect(timeout)
        self.timings.waiting += time.perf_counter() - start

    def close(self) -> None:
        """Stop the actors (and Ray itself, when this pool started it)."""
        if self.closed:
            return
        self.closed = True
        leave = bool(self.keep_after)
        for handles in self._actors.values():
            for handle in handles:
                if not (leave and self._idle(handle)):
                    self._end(handle)
        if self._lease is not None:
            self._lease.end(self.keep_after if leave else None)
        if leave and self.keep is not None:  # other drivers may attach to them now
            names = [h.name for hs in self._actors.values() for h in hs if not h.dead]
            release(self.keep, names)
        self._close_models(leave)
        self._actors = {kind: [] for kind in KINDS}
        self._tasks.clear()
        self._refs.clear()
        self._kept.clear()
        for watcher in list(self._watchers):
            watcher.close()
        for spare in self.spare_stages:
            with contextlib.suppress(Exception):
                self._ray.kill(spare.actor, no_restart=True)
        self.spare_stages.clear()
        _OPEN_POOLS[0] -= 1
        if _POOLS_STARTED_RAY[0] and not _OPEN_POOLS[0]:  # the last pool on a Ray a pool began
            _POOLS_STARTED_RAY[0] = False
            self._ray.shutdown()

    def _close_models(self, leave: bool) -> None:
        """Leave the kept model actors to the next driver (`leave`), else kill them."""
        if self._models is None:
            return
        if not leave:
            for actor in self._models.held.values():
                with contextlib.suppress(Exception):  # it died already
                    self._ray.kill(actor, no_restart=True)
        release(self._models.namespace, list(self._models.held))
        self._models.held.clear()

    def _idle(self, handle: _Handle) -> bool:
        """Whether an actor has started and has no call in flight (one that has could be busy
        for good)."""
        return not handle.dead and not handle.calls and handle.starting is None

    def _end(self, handle: _Handle) -> None:
        """Kill an actor (and forget its claim, when it was kept)."""
        handle.dead = True
        with contextlib.suppress(Exception):  # it died already
            self._ray.kill(handle.actor, no_restart=True)
        if handle.name and self.keep is not None:
            release(self.keep, [handle.name])

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def place_resource(self, node: Any, params: dict[str, Any]) -> Any:
        """Build a resource that asks for a GPU (every model, with `models_on_actors`) on an
        actor of its own; None: build it on the driver (graphbook/engine/ray/models.py).
        With stage actors, a model is built on the driver and travels in each replica of the
        steps that hold it, unless it asks for CUDA by name (the driver may have none)."""
        self._check_open()
        if self.stages_on and not str(params.get("device", "")).startswith("cuda"):
            return None
        _share_node_modules(self._ray)
        from graphbook.engine.ray.models import place

        attached = self._models.attached if self._models is not None else 0
        value = place(
            node,
            params,
            self.models_on_actors,
            self.retries,
            self.shipped,
            self.runtime_env,
            self._models,
        )
        if self._models is not None and self._models.attached > attached:
            notice = f"model {node.title!r}: attached to its warm Ray actor, kept by an earlier run"
            self._notices.append(Notice("info", notice))
        return value

    def notices(self) -> list[Notice]:
        """Information and warnings for the run's log, each once: warm actors attached to,
        where dump functions run, spilling, nodes struck off."""
        for node_id, why in self._nodes.struck.items():
            if node_id not in self._told_struck:
                self._told_struck.add(node_id)
                node = self._nodes.get(node_id)
                where = node.describe() if node is not None else f"Ray node {node_id[:8]}"
                self._notices.append(Notice("warning", f"{where} is not used any more: {why}"))
        notices, self._notices = self._notices, []
        return notices

    def notice(self, text: str, level: NoticeLevel = "info") -> None:
        """A line for the run's log (said once, with the next `notices`)."""
        logger.log(logging.WARNING if level == "warning" else logging.INFO, text)
        self._notices.append(Notice(level, text))

    @property
    def stages_on(self) -> bool:
        """Whether batch steps run `on_item_batch` on stage actors (`stages`)."""
        return self.stages == "on" or (self.stages == AUTO and self.ships)

    def stage(self, node_id: str, step: BatchStep, capacity: int) -> RayStage | None:
        """Stage actors for a batch step's `on_item_batch`, when they are on and the step may
        leave the driver; None: it runs on the driver (graphbook/engine/ray/stage.py)."""
        self._check_open()
        if not self.stages_on:
            return None
        _share_node_modules(self._ray)
        from graphbook.engine.ray.stage import stage_for

        return stage_for(self, node_id, step, capacity)

    def room(self) -> dict[str, float] | None:
        """The CPUs free on each live node for one more reservation: Ray's count less what the
        pool's actors and stage replicas asked for and Ray may not count yet (Ray counts an
        actor once it is placed; one still starting is taken as not counted, so a new actor
        never reserves a CPU another one holds). None when Ray does not say."""
        room = self._nodes.room()
        if room is None:
            return None
        asked = [
            (h.node, h.cpus)
            for kind in KINDS
            for h in self._group(kind)
            if h.starting is not None and h.cpus
        ]
        for watcher in self._watchers:
            asked.extend(watcher.asked())
        for node, cpus in asked:
            if node is not None and node.id in room:
                room[node.id] = max(0.0, room[node.id] - cpus)
        return room

    def watch(self, watcher: Watcher) -> None:
        """Have `wait` wait for `watcher`'s calls too, and hand them back to it."""
        self._watchers.append(watcher)

    def unwatch(self, watcher: Watcher) -> None:
        if watcher in self._watchers:
            self._watchers.remove(watcher)

    @property
    def ray(self) -> ModuleType:
        return self._ray

    @property
    def nodes(self) -> Nodes:
        return self._nodes

    @property
    def driver_node(self) -> str:
        return str(self._driver_node)

    @property
    def ships(self) -> bool:
        """Whether its work may run on other machines (the cluster has nodes besides the
        driver's): the executor then makes path parameters absolute first. On one node the
        actors work in the driver's folder, and a run's values are as in a local run."""
        return any(node.id != self._driver_node for node in self._nodes.refresh())

    def _tell_dumps(self) -> None:
        """Once a run: on a cluster of several nodes, where its dump functions run."""
        if self._told_dumps or len(self._nodes.refresh()) < 2:
            return
        self._told_dumps = True
        notice = dumps_notice(self.dumps, self._nodes.get(self._driver_node))
        if self._client and self.dumps == DRIVER:
            notice += f"; through Ray Client that is the node that serves {self._address}, {CLIENT}"
        logger.info(notice)
        self._notices.append(Notice("info", notice))

    def stats(self) -> PoolStats:
        """Tasks waiting on the driver and running (or queued) on actors, per kind."""

        def of(kind: Kind) -> KindStats:
            handles = self._group(kind)
            waiting = sum(1 for t in self._backlog[kind] if t in self._tasks)
            running = sum(h.load for h in handles)
            return KindStats(waiting, running, len(self._ready(kind)))

        return PoolStats(self.workers, of("load"), of("dump"))

    def recycle_busy(self) -> int:
        """After a stop: replace the actors still running the stopped run's tasks (a task may
        never end), drop its waiting tasks, and keep every other actor as it is, warm (the
        server's next run then starts at once). Returns how many actors were replaced."""
        replaced = 0
        for kind in KINDS:
            handles = self._actors[kind]
            for index, handle in enumerate(handles):
                if handle.dead or not handle.load:
                    continue
                for ref, tickets in handle.calls:
                    self._refs.pop(ref, None)
                    self._kept.pop(ref, None)
                    for ticket in tickets:
                        self._tasks.pop(ticket, None)
                self._end(handle)
                handles[index] = self._start(kind, handle.cpus)
                replaced += 1
            for ticket in self._backlog[kind]:
                self._tasks.pop(ticket, None)
            self._backlog[kind].clear()
        return replaced

    def describe(self) -> str:
        """Where the pool runs: the cluster's nodes, CPUs and GPUs, and the actors per kind."""
        resources = self._ray.cluster_resources()
        nodes = len(self._nodes.refresh())
        cpus, gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
        reserve = f"{self.actor_cpus:g} CPU each" if self.actor_cpus else "reserving no CPU"
        return (
            f"{nodes} node{'s' * (nodes != 1)}, {cpus} CPUs, {gpus} GPUs; "
            f"{self.limits.describe()} actors per kind, {reserve}"
        )

    def wait_ready(self) -> None:
        """Block until every actor has started (and imported what it preloads)."""
        self._ray.get([h.actor.pid.remote() for kind in KINDS for h in self._group(kind)])

    def pids(self, kind: Kind = "load") -> list[int]:
        """The process ids of the live actors of `kind` (starting them if need be)."""
        handles = self._group(kind)
        return list(self._ray.get([h.actor.pid.remote() for h in handles]))

    # -- tasks ----------------------------------------------------------------------------
    def submit(self, lane: RayLane, args: tuple[Any, ...]) -> int:
        self._check_open()
        ticket = next(self._tickets)
        fn = self._fns[lane.id]
        if isinstance(fn, ErrorInfo):
            lane.resolve(ticket, Failed(fn))
            return ticket
        self._tasks[ticket] = _Task(ticket, lane.id, lane.kind, args)
        self._backlog[lane.kind].append(ticket)  # `wait` sends it, in a group with others
        return ticket

    def forget(self, lane_id: int) -> None:
        """Drop a lane: its waiting tasks, its outcomes to come, its function in the actors."""
        self._lanes.pop(lane_id, None)
        self._keeps.discard(lane_id)
        if self._fns.pop(lane_id, None) is None or self.closed:
            return
        if not self._lanes:  # the run is over: the next one is told of its own spilling
            self._spill.rearm()
            self._told_dumps = False
            self._say_sizes()
            for kind in KINDS:
                self._cancel_unneeded(kind)
        for ticket, task in list(self._tasks.items()):
            if task.lane == lane_id and task.actor is None:
                del self._tasks[ticket]
        for handles in self._actors.values():
            for handle in handles:
                if lane_id in handle.lanes and not handle.dead:
                    handle.lanes.discard(lane_id)
                    handle.actor.forget.remote(lane_id)

    def collect(self, timeout: float) -> None:
        """Route every finished call's outcomes to their lanes (waiting up to `timeout` for
        one), replace dead actors, and hand waiting tasks to actors with room."""
        if self.closed:
            return
        for kind in KINDS:
            self._dispatch(kind)
        for watcher in self._watchers:
            watcher.dispatch()
        starting = {h.starting: h for hs in self._actors.values() for h in hs if h.starting}
        theirs = {ref: w for w in self._watchers for ref in w.refs()}
        if not self._refs and not starting and not theirs:
            return
        refs = [*self._refs, *starting, *theirs]
        ready, _ = self._ray.wait(refs, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
            self._started([starting[ref] for ref in ready if ref in starting])
            self._receive_all([ref for ref in ready if ref in self._refs])
            for watcher in self._watchers:
                watcher.receive([ref for ref in ready if theirs.get(ref) is watcher])
        for kind in KINDS:
            self._size(kind)
            self._dispatch(kind)
        spilled = self._spill.news()
        if spilled:
            logger.warning(spilled)
            self._notices.append(Notice("warning", spilled))

    def _receive_all(self, ready: list[Any]) -> None:
        if not ready:
            return
        start = time.perf_counter()
        try:
            groups = self._ray.get(ready)
        except Exception:  # some call failed as a whole (its actor died): one by one
            for ref in ready:
                self._receive_one(ref)
        else:
            for ref, packed in zip(ready, groups, strict=True):
                self._route(ref, self._outcomes(packed, len(self._refs[ref][1]), ref))
        self.timings.receiving += time.perf_counter() - start

    def _receive_one(self, ref: Any) -> None:
        entry = self._refs.get(ref)
        if entry is None or entry[0].dead:
            return
        try:
            packed = self._ray.get(ref)
        except self._ray.exceptions.RayActorError as exc:
            self._bury(entry[0], exc)
            return
        except Exception as exc:  # the results could not be read back
            self._route(ref, [Failed(ErrorInfo.from_exception(exc))] * len(entry[1]))
            return
        self._route(ref, self._outcomes(packed, len(entry[1]), ref))

    def _outcomes(self, packed: Any, count: int, ref: Any = None) -> list[Outcome]:
        """A call's outcomes, or `count` failures saying why they could not be read back; a
        kept lane's values stay where they are (`Kept`)."""
        try:
            outcomes: list[Outcome] = self._transfer.unpack(packed)
            self.timings.received += self._transfer.size(packed)
        except Exception as exc:
            return [Failed(ErrorInfo.from_exception(exc))] * count
        kept = self._kept.pop(ref, None)
        if kept is None:
            return outcomes
        return [self._keep(outcome, n, *kept) for n, outcome in enumerate(outcomes)]

    def _keep(self, outcome: Outcome, index: int, values: Any, node: str) -> Outcome:
        if not isinstance(outcome, Done):
            return outcome
        kept = Done(self._transfer.Kept(values, index, node))
        if outcome.metrics:
            object.__setattr__(kept, "metrics", outcome.metrics)
        return kept

    def _route(self, ref: Any, outcomes: list[Outcome]) -> None:
        handle, tickets = self._refs.pop(ref)
        handle.calls.remove((ref, tickets))
        handle.load -= len(tickets)
        handle.alone = False
        if not handle.load:
            handle.idle_since = time.monotonic()
        if tickets and tickets[0] in self._tasks:
            self._warm.add(self._tasks[tickets[0]].kind)
        for ticket, outcome in zip(tickets, outcomes, strict=True):
            self._resolve(ticket, outcome)
        self.timings.tasks += len(tickets)
        self.timings.calls += 1

    def _resolve(self, ticket: int, outcome: Outcome) -> None:
        task = self._tasks.pop(ticket, None)
        if task is None:
            return
        lane = self._lanes.get(task.lane)
        if lane is not None:
            lane.resolve(ticket, outcome)

    def _bury(self, handle: _Handle, exc: Exception) -> None:
        """An actor died. Calls whose outcomes arrived keep them. If one call was left, its task
        killed the actor: it fails (or runs again, `retries` times). If several were left,
        Ray cannot say which one ran (replies of finished calls may be lost with the actor):
        each runs again alone on an actor, so a task that kills its actor is found for sure."""
        self._end(handle)
        kind = next(k for k, hs in self._actors.items() if handle in hs)
        innocent = handle.node is not None and self._nodes.lost(handle.node, exc)
        logger.warning("a Ray %s actor died; starting another", kind)
        left: list[_Task] = []
        for ref, tickets in handle.calls:
            self._refs.pop(ref, None)
            outcomes = self._finished(ref, len(tickets))
            self._kept.pop(ref, None)
            for n, ticket in enumerate(tickets):
                task = self._tasks.get(ticket)
                if task is None:
                    continue
                task.actor = None
                if outcomes is not None:
                    self._resolve(ticket, outcomes[n])
                else:
                    left.append(task)
        handle.calls.clear()
        handle.load = 0
        handles = self._actors[kind]
        replacement = self._start(kind, handle.cpus)
        if not self._nodes.refresh() and self._nodes.struck:
            innocent = False  # no node is left to run them on: they fail, saying why
            exc = RuntimeError(f"no Ray node can run this pool's actors: {self._nodes.struck}")
        handles[handles.index(handle)] = replacement
        if innocent:  # lost with its node (or never started): not the tasks' fault
            self._backlog[kind].extendleft(reversed([task.ticket for task in left]))
            return
        if len(left) == 1:
            left[0].deaths += 1
        requeue = []
        for task in left:
            if task.deaths > self.retries:
                self._resolve(task.ticket, Failed(_died(kind, exc)))
            else:
                task.suspect = True
                requeue.append(task.ticket)
        self._backlog[kind].extendleft(reversed(requeue))

    def _finished(self, ref: Any, count: int) -> list[Outcome] | None:
        """The outcomes of a call of a dead actor, if it finished before the actor died."""
        try:
            packed = self._ray.get(ref, timeout=0)
        except Exception:
            return None
        return self._outcomes(packed, count, ref)

    def _dispatch(self, kind: Kind) -> None:
        """Hand waiting tasks to the least busy actors, in groups of one lane's tasks: a backlog
        is split between the idle actors, so none waits while another has a queue; else it goes
        in full groups, to actors that have work queued already. A suspect task waits for an
        idle actor and runs alone on it."""
        backlog = self._backlog[kind]
        while backlog:
            free = [h for h in self._takers(kind) if not h.alone and h.load < PER_ACTOR]
            first = self._tasks.get(backlog[0])
            if first is None or first.lane not in self._fns:
                backlog.popleft()
                continue
            if not free:
                return
            handle = min(free, key=lambda h: h.load)
            if first.suspect:
                if handle.load:
                    return
                self._give(handle, [self._tasks[backlog.popleft()]])
                continue
            idle = sum(1 for h in free if not h.load)
            share = -(-len(backlog) // idle) if idle else len(backlog)
            size = min(GROUP, PER_ACTOR - handle.load, share)
            self._give(handle, self._take(backlog, first.lane, size))

    def _take(self, backlog: deque[int], lane: int, size: int) -> list[_Task]:
        """Up to `size` tasks from the front of the backlog, all of `lane` and none suspect."""
        group: list[_Task] = []
        while backlog and len(group) < size:
            task = self._tasks.get(backlog[0])
            if task is not None and (task.lane != lane or task.suspect):
                break
            backlog.popleft()
            if task is not None:
                group.append(task)
        return group

    def _give(self, handle: _Handle, tasks: list[_Task]) -> None:
        if not tasks:
            return
        start = time.perf_counter()
        lane = tasks[0].lane
        if lane not in handle.lanes:
            handle.lanes.add(lane)
            handle.actor.learn.remote(lane, self._fns[lane])
        packed, refs = self._transfer.pack_refs([task.args for task in tasks])
        if lane in self._keeps:  # its values stay on the actor's node
            run = handle.actor.run_kept.options(num_returns=2)
            ref, values = run.remote(lane, packed, refs, len(tasks))
            self._kept[ref] = (values, handle.node.id if handle.node is not None else "")
        else:
            ref = handle.actor.run.remote(lane, packed, refs, len(tasks))
        tickets = tuple(task.ticket for task in tasks)
        for task in tasks:
            task.actor = handle
        handle.alone = tasks[0].suspect
        handle.calls.append((ref, tickets))
        handle.load += len(tasks)
        self._refs[ref] = (handle, tickets)
        self.timings.sending += time.perf_counter() - start

    def _group(self, kind: Kind) -> list[_Handle]:
        """The live actors of `kind`, started or not."""
        return [h for h in self._actors[kind] if not h.dead]

    def _takers(self, kind: Kind) -> list[_Handle]:
        """The actors of `kind` that take tasks: started, or sure to start (they had room)."""
        return [h for h in self._group(kind) if h.room or h.starting is None]

    def _ready(self, kind: Kind) -> list[_Handle]:
        """The actors of `kind` that have started: the ones tasks go to."""
        return [h for h in self._actors[kind] if not h.dead and h.starting is None]

    def _start_least(self) -> None:
        """Each kind's first actors: the warm ones a driver before this one kept, then new ones
        up to the minimum. They reserve `actor_cpus` each if all of them fit where they go
        (so the run never waits for room); else none, and the run's log says so."""
        missing: dict[Kind, int] = {}
        for kind in KINDS:
            if self.keep is not None:  # the idle actors a driver before this one kept
                self._actors[kind].extend(self._attach(kind))
            missing[kind] = max(0, self.limits.least - len(self._actors[kind]))
        plan = self._plan(missing)
        for kind in PLACED:
            for _ in range(missing[kind]):
                if plan is None:
                    self._actors[kind].append(self._start(kind, 0.0))
                else:
                    self._actors[kind].append(self._start_on(kind, self.actor_cpus, plan.pop(0)))

    def _plan(self, missing: dict[Kind, int]) -> list[Node | None] | None:
        """Nodes with room for the missing actors (in PLACED order) to reserve `actor_cpus`
        each; None when they reserve none (they would not all fit: said once)."""
        cpus, count = self.actor_cpus, sum(missing.values())
        if not cpus or not count:
            return None
        room = dict(self.room() or {})
        plan: list[Node | None] = []
        for kind in PLACED:
            counts = self._counts(kind)
            for _ in range(missing[kind]):
                node = self._place(kind, cpus, room, counts)
                if node is None or room.get(node.id, 0.0) < cpus:
                    free = sum(room.values()) + cpus * len(plan)
                    self._say(NO_ROOM.format(count=count, need=cpus * count, cpus=cpus, free=free))
                    return None
                room[node.id] -= cpus
                counts[node.id] = counts.get(node.id, 0) + 1
                plan.append(node)
        return plan

    def _counts(self, kind: Kind) -> dict[str, int]:
        """Node id -> live actors of `kind` there."""
        counts: dict[str, int] = {}
        for handle in self._group(kind):
            if handle.node is not None:
                counts[handle.node.id] = counts.get(handle.node.id, 0) + 1
        return counts

    def _grow(self, kind: Kind) -> None:
        """One more actor of `kind`, reserving `actor_cpus`, on the node with room and the
        fewest of its kind. With no room anywhere: on a cluster, asked for all the same (it
        waits for room, or for a node an autoscaler adds; the run goes on without it); on a
        Ray started here, none."""
        cpus = self.actor_cpus
        room = self.room() if cpus else None
        node = self._place(kind, cpus, room, self._counts(kind))
        fits = node is not None and (room is None or room.get(node.id, 0.0) >= cpus)
        if fits or self.elastic:
            handle = self._start_on(kind, cpus, node)
            handle.room = fits
            self._actors[kind].append(handle)
            logger.debug("%s actors: one more asked for (room: %s)", kind, fits)

    def _size(self, kind: Kind) -> None:
        """Grow, shrink or cancel as the kind's load says (graphbook/engine/ray/sizing.py)."""
        if self.limits.least == self.limits.most or kind not in self._warm:
            return  # exactly N, or not known yet
        now = time.monotonic()
        handles, ready = self._group(kind), self._ready(kind)
        waiting = sum(1 for ticket in self._backlog[kind] if ticket in self._tasks)
        idle = [now - h.idle_since for h in ready if not h.load]
        load = Load(
            len(ready), len(handles) - len(ready), waiting + sum(h.load for h in handles), len(idle)
        )
        decision = self._sizers[kind].observe(now, load, self._cluster_cpus(), idle)
        self._apply(kind, decision)

    def _apply(self, kind: Kind, decision: Decision) -> None:
        if decision.grow:
            self._grow(kind)
        if decision.cancel and self._unstarted(kind):
            self._drop(kind, self._unstarted(kind)[-1])
        for _ in range(decision.end):
            idle = [h for h in self._ready(kind) if not h.load]
            self._drop(kind, min(idle, key=lambda h: h.idle_since))

    def _cancel_unneeded(self, kind: Kind) -> None:
        """As a run ends: the actors beyond the minimum still waiting to start, newest first."""
        starting = self._unstarted(kind)
        while starting and len(self._group(kind)) > self.limits.least:
            self._drop(kind, starting.pop())

    def _unstarted(self, kind: Kind) -> list[_Handle]:
        """The actors of `kind` not started yet and holding no task: the ones to cancel."""
        return [h for h in self._group(kind) if h.starting is not None and not h.calls]

    def _drop(self, kind: Kind, handle: _Handle) -> None:
        """End an actor the work does not need (idle, or not started yet)."""
        self._end(handle)
        self._actors[kind].remove(handle)
        self._sizers[kind].restart()

    def _started(self, handles: list[_Handle]) -> None:
        """Actors that answered their first call: they take tasks from now on (one that
        could not start is buried: its node may be lost)."""
        for handle in handles:
            if handle.dead:
                continue
            kind: Kind = next(k for k, hs in self._actors.items() if handle in hs)
            try:
                node_id = self._ray.get(handle.starting)
            except self._ray.exceptions.RayActorError as exc:
                handle.starting = None
                self._bury(handle, exc)
                continue
            handle.starting = None
            handle.idle_since = time.monotonic()
            if handle.node is None:  # where Ray placed it
                self._nodes.refresh()
                handle.node = self._nodes.get(str(node_id))
            self._sizers[kind].restart()
            self._count_ready(kind)

    def _count_ready(self, kind: Kind) -> None:
        """The most actors of `kind` ready in this run so far, and on how many nodes."""
        seen = self._run.get(kind)
        if seen is None:
            return
        ready, nodes = self._ready_on(kind)
        if ready > seen[1]:
            seen[1:] = [ready, nodes]

    def _ready_on(self, kind: Kind) -> list[int]:
        ready = self._ready(kind)
        return [len(ready), len({h.node.id for h in ready if h.node is not None})]

    def _say_sizes(self) -> None:
        """Once a run, as it ends: what the pool did with its actors, as a note."""
        parts = []
        for kind, (first, peak, nodes) in self._run.items():
            parts.append(summary(kind, first, max(first, peak), max(nodes, 1), self.workers))
        self._run = {}
        if parts:
            self._say("; ".join(parts))

    def _say(self, text: str) -> None:
        logger.info(text)
        self._notices.append(Notice("info", text))

    def _cluster_cpus(self) -> float:
        """The cluster's CPUs as Ray counts them, read again every CPU_CHECK seconds (nodes
        join and leave); the most actors of a kind follows."""
        read, cpus = self._cpus
        now = time.monotonic()
        if not read or now - read >= CPU_CHECK:
            cpus = float(self._ray.cluster_resources().get("CPU", 1))
            self._cpus = (now, cpus)
            self.workers = self.limits.most_now(cpus)
        return cpus

    def _attach(self, kind: Kind) -> list[_Handle]:
        """The warm actors of `kind` kept in the pool's namespace, set up for this driver."""
        assert self.keep is not None
        cwd = os.getcwd()
        found = attach(
            self._ray,
            self.keep,
            kind,
            self.workers,
            lambda: (self._next_seed(), cwd, self._driver_node),
        )
        if kind == "dump" and self.dumps == DRIVER:  # what they write lands on the driver's disk
            release(self.keep, [w.name for w in found if w.node_id != self._driver_node])
            found = [w for w in found if w.node_id == self._driver_node]
        self._nodes.refresh()
        preload = self._preload()
        handles = []
        for warm in found:
            if preload:  # what this driver imported and theirs may not have
                warm.handle.preload.remote(preload)
            handles.append(_Handle(warm.handle, self._nodes.get(warm.node_id), warm.name))
        self.attached += len(handles)
        return handles

    def _start(self, kind: Kind, cpus: float) -> _Handle:
        """An actor of `kind` in place of one that died (or was busy), reserving `cpus` where
        it has room; with no room for it anywhere, it reserves none, so that it starts (it
        may be the only one of its kind: the run must not wait for room)."""
        counts = self._counts(kind)
        room = self.room() if cpus else None
        node = self._place(kind, cpus, room, counts)
        if cpus and (node is None or room is None or room.get(node.id, 0.0) < cpus):
            cpus, node = 0.0, self._place(kind, 0.0, None, counts)
        return self._start_on(kind, cpus, node)

    def _start_on(self, kind: Kind, cpus: float, node: Node | None) -> _Handle:
        options: dict[str, Any] = named(kind, self.keep) if self.keep is not None else {}
        options["num_cpus"] = cpus
        if node is not None:  # pinned: Ray's SPREAD may put every actor on one node
            options["scheduling_strategy"] = self._nodes.strategy(node)
        remote = self._remote.options(**options)
        args = (self._next_seed(), os.getcwd(), self._preload(), self._driver_node, self.shipped)
        actor = remote.remote(*args, self.keep or "", self.lease)
        logger.debug("started a Ray %s actor on %s", kind, node and node.describe())
        return _Handle(
            actor, node, options.get("name", ""), starting=actor.node.remote(), cpus=cpus
        )

    def _next_seed(self) -> int:
        return (self._seed + next(self._numbers)) % 2**32

    @staticmethod
    def _preload() -> list[str]:
        return [name for name in PRELOAD if name in sys.modules]

    def _place(
        self, kind: Kind, cpus: float, room: dict[str, float] | None, counts: dict[str, int]
    ) -> Node | None:
        """The node for a new actor that reserves `cpus`: the driver's for dumps (unless they
        may run anywhere), else the one with room and the fewest of its kind (`counts`);
        None: where Ray finds room."""
        if kind != "dump" or self.dumps != DRIVER:
            return self._nodes.fewest(counts, cpus, room)
        node = self._nodes.at(self._driver_node)
        if node is None:  # struck off: an actor could not start there (it says why)
            logger.warning(
                "a Ray dump actor cannot run on the driver's node (%s): Ray places it, so "
                "the files it writes may land on another node",
                self._nodes.struck.get(self._driver_node, "not found"),
            )
        return node

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("the Ray pool is closed; make a new one")


RayLane = OrderedLane[Any]


class _Spill:
    """Whether Ray's object store has spilled since the pool was made: looked at every
    SPILL_CHECK seconds while work is out, said once."""

    def __init__(self, ray: ModuleType) -> None:
        self._ray = ray
        self._said = False
        self._looked = time.monotonic()
        self._before = self._spilled()

    def rearm(self) -> None:
        if self._said:
            self._said, self._before = False, self._spilled()

    def news(self) -> str | None:
        if self._said or self._before is None or time.monotonic() - self._looked < SPILL_CHECK:
            return None
        self._looked = time.monotonic()
        now = self._spilled()
        if now is None or now <= self._before:
            return None
        self._said = True
        return SPILLED.format(mib=(now - self._before) / 2**20)

    def _spilled(self) -> int | None:
        """Bytes the cluster's object stores have spilled so far (None: Ray does not say)."""
        try:
            from ray._private import internal_api, state

            reply = internal_api.get_memory_info_reply(  # type: ignore[no-untyped-call]
                state.state, timeout_seconds=2.0
            )
            return int(reply.store_stats.spilled_bytes_total)
        except Exception:
            return None


def attached_notice(count: int, address: str | None) -> str:
    """The run's log line for the warm actors a pool attached to as it started."""
    actors = "actor" if count == 1 else "actors"
    where = address or "this Ray"
    return f"attached to {count} warm Ray {actors} on {where}, kept by an earlier run"


def _died(kind: str, exc: Exception) -> ErrorInfo:
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    message = f"the Ray {kind} actor running this task died ({why}); a new actor took its place"
    return ErrorInfo("WorkerDied", message, f"{message}\n\n{exc}")


__all__ = [
    "INSTALL",
    "RayBackend",
    "RayLane",
    "RayPool",
    "connect",
    "local_ray_address",
    "require_ray",
]
