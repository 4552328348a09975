"""The Ray pool: load and dump functions run in Ray actors, on this machine or a cluster.

It implements the worker-pool seam (`graphbook.engine.pool`), so the executor, its scheduling,
the one event stream, counts, previews, prompts and stop stay on the driver exactly as in a
local run; only the work that a local run gives to worker processes goes to Ray. Each kind of
task (load, dump) has its own actors, so writing never waits behind loading. Outcomes are object
refs until taken; a lane's capacity bounds the tasks in flight, so memory is flat in the
dataset's size. Tasks travel in small groups, as one call costs the driver about as much as
decoding an image.

The pool is four parts, each a module of this package: its connection to Ray (connection.py),
its actors (fleet.py), its tasks and the one wait (dispatch.py), and what it tells the run's log
(notices.py); batch steps' stage actors (stage.py) and models on actors (models.py) it makes on
demand. Its lifecycle: NOTE [ Ray pool lifecycle ].

Ray is optional (`pip install 'graphbook[ray]'`): this package imports it only when a pool is
made, and says how to install it when it is missing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphbook.engine.pool import Kind, Notice, NoticeLevel
from graphbook.engine.ray.connection import Connection
from graphbook.engine.ray.detached import LEASE, Detached, code_namespace
from graphbook.engine.ray.dispatch import Dispatch, RayLane, Timings, Watcher
from graphbook.engine.ray.fleet import ACTOR_CPUS, KINDS, Fleet
from graphbook.engine.ray.nodes import DRIVER, Node, dumps_problem
from graphbook.engine.ray.notices import Notices, attached_notice
from graphbook.engine.ray.sizing import GROWING, Limits
from graphbook.engine.ray.stage import AUTO, RayStage, Spares, stage_for, stages_problem
from graphbook.errors import GraphbookError
from graphbook.events import PoolStats

if TYPE_CHECKING:
    from graphbook.lifecycle import BatchStep

# NOTE [ Ray pool lifecycle ]
#
# Made. The pool joins Ray (`Connection`): the Ray this process runs, else a new local one
#   (with its watchdog: its processes die with this one), else the cluster at `address`; pools
#   are counted, so the last one closed on a Ray that pools started shuts it down. With a
#   namespace (`keep`, or the code's own with `keep_after`) its actors are detached: it renews
#   their lease from a thread, and first attaches to the idle actors an earlier driver left
#   there (claimed, reset for this driver; busy ones killed). Then it starts each kind's missing
#   actors up to the minimum, dumps first (they go to the driver's node), each reserving
#   `actor_cpus` if all fit where they go, else none (`Fleet.start_least`). They start in the
#   background: the pool is ready at once, and tasks wait on the driver meanwhile.
#
# A run. `lane` opens a lane (its function put in the object store once); the run's first lane
#   of a kind notes the actors it finds. `submit` queues a task on the driver. `wait`
#   (`Dispatch.collect`) is the one call that moves anything: it hands waiting tasks in groups
#   to actors with room (started, or placed where a node had room), waits for a call, an
#   actor's start or a stage actor's call, routes outcomes to their lanes in order, buries an
#   actor that died (its tasks run again, or fail, `Dispatch._bury`), grows or shrinks each kind
#   (sizing.py), and looks at spilling. The run ends when its last lane is forgotten: its log
#   is told what the pool did with its actors, actors beyond the minimum still starting are
#   cancelled, and the next run is told of its own spilling. A run stopped midway leaves tasks
#   that may never end: `recycle_busy` replaces only the actors running them.
#
# Between runs. Everything stays warm: the actors, the lanes' functions they learned until
#   their lanes are forgotten, and the stage actors left idle (`spares`) for the next run's
#   stages (a server's runs share one pool).
#
# Closed (`close`, once; `with RayPool(...)`). Tasks in flight are dropped and stage actors
#   ended; each actor is killed, unless the pool lingers (`keep_after` > 0) and it is idle: the
#   lease is then written one last time with the seconds to linger, and the claims let go, so
#   the next driver that runs the same code attaches to them warm (model actors alike). Last,
#   the connection lets go of Ray. A closed pool refuses lanes and tasks.
#
# "Keep" used to mean three things here; each has its own name now:
# - detached: actors kept across drivers, named in a namespace (`keep=`, detached.py);
# - linger: the seconds a closed pool leaves its idle detached actors to the next driver
#   (`keep_after=`);
# - kept: a lane's values left in the object store of the node that made them, for stage
#   actors to read there (`lane(kept=True)`, transfer.Kept).


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
    """With `keep`: seconds the detached actors outlive the last driver that renewed their
    lease."""
    dumps: str = DRIVER
    """Where dump actors run: `driver` (its node: what dump functions write lands on the
    driver's disk) or `anywhere` (every node, for outputs on shared storage or remote URIs)."""
    keep_after: float | None = None
    """Keep the actors for the next driver that runs the same code (`graphbook run --ray
    ADDRESS`): detached in the namespace of that code (`keep` is then ignored), they linger
    idle after `close()` for this many seconds (0: killed, as without it). None: the namespace
    is `keep`, and `close()` kills them (a server that shuts down)."""

    stages: str = AUTO
    """Where batch steps' `on_item_batch` runs: `on` stage actors
    (graphbook/engine/ray/stage.py), `off` the driver, `auto` stage actors when the cluster
    has nodes besides the driver's."""
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


class RayPool:
    """Ray actors for load functions and others for dump functions: `workers` of each, or
    (`workers` 0) `actors.least` of each to start with, grown as work waits for them up to
    `actors.most` (graphbook/engine/ray/sizing.py); each reserves `actor_cpus`. With
    `retries`, a task that killed its actor runs again (on another actor) up to that many
    times before it is reported failed. Dump actors run on the driver's node unless `dumps` is
    `anywhere` (graphbook/engine/ray/nodes.py). See NOTE [ Ray pool lifecycle ]."""

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
        _check(workers, retries, actor_cpus, replicas, dumps, stages)
        self.stages = stages
        self.replicas = replicas
        self.dumps = dumps
        self.retries = retries
        self.models_on_actors = models_on_actors
        self.limits = Limits.exactly(workers) if workers else actors
        self.actor_cpus = actor_cpus
        self.connection = Connection(address, num_cpus, ship)
        self.detached = _detached(self.connection, keep, lease, keep_after, dumps)
        """Where its actors are kept across drivers (None: they end with the pool)."""
        ray, nodes = self.connection.ray, self.connection.nodes
        self._notices = Notices(ray, nodes)
        limits, notices = self.limits, self._notices
        self.fleet = Fleet(
            self.connection, notices, limits, actor_cpus, dumps, self.detached, self._asked
        )
        self._dispatch = Dispatch(ray, self.fleet, notices, retries)
        self.spares = Spares()
        """Stage actors idle since their run ended, for the next run's (stage.py)."""
        self.fleet.start_least()  # started now, they are ready by the first task
        if self.fleet.attached:
            self._notices.add(attached_notice(self.fleet.attached, address))

    # -- the Pool protocol ----------------------------------------------------------------
    def lane(
        self, fn: Callable[..., Any], capacity: int, kind: Kind = "load", kept: bool = False
    ) -> RayLane:
        """A lane for `fn`; with `kept`, the values of its outcomes stay in the object store
        of the node that made them: each comes back as a `Kept` for another actor to read."""
        if kind not in KINDS:
            raise ValueError(f"a lane's kind is one of {KINDS}, got {kind!r}")
        self._check_open()
        self.fleet.begin_run(kind)
        if kind == "dump":
            connection = self.connection
            client = connection.address if connection.client else None
            self._notices.tell_dumps(self.dumps, connection.driver_node, client)
        self.connection.share_node_modules()
        return self._dispatch.lane(fn, capacity, kind, kept)

    def wait(self, timeout: float) -> None:
        """Block until some call finishes (or `timeout` passes), then route what finished."""
        start = time.perf_counter()
        self._dispatch.collect(timeout)
        self.timings.waiting += time.perf_counter() - start

    def stats(self) -> PoolStats:
        """Tasks waiting on the driver and running (or queued) on actors, per kind."""
        return self._dispatch.stats()

    def notices(self) -> list[Notice]:
        """Information and warnings for the run's log, each once: warm actors attached to,
        where dump functions run, spilling, nodes struck off."""
        return self._notices.take()

    @property
    def ships(self) -> bool:
        """Whether its work may run on other machines (the cluster has nodes besides the
        driver's): the executor then makes path parameters absolute first. On one node the
        actors work in the driver's folder, and a run's values are as in a local run."""
        return self.connection.ships

    def place_resource(self, node: Any, params: dict[str, Any]) -> Any:
        """Build a resource that asks for a GPU (every model, with `models_on_actors`) on an
        actor of its own; None: build it on the driver (graphbook/engine/ray/models.py).
        With stage actors, a model is built on the driver and travels in each replica of the
        steps that hold it, unless it asks for CUDA by name (the driver may have none)."""
        self._check_open()
        if self.stages_on and not str(params.get("device", "")).startswith("cuda"):
            return None
        self.connection.share_node_modules()
        from graphbook.engine.ray.models import place

        models = self.detached.models if self.detached is not None else None
        attached = models.attached if models is not None else 0
        connection = self.connection
        value = place(
            node,
            params,
            self.models_on_actors,
            self.retries,
            connection.shipped,
            connection.runtime_env,
            models,
        )
        if models is not None and models.attached > attached:
            notice = f"model {node.title!r}: attached to its warm Ray actor, kept by an earlier run"
            self._notices.add(notice)
        return value

    def stage(self, node_id: str, step: BatchStep, capacity: int) -> RayStage | None:
        """Stage actors for a batch step's `on_item_batch`, when they are on and the step may
        leave the driver; None: it runs on the driver (graphbook/engine/ray/stage.py)."""
        self._check_open()
        if not self.stages_on:
            return None
        self.connection.share_node_modules()
        return stage_for(self, node_id, step, capacity)

    def close(self) -> None:
        """Stop the actors (and Ray itself, when this pool started it). NOTE [ Ray pool
        lifecycle ]."""
        if self.closed:
            return
        self._dispatch.close()
        self.fleet.close()
        self.spares.close(self.connection.ray)
        self.connection.close()

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what stage actors need (stage.StageHost) ------------------------------------------
    @property
    def closed(self) -> bool:
        return self._dispatch.closed

    @property
    def timings(self) -> Timings:
        """Where the driver's time went, for bench/ray.py."""
        return self._dispatch.timings

    def notice(self, text: str, level: NoticeLevel = "info") -> None:
        """A line for the run's log (said once, with the next `notices`)."""
        self._notices.say(text, level)

    def room(self) -> dict[str, float] | None:
        """The CPUs free on each live node for one more reservation (`Fleet.room`)."""
        return self.fleet.room()

    def watch(self, watcher: Watcher) -> None:
        """Have `wait` wait for `watcher`'s calls too, and hand them back to it."""
        self._dispatch.watchers.append(watcher)

    def unwatch(self, watcher: Watcher) -> None:
        if watcher in self._dispatch.watchers:
            self._dispatch.watchers.remove(watcher)

    def received(self, size: int) -> None:
        """Count `size` bytes of outcomes the driver read back (a stage's replies)."""
        self.timings.received += size

    def _asked(self) -> list[tuple[Node | None, float]]:
        """What the watchers' actors asked for that Ray may not count yet."""
        return [asked for watcher in self._dispatch.watchers for asked in watcher.asked()]

    # -- the rest -------------------------------------------------------------------------
    @property
    def stages_on(self) -> bool:
        """Whether batch steps run `on_item_batch` on stage actors (`stages`)."""
        return self.stages == "on" or (self.stages == AUTO and self.ships)

    @property
    def workers(self) -> int:
        """The most actors of each kind now (nodes join and leave)."""
        return self.fleet.workers

    @property
    def attached(self) -> int:
        """Actors this pool found warm, left detached by a driver before it, and uses."""
        return self.fleet.attached

    def recycle_busy(self) -> int:
        """After a stop: replace the actors still running the stopped run's tasks (a task may
        never end), drop its waiting tasks, and keep every other actor as it is, warm (the
        server's next run then starts at once). Returns how many actors were replaced."""
        return self._dispatch.recycle_busy()

    def describe(self) -> str:
        """Where the pool runs: the cluster's nodes, CPUs and GPUs, and the actors per kind."""
        return self.fleet.describe()

    def wait_ready(self) -> None:
        """Block until every actor has started (and imported what it preloads)."""
        self.fleet.wait_ready()

    def pids(self, kind: Kind = "load") -> list[int]:
        """The process ids of the live actors of `kind`."""
        return self.fleet.pids(kind)

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("the Ray pool is closed; make a new one")


def _check(
    workers: int, retries: int, actor_cpus: float, replicas: int, dumps: str, stages: str
) -> None:
    """An error that names the settings a pool cannot be made with."""
    if workers < 0 or retries < 0 or actor_cpus < 0 or replicas < 0:
        raise ValueError(
            "workers, retries, actor_cpus and replicas must be 0 or more, got "
            f"{workers}, {retries}, {actor_cpus}, {replicas}"
        )
    problem = dumps_problem(dumps) or stages_problem(stages)
    if problem is not None:
        raise GraphbookError(problem)


def _detached(
    connection: Connection,
    keep: str | None,
    lease: float,
    keep_after: float | None,
    dumps: str,
) -> Detached | None:
    """Where a pool's actors are kept across drivers: `keep`, or with `keep_after` the
    namespace of the code they run (whoever made them, placed alike)."""
    if keep_after is not None:
        shipped = (connection.runtime_env or {}).get("py_modules", [])
        keep = code_namespace(shipped, dumps)
    return Detached(keep, lease, keep_after) if keep else None


__all__ = ["RayBackend", "RayLane", "RayPool"]
