"""The Ray pool's connection to Ray: starting a local Ray (with its watchdog) or joining a
cluster, letting go of it when the last pool closes, and the code shipped with its actors.

Ray is optional (`pip install 'graphbook[ray]'`): this module imports it only when a pool is
made, and says how to install it when it is missing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from graphbook.engine.ray.nodes import Nodes
from graphbook.engine.ray.ship import job_env, runtime_env, shippable
from graphbook.errors import GraphbookError
from graphbook.registry import NODES_PACKAGE

logger = logging.getLogger(__name__)

LOCAL = "local"
"""The address that means: start Ray on this machine (or use the Ray this process runs)."""
INSTALL = "pip install 'graphbook[ray]'"
CPU_CHECK = 5.0
"""Seconds between looks at the cluster's CPUs (the default maximum of actors)."""
AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"
AUTH_NOTICE = "Token authentication is enabled for this Ray cluster"
AUTH_HINT = (
    "auth: the cluster uses token authentication and refused this driver; set "
    "RAY_AUTH_MODE=token and the cluster's token in RAY_AUTH_TOKEN (or the file "
    "~/.ray/auth_token; `ray get-auth-token` on the head prints it)"
)
WATCHDOG = Path(__file__).with_name("watchdog.py")
CLIENT_INIT_FAILED = "Initialization failure from server"
CLIENT_TRIES = 3
"""Tries at joining through Ray Client: the head's proxy starts a server for each driver, and on
a loaded head that start can fail once (Ray's "Initialization failure from server", seen in
clean-clone CI runs); each new try starts a new one."""
CLIENT_BACKOFF = 1.0
"""Seconds before the second try at a Ray Client handshake (twice that before the third)."""

_OPEN_POOLS = [0]
_POOLS_STARTED_RAY = [False]
"""Pools open in this process, and whether one of them started (or joined) Ray: the last one
closed shuts it down. Ray that something else started (a test session, `graphbook serve`)
stays up."""
_WATCHDOGS: list[subprocess.Popen[bytes]] = []
"""The watchdogs of local Rays this process started (each exits when its Ray is shut down)."""


class Connection:
    """One pool's hold on Ray, from the pool made to the pool closed: the Ray it joined (or
    started), the driver's node, the cluster's nodes, and the folders its actors ship."""

    def __init__(
        self,
        address: str | None,
        num_cpus: int | None = None,
        ship: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        self.ray = require_ray()
        self.address = address
        self.shipped = shippable(ship)
        if connect(address, num_cpus, self.shipped):
            _POOLS_STARTED_RAY[0] = True
        _OPEN_POOLS[0] += 1
        self.client = is_client(address)
        """Whether it joined through Ray Client (this process is then no node of the cluster)."""
        self.elastic = address not in (None, LOCAL)
        """Whether the cluster may grow (one joined, not a Ray started here): an actor with
        no room yet is then asked for all the same, and waits for a node."""
        self.nodes = Nodes(self.ray, probe=not self.client)
        self.driver_node = str(self.ray.get_runtime_context().get_node_id())
        self.runtime_env = runtime_env(self.shipped, sent=self.client)
        self._cpus = (0.0, 0.0)
        """(when it was read, the cluster's CPUs then)."""

    def remote(self, actor: type) -> Any:
        """`actor` as a Ray actor class that ships this pool's folders; each start says what
        its actor reserves."""
        options: dict[str, Any] = {"num_cpus": 0}
        if self.runtime_env is not None:
            options["runtime_env"] = self.runtime_env
        return self.ray.remote(**options)(actor)

    def share_node_modules(self) -> None:
        """Make node files' modules travel by value: Ray workers have no `graphbook_nodes`."""
        # Node files are imported under NODES_PACKAGE; Ray workers cannot import it, so its
        # modules travel by value (their code is pickled with the functions).
        if NODES_PACKAGE in sys.modules:
            self.ray.cloudpickle.register_pickle_by_value(sys.modules[NODES_PACKAGE])

    def cluster_cpus(self) -> float:
        """The cluster's CPUs as Ray counts them, read again every CPU_CHECK seconds (nodes
        join and leave)."""
        read, cpus = self._cpus
        now = time.monotonic()
        if not read or now - read >= CPU_CHECK:
            cpus = float(self.ray.cluster_resources().get("CPU", 1))
            self._cpus = (now, cpus)
        return cpus

    @property
    def ships(self) -> bool:
        """Whether the cluster has nodes besides the driver's (work may run elsewhere)."""
        return any(node.id != self.driver_node for node in self.nodes.refresh())

    def close(self) -> None:
        """Let go of Ray: the last pool closed on a Ray that pools began shuts it down."""
        _OPEN_POOLS[0] -= 1
        if _POOLS_STARTED_RAY[0] and not _OPEN_POOLS[0]:
            _POOLS_STARTED_RAY[0] = False
            self.ray.shutdown()


def require_ray() -> ModuleType:
    """The `ray` module, or an error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise GraphbookError(
            f"the Ray backend needs Ray, which is not installed: {INSTALL}"
        ) from None
    return ray


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
            _join(ray, str(address), job_env(ship) if is_client(address) else None)
    except Exception as exc:
        where = "a local Ray" if local else f"the Ray cluster at {address!r}"
        raise GraphbookError(f"could not start or join {where}: {_why(exc)}") from exc
    return True


def _join(ray: ModuleType, address: str, env: dict[str, Any] | None) -> None:
    """`ray.init` at a cluster's address; through Ray Client, tried again when the head could
    not start this driver's server (a failed try leaves nothing behind: Ray disconnects)."""
    for attempt in range(1, CLIENT_TRIES + 1):
        try:
            ray.init(address=address, logging_level=logging.WARNING, runtime_env=env)
            return
        except ConnectionAbortedError as exc:
            again = is_client(address) and CLIENT_INIT_FAILED in str(exc)
            if not again or attempt == CLIENT_TRIES:
                raise
            logger.info(
                "the Ray Client server on %s did not start for this driver (%s); trying again",
                address,
                _why(exc),
            )
            time.sleep(CLIENT_BACKOFF * attempt)


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
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[-1]}"  # "failure from server:", then a traceback's last line
    return lines[0]


def _watch_local_ray(ray: ModuleType) -> None:
    """Start the watchdog that kills the Ray processes this process started when it dies, by
    any means (graphbook/engine/ray/watchdog.py): Ray's agents outlived a `kill -9` by 60 s."""
    if not sys.platform.startswith("linux"):
        return  # the watchdog reads /proc
    command = [sys.executable, "-I", str(WATCHDOG), str(os.getpid()), *map(str, _ray_pids(ray))]
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


def _ray_pids(ray: ModuleType) -> list[int]:
    """The processes the local Ray just started: Ray's own record of them, else everything
    under this process (Ray's processes among them)."""
    roots: list[int] = []
    with contextlib.suppress(Exception):
        node = ray._private.worker._global_node
        roots = [p.process.pid for ps in node.all_processes.values() for p in ps]
    if not roots:
        children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
        with contextlib.suppress(OSError, ValueError):
            roots = [int(pid) for pid in children.read_text().split()]
    return roots


__all__ = ["INSTALL", "LOCAL", "Connection", "connect", "is_client", "local_ray_address"]
