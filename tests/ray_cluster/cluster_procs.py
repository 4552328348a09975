"""A two-node Ray cluster on one machine, for tests: `ray start --head` and a second
`ray start` that joins it with a resource of its own (`node2`), each with its own temp folder.
Node 2 runs in its own mount namespace where the test session's temp folder is an empty tmpfs,
so it cannot read the files a test writes there, as a machine with no shared disk cannot.

Both are stopped by killing their own process groups (every Ray process a `ray start --block`
starts stays in its group), never by `ray stop`, which would stop every Ray on the machine."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RAY = str(Path(sys.executable).with_name("ray"))
Popen = subprocess.Popen[bytes]
START = 240.0
"""Seconds the two nodes may take to start and join on a loaded machine."""
SLOW_MACHINE = {"RAY_raylet_start_wait_time_s": "240"}
"""A raylet may take this long to register (60 s by default, exceeded on 2 cores under load)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(test: Callable[[], Any], what: str, timeout: float) -> Any:
    """Poll `test` until it returns something true; fail naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = test()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def group_pids(pgid: int) -> list[int]:
    """The live processes of a process group, from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(stat.parent.name))
    return found


@dataclass
class Cluster:
    """The cluster's address, the environment a driver needs to join it, its two nodes."""

    address: str
    env: dict[str, str]
    head: subprocess.Popen[bytes]
    node2: subprocess.Popen[bytes]
    shared: Path
    """A folder both nodes see at the same path, as a shared filesystem would be."""
    folders: list[Path] = field(default_factory=list)
    client: str = ""
    """The head's Ray Client address (`ray://127.0.0.1:PORT`)."""

    def raylet(self, node: subprocess.Popen[bytes]) -> int:
        """The process id of a node's raylet."""
        for pid in group_pids(node.pid):
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/comm").read_text().strip() == "raylet":
                    return pid
        raise AssertionError(f"no raylet in the process group {node.pid}")

    def stop(self) -> None:
        for node in (self.node2, self.head):
            stop_node(node)
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)


def cluster_env() -> dict[str, str]:
    """Token authentication on (Ray's default); this checkout's graphbook first on the path."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    settings = {"PYTHONPATH": path, "RAY_AUTH_MODE": "token", "PYTHONUNBUFFERED": "1"}
    return {**os.environ, **settings, **SLOW_MACHINE}


def start(private: Path) -> Cluster:
    """Start the head and node 2 (which cannot see `private`), and wait until both are up."""
    env = cluster_env()
    folders = [Path(tempfile.mkdtemp(prefix="gb-rayc-")) for _ in range(3)]
    client = free_port()
    head, address = start_head(folders[0], env, client=client)
    node2 = start_node(address, folders[1], env, {"node2": 1}, hide=private)
    cluster = Cluster(address, env, head, node2, folders[2], folders, f"ray://127.0.0.1:{client}")
    try:
        wait_started("head", head, folders[0])
        wait_started("node 2", node2, folders[1])
    except BaseException:
        cluster.stop()
        raise
    return cluster


def ray_start(*more: str) -> list[str]:
    common = ["--object-store-memory=150000000", "--disable-usage-stats", "--block"]
    return [RAY, "start", *common, *more]


def start_head(
    folder: Path, env: dict[str, str], cpus: int = 1, client: int | None = None
) -> tuple[Popen, str]:
    """`ray start --head` with its temp folder `folder` (and a Ray Client server on the port
    `client`, when given), once its GCS listens: the process and the cluster's address."""
    port = free_port()
    command = ray_start("--head", f"--port={port}", f"--temp-dir={folder}", f"--num-cpus={cpus}")
    command += ["--include-dashboard=false", f"--dashboard-port={free_port()}"]
    if client is not None:
        command += [f"--ray-client-server-port={client}"]
    head = subprocess.Popen(
        command,
        env=env,
        stdout=(folder / "start.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    wait_until(lambda: _listening(port) or head.poll() is not None, "the head's GCS", START)
    return head, f"127.0.0.1:{port}"


def start_node(
    address: str,
    folder: Path,
    env: dict[str, str],
    resources: dict[str, int] | None = None,
    hide: Path | None = None,
    cpus: int = 1,
) -> Popen:
    """`ray start` joining `address` (in its own mount namespace where `hide` is an empty
    tmpfs, when given); `wait_started` waits until it has joined."""
    command = [f"--address={address}", f"--temp-dir={folder}", f"--num-cpus={cpus}"]
    if resources:
        command += ["--resources=" + json.dumps(resources)]
    command = ray_start(*command)
    if hide is not None:
        hiding = 'mount -t tmpfs none "$0" && exec "$@"'
        command = ["unshare", "-m", "sh", "-c", hiding, str(hide), *command]
    return subprocess.Popen(
        command,
        env=env,
        stdout=(folder / "start.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_started(name: str, node: Popen, folder: Path) -> None:
    """Wait until `ray start` says its node runs; fail with what it said."""
    started = functools.partial(_started, name, node, folder)
    try:
        wait_until(started, f"the {name} to start", START)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; it said:\n{_tail(folder / 'start.log')}") from None


def stop_node(node: Popen) -> None:
    """Kill a node's process group (every Ray process its `ray start --block` started)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, signal.SIGKILL)
    node.wait(timeout=30)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _started(name: str, node: subprocess.Popen[bytes], folder: Path) -> bool:
    """Whether `ray start` says its node runs (node 2: that it has joined the head)."""
    log = (folder / "start.log").read_text()
    if node.poll() is not None:
        raise AssertionError(f"the {name} exited with {node.returncode}:\n{log[-2000:]}")
    return "Ray runtime started" in log


def _tail(log: Path) -> str:
    with contextlib.suppress(OSError):
        return log.read_text()[-1500:]
    return "no log"
