"""ServerSettings: where the server listens, which folders it may touch, and its limits."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from graphbook.engine.executor import Backend, RayBackend
from graphbook.engine.ray.fleet import ACTOR_CPUS
from graphbook.engine.ray.nodes import DRIVER
from graphbook.engine.ray.sizing import GROWING, Limits
from graphbook.errors import GraphbookError
from graphbook.store import data_home

WEBAPP = Path(__file__).resolve().parent.parent / "webapp"
"""Where the web app's Vite build is written (`graphbook/webapp/`)."""
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1", "[::1]")


@dataclass(frozen=True)
class ServerSettings:
    host: str = "127.0.0.1"
    port: int = 8005
    workflows: Path = Path("workflows")
    components: Path | None = None
    """The library of components; None: `components/` beside the workflows folder."""
    nodes: Path = Path("custom_nodes")
    data: Path = field(default_factory=data_home)
    """The run store (SQLite) lives here."""
    media: tuple[Path, ...] = ()
    """More folders whose images may be shown (read only)."""
    workers: int = 0
    ray: str | None = None
    """Run pool work on Ray: `local` (a Ray on this machine), `auto` or `ray://host:port`."""
    ray_retries: int = 0
    ray_ship: tuple[Path, ...] = ()
    """More folders of Python modules sent to every Ray node (the nodes folder always is)."""
    ray_dumps: str = DRIVER
    """Where dump functions run on Ray: `driver` (the server's node) or `anywhere`."""
    ray_actors: Limits = GROWING
    """The fewest and most Ray actors of each kind (`workers` N: exactly N)."""
    ray_actor_cpus: float = ACTOR_CPUS
    """CPUs each Ray load and dump actor reserves."""
    ray_stages: str = "auto"
    """Where batch steps' on_item_batch runs on Ray: `on` stage actors, `off`, `auto`."""
    ray_replicas: int = 0
    """Stage actors per batch step at most (0: one per node, one per GPU on GPU nodes)."""
    token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    cache_budget: int = 1 << 30
    """Bytes of node outputs kept between runs, over all workflows."""
    max_body: int = 8 << 20
    max_message: int = 1 << 20
    import_limit: float = 60.0
    """Seconds one node file may take to import (in the process that describes node files)."""
    watch: bool = True
    watch_polling: bool = False
    webapp: Path = WEBAPP
    apps_only: bool = False
    """Serve apps only (`serve --apps`): the apps list and pages; graphs are read-only, node
    files are not written, runs are asked for through apps (graphbook/server/appsonly.py)."""
    max_upload: int = 32 << 20
    """Bytes a file uploaded for an app's input may have."""
    move_damaged_store: bool = False
    """A damaged run store is moved aside (kept) and a new one started, instead of refusing."""

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def check(self) -> None:
        """Refuse settings that would be unsafe or cannot work."""
        if not self.loopback and not self.token:
            raise GraphbookError(
                f"refusing to listen on {self.host} without a token: anyone who can reach it "
                "could run code; pass --token T (clients then send it), or use 127.0.0.1"
            )
        if self.workers < 0:
            raise GraphbookError(f"workers must be 0 or more, got {self.workers}")
        if self.cache_budget < 0:
            raise GraphbookError(f"the cache budget must be 0 or more, got {self.cache_budget}")

    @property
    def backend(self) -> Backend:
        if self.ray is None:
            return "local"
        address = None if self.ray == "local" else self.ray
        ship = tuple(str(p.resolve()) for p in (self.nodes, *self.ray_ship) if p.is_dir())
        return RayBackend(
            address,
            retries=self.ray_retries,
            ship=ship,
            dumps=self.ray_dumps,
            actors=self.ray_actors,
            actor_cpus=self.ray_actor_cpus,
            stages=self.ray_stages,
            replicas=self.ray_replicas,
        )

    @property
    def library(self) -> Path:
        """The components folder: `components` as given, else beside the workflows folder."""
        return self.components or self.workflows.resolve().parent / "components"

    def roots(self) -> dict[str, Path]:
        """Every folder the API may read from, by the name used in media URLs."""
        roots = {"workflows": self.workflows, "nodes": self.nodes, "data": self.data}
        for index, folder in enumerate(self.media):
            roots["media" if index == 0 else f"media{index + 1}"] = folder
        return roots


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
