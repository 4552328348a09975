"""Ray actors kept across drivers: a pool made with a namespace (`graphbook serve --ray`, one per
server) names its actors there and makes them detached, so they outlive the process that made
them (a run host ended by a Stop), and the next pool with that namespace attaches to them warm
instead of starting new ones (importing torch again took most of 27-30 s after a Stop).

- **Attach.** The new pool lists the namespace's actors of each kind and asks each for its
  process id, waiting at most `PROBE` seconds: one that does not answer is still busy with the
  ended driver's task (which may never end) and is killed; the rest are kept, up to the pool's
  size. The pool starts what is missing.
- **Lease.** Detached actors would live as long as the cluster. So the driver renews a lease
  (a counter in Ray's key-value store, every `LEASE / 4` seconds, from a thread), and each
  actor watches it from a thread of its own: an actor whose lease has not moved for `LEASE`
  seconds ends itself. A server killed with `kill -9` ends its run host (its pipe closes), and
  a minute later its actors; a server that closes kills them at once (`RayPool.close`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import uuid
from typing import Any

logger = logging.getLogger(__name__)

LEASE = 60.0
"""Seconds a kept actor lives without its lease renewed: longer than a run host takes to start
again after a Stop, short enough that a killed server's actors do not linger."""
PROBE = 2.0
"""Seconds an attached actor has to answer; one that does not is busy with an ended run."""


def lease_key(namespace: str) -> bytes:
    return f"graphbook:lease:{namespace}".encode()


def named(kind: str, namespace: str) -> dict[str, Any]:
    """Ray options for a new kept actor of `kind`."""
    name = f"{kind}-{uuid.uuid4().hex[:12]}"
    return {"name": name, "namespace": namespace, "lifetime": "detached"}


def attach(ray: Any, namespace: str, kind: str, most: int) -> list[Any]:
    """The namespace's live, idle actors of `kind` (at most `most`); the busy and the extra
    ones are killed."""
    prefix = f"{kind}-"
    handles = []
    for entry in ray.util.list_named_actors(all_namespaces=True):
        if entry["namespace"] == namespace and entry["name"].startswith(prefix):
            with contextlib.suppress(ValueError):  # it died meanwhile
                handles.append(ray.get_actor(entry["name"], namespace=namespace))
    if not handles:
        return []
    asked = {handle.reset.remote(): handle for handle in handles}
    ready, _ = ray.wait(list(asked), num_returns=len(asked), timeout=PROBE)
    kept = []
    for ref in ready:
        with contextlib.suppress(Exception):  # an actor that died answers with an error
            ray.get(ref)
            kept.append(asked[ref])
    for handle in [h for h in handles if h not in kept[:most]]:
        with contextlib.suppress(Exception):
            ray.kill(handle, no_restart=True)
    dropped = len(handles) - len(kept[:most])
    if dropped:
        logger.info("ended %d kept Ray %s actors (busy with an ended run, or extra)", dropped, kind)
    return kept[:most]


class Lease:
    """The driver's side: renews the namespace's lease until `end()` (which drops it)."""

    def __init__(self, namespace: str, lease: float = LEASE) -> None:
        self.key = lease_key(namespace)
        self.period = lease / 4
        self._ended = threading.Event()
        self._renew()
        self._thread = threading.Thread(target=self._run, name="graphbook-ray-lease", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        from ray.experimental import internal_kv

        with contextlib.suppress(Exception):  # Ray shut down, or the GCS is briefly away
            internal_kv._internal_kv_put(self.key, str(time.monotonic_ns()).encode())

    def _run(self) -> None:
        while not self._ended.wait(self.period):
            self._renew()

    def end(self) -> None:
        self._ended.set()


def watch(namespace: str, lease: float) -> None:
    """The actor's side: a thread that ends this process once the lease stops moving."""
    thread = threading.Thread(
        target=_watch, args=(lease_key(namespace), lease), name="graphbook-lease", daemon=True
    )
    thread.start()


def _watch(key: bytes, lease: float) -> None:
    from ray.experimental import internal_kv

    last: bytes | None = None
    since = time.monotonic()
    while True:
        time.sleep(min(lease / 4, 5.0))
        try:
            value = internal_kv._internal_kv_get(key)
        except Exception:  # the GCS briefly away: not a sign that the driver is gone
            continue
        if value != last:
            last, since = value, time.monotonic()
        elif time.monotonic() - since > lease:
            os._exit(0)


__all__ = ["LEASE", "Lease", "attach", "named", "watch"]
