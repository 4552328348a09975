"""Ray actors kept across drivers: a pool made with a namespace names its actors there and
makes them detached, so they outlive the process that made them, and the next pool with that
namespace attaches to them warm instead of starting new ones (importing torch again took 20 s).

Two kinds of driver keep them:

- **`graphbook serve --ray`**, one namespace per server: a run host ended by a Stop leaves its
  actors to the next host (27-30 s after a Stop, against 6-9 s kept). A server that closes
  kills them.
- **`graphbook run --ray ADDRESS`** (`code_namespace`): the namespace names what the actors can
  run, a digest of the code shipped to them (Ray's content hash of the nodes folders), the
  Python, Ray and graphbook versions and the user, so a run attaches only to actors that run
  the same code (changed node code gets fresh actors, never stale ones). It leaves its idle
  actors after the run: they linger for `--ray-keep` seconds (`RayPool(keep_after=...)`).

- **Claims.** A driver claims each actor it uses (a key in Ray's key-value store naming the
  driver's Ray job) and releases it when it leaves it. Another driver attaches only to
  actors nobody claims or whose claimer's job has ended, so two runs at once never share (or
  kill) each other's actors. (Through Ray Client, a task on the cluster reads the job table.)
- **Attach.** The new pool lists the namespace's free actors of each kind and asks each to
  reset for it, waiting at most `PROBE` seconds: one that does not answer is still busy with
  an ended driver's task (which may never end) and is killed; the rest are kept, up to the
  pool's size (spread over the nodes they run on), and the extra ones are killed. The pool
  starts what is missing on the nodes that have the fewest of their kind (fleet.py
  `Fleet._place`, counting the attached ones): a pool that found only some of its actors (a node's
  were gone) does not double up on one node.
- **Lease.** Detached actors would live as long as the cluster. So the driver renews a lease
  (a value in Ray's key-value store, every `LEASE / 4` seconds while it runs, from a thread),
  and each actor watches it from a thread of its own: an actor whose lease has not moved for
  the seconds the value says ends itself. A driver killed with `kill -9` stops renewing it,
  and a minute later its actors end; a CLI run that ends writes the lease one last time with
  the seconds to keep its actors for.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import hashlib
import itertools
import json
import logging
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

LEASE = 60.0
"""Seconds a kept actor lives without its lease renewed while a driver holds it: longer than a
run host takes to start again after a Stop, short enough that a killed driver's actors do not
linger."""
LINGER = 300.0
"""Seconds `graphbook run --ray ADDRESS` leaves its idle actors to the next driver after the
run, by default (they linger)."""
LEASE_SETTING = "GRAPHBOOK_RAY_LEASE"
"""The environment variable that sets `LEASE` (serve) and `LINGER` (run), in seconds."""
PROBE = 2.0
"""Seconds an attached actor has to answer; one that does not is busy with an ended run."""
NAMESPACE = "graphbook-run"
"""The start of the namespaces `graphbook run --ray ADDRESS` keeps its actors in."""


def lease_key(namespace: str) -> bytes:
    return f"graphbook:lease:{namespace}".encode()


def claim_key(namespace: str, name: str) -> bytes:
    return f"graphbook:claim:{namespace}:{name}".encode()


def setting(default: float) -> float:
    """`GRAPHBOOK_RAY_LEASE` in seconds, else `default`; an error names a value that is not."""
    text = os.environ.get(LEASE_SETTING, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0:
        raise ValueError(f"{LEASE_SETTING}={text!r}: expected seconds, 0 or more")
    return value


def code_namespace(code: Sequence[str], dumps: str) -> str:
    """The namespace of actors that run `code` (the URIs of what Ray ships to them, each named
    by its content's hash) for this user, this Python, Ray and graphbook, their dump actors
    placed as `dumps` says (pinned to a driver's node, or spread over the nodes: a run of the
    other kind does not take them)."""
    import ray

    from graphbook.about import version  # not at import: graphbook's __init__ imports this

    what = {
        "code": sorted(code),
        "python": sys.version,
        "ray": ray.__version__,
        "graphbook": version(),
        "dumps": dumps,
    }
    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]
    return f"{NAMESPACE}-{_user()}-{digest}"


def _user() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # no name for this user id (a container)
        user = f"uid{os.getuid()}" if hasattr(os, "getuid") else "user"
    return re.sub(r"[^A-Za-z0-9_.]", "_", user) or "user"


def named(kind: str, namespace: str) -> dict[str, Any]:
    """Ray options for a new kept actor of `kind`, claimed by this driver before it exists (a
    driver attaching meanwhile leaves it alone)."""
    name = f"{kind}-{uuid.uuid4().hex[:12]}"
    _put(claim_key(namespace, name), _job())
    return {"name": name, "namespace": namespace, "lifetime": "detached"}


@dataclass
class Attached:
    """An actor attached to: its handle, its name, and the node it runs on (its reset's answer)."""

    handle: Any
    name: str
    node_id: str


@dataclass
class DetachedModels:
    """A pool's detached model actors: its namespace and lease, the actors it holds (name ->
    handle), and how many of them it attached to warm."""

    namespace: str
    lease: float = LEASE
    held: dict[str, Any] = field(default_factory=dict)
    attached: int = 0


class Detached:
    """A pool's actors kept across drivers, from the pool made to the pool closed: the
    namespace they are named in, the lease its driver renews while it runs, the seconds its
    idle actors `linger` for the next driver once it closes (None: they end with it), and its
    model actors."""

    def __init__(self, namespace: str, lease: float = LEASE, linger: float | None = None) -> None:
        self.namespace = namespace
        self.lease = lease
        self.linger = linger
        self.models = DetachedModels(namespace, lease)
        self._renewing = Lease(namespace, lease)

    @property
    def leaves(self) -> bool:
        """Whether closing leaves the idle actors to the next driver (else they are killed)."""
        return bool(self.linger)

    def close(self, ray: Any, left: Sequence[str]) -> None:
        """The driver leaves: the lease runs out (after `linger` seconds, when it lingers), the
        actors `left` idle and the model actors are let go to the next driver, else the model
        actors are killed."""
        self._renewing.end(self.linger if self.leaves else None)
        if self.leaves:
            release(self.namespace, left)
        models = self.models
        if not self.leaves:
            for actor in models.held.values():
                with contextlib.suppress(Exception):  # it died already
                    ray.kill(actor, no_restart=True)
        release(models.namespace, list(models.held))
        models.held.clear()


def attach(
    ray: Any, namespace: str, kind: str, most: int, setup: Callable[[], tuple[Any, ...]]
) -> list[Attached]:
    """Claim the namespace's free, live, idle actors of `kind` (at most `most`), each reset for
    this driver with the arguments `setup()` gives; the busy and the extra ones among those
    claimed are killed."""
    prefix = f"{kind}-"
    found: dict[str, Any] = {}
    ended = functools.cache(lambda: _ended_jobs(ray))
    for entry in ray.util.list_named_actors(all_namespaces=True):
        name = entry["name"]
        if entry["namespace"] != namespace or not name.startswith(prefix):
            continue
        if not _claim(namespace, name, ended):
            continue  # another running driver's
        try:
            found[name] = ray.get_actor(name, namespace=namespace)
        except ValueError:  # it died meanwhile
            release(namespace, [name])
    if not found:
        return []
    asked = {handle.reset.remote(*setup()): name for name, handle in found.items()}
    ready, _ = ray.wait(list(asked), num_returns=len(asked), timeout=PROBE)
    live: list[Attached] = []
    for ref in ready:
        with contextlib.suppress(Exception):  # an actor that died answers with an error
            node_id = ray.get(ref)
            name = asked[ref]
            live.append(Attached(found[name], name, str(node_id)))
    kept = spread(live, most)
    chosen = {attached.name for attached in kept}
    dropped = [name for name in found if name not in chosen]
    for name in dropped:
        with contextlib.suppress(Exception):
            ray.kill(found[name], no_restart=True)
    release(namespace, dropped)
    if dropped:
        logger.info(
            "ended %d kept Ray %s actors (busy with an ended run, or extra)", len(dropped), kind
        )
    return kept


def spread(actors: Sequence[Attached], most: int) -> list[Attached]:
    """At most `most` of `actors`, taken in turn from each node they run on (not all of one
    node's while another node's are left)."""
    by_node: dict[str, list[Attached]] = {}
    for actor in actors:
        by_node.setdefault(actor.node_id, []).append(actor)
    rounds = itertools.zip_longest(*by_node.values())
    return [actor for batch in rounds for actor in batch if actor is not None][:most]


def release(namespace: str, names: Sequence[str]) -> None:
    """Let other drivers attach to these actors (or forget the claims of ended ones)."""
    from ray.experimental import internal_kv

    for name in names:
        with contextlib.suppress(Exception):
            internal_kv._internal_kv_del(claim_key(namespace, name))


def _claim(namespace: str, name: str, ended: Callable[[], set[str]]) -> bool:
    """Claim an actor for this driver: free, or claimed by a driver whose job has ended (the
    ended jobs are asked for only then)."""
    from ray.experimental import internal_kv

    key = claim_key(namespace, name)
    try:
        if not internal_kv._internal_kv_put(key, _job(), overwrite=False):
            return True  # nobody held it
        holder = internal_kv._internal_kv_get(key)
        holder_job = holder.decode() if holder else ""
        if holder_job == _job():
            return True
        if holder_job not in ended():
            return False  # a running driver's
        internal_kv._internal_kv_put(key, _job())  # its driver ended without letting it go
        return True
    except Exception:  # the GCS away: leave it
        return False


def _job() -> str:
    import ray

    return str(ray.get_runtime_context().get_job_id())


def _ended_jobs(ray: Any) -> set[str]:
    """The ids of the cluster's jobs that have ended (their drivers gone). A driver through Ray
    Client cannot read Ray's job table: a task on the cluster reads it for it."""
    try:
        if ray.util.client.ray.is_connected():
            reader = ray.remote(num_cpus=0)(ended_jobs)
            return set(ray.get(reader.remote(), timeout=ENDED_JOBS_WAIT))
        return ended_jobs()
    except Exception:
        return set()


ENDED_JOBS_WAIT = 60.0
"""Seconds a Ray Client driver waits for the task that reads the ended jobs (a worker may
have to start for it)."""


def ended_jobs() -> set[str]:
    """The ids of the ended jobs in the job table of the Ray this process runs."""
    from ray._private import state

    jobs = state.state.job_table()  # type: ignore[no-untyped-call]
    return {str(job["JobID"]) for job in jobs if job.get("IsDead")}


def _put(key: bytes, value: str) -> None:
    from ray.experimental import internal_kv

    with contextlib.suppress(Exception):  # Ray shut down, or the GCS is briefly away
        internal_kv._internal_kv_put(key, value.encode())


class Lease:
    """The driver's side: renews the namespace's lease of `lease` seconds until `end()`."""

    def __init__(self, namespace: str, lease: float = LEASE) -> None:
        self.key = lease_key(namespace)
        self.lease = lease
        self.period = lease / 4
        self._ended = threading.Event()
        self._renew(lease)
        self._thread = threading.Thread(target=self._run, name="graphbook-ray-lease", daemon=True)
        self._thread.start()

    def _renew(self, lease: float) -> None:
        _put(self.key, f"{time.monotonic_ns()} {lease}")

    def _run(self) -> None:
        while not self._ended.wait(self.period):
            self._renew(self.lease)

    def end(self, keep: float | None = None) -> None:
        """Stop renewing; with `keep`, the actors live that many seconds more, from now."""
        self._ended.set()
        self._thread.join(timeout=self.period + 1)
        if keep is not None:
            self._renew(keep)


def watch(namespace: str, lease: float) -> None:
    """The actor's side: a thread that ends this process once the lease stops moving for the
    seconds its value says (`lease` when it says none)."""
    thread = threading.Thread(
        target=_watch, args=(lease_key(namespace), lease), name="graphbook-lease", daemon=True
    )
    thread.start()


def _watch(key: bytes, default: float) -> None:
    from ray.experimental import internal_kv

    last: bytes | None = None
    lease = default
    since = time.monotonic()
    while True:
        time.sleep(min(max(lease / 4, 0.1), 5.0))
        try:
            value = internal_kv._internal_kv_get(key)
        except Exception:  # the GCS briefly away: not a sign that the driver is gone
            continue
        if value != last:
            last, since = value, time.monotonic()
            lease = _seconds(value, default)
        elif time.monotonic() - since > lease:
            _end_self()


def _end_self() -> None:
    """End this actor for good: Ray would restart one that may restart (a model's) if it just
    exited, so it is killed through Ray first."""
    with contextlib.suppress(Exception):
        import ray

        ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
        time.sleep(5.0)  # Ray ends the process meanwhile
    os._exit(0)


def _seconds(value: bytes | None, default: float) -> float:
    """The lease's seconds, as the driver last wrote them."""
    with contextlib.suppress(AttributeError, IndexError, ValueError):
        return float(value.split()[1])  # type: ignore[union-attr]
    return default


__all__ = [
    "LEASE",
    "LEASE_SETTING",
    "LINGER",
    "Attached",
    "Detached",
    "DetachedModels",
    "Lease",
    "attach",
    "code_namespace",
    "named",
    "release",
    "setting",
    "spread",
    "watch",
]
