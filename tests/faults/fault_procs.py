"""Real processes for the fault tests: start `graphbook serve` and `graphbook run`, find their
workers in /proc, kill them, and check what is left (live processes, a bound port)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SERVING = re.compile(r"Graphbook is serving on (http://127\.0\.0\.1:(\d+)/)")
DEADLINE = 30.0

NODES = '''"""Nodes that block, for the fault tests."""

import os
import threading
import time
from pathlib import Path
from typing import Any

from graphbook import param, source, step
from graphbook.decorators import batch


def _mark(folder: str, what: str) -> None:
    if folder:
        Path(folder, f"{what}.{os.getpid()}").write_text(str(os.getpid()))


@step("Faults/Count")
@source()
@param("n", "int", default=4)
@param("marks", "string", default="")
def count(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"x": {"i": i, "marks": ctx.marks}}


def hang(item: dict) -> int:
    """A load function stuck in C: an Event nobody sets."""
    _mark(item["marks"], "load")
    threading.Event().wait()
    return item["i"]


def slow(item: dict) -> int:
    _mark(item["marks"], "load")
    time.sleep(0.2)
    return item["i"]


@step("Faults/Hang")
@batch(1, "x", load_fn=hang)
def hang_step(ctx: Any, outputs: list, items: list, data: list) -> None:
    pass


@step("Faults/Slow")
@batch(1, "x", load_fn=slow)
def slow_step(ctx: Any, outputs: list, items: list, data: list) -> None:
    pass


def arrays(item: dict) -> Any:
    """A load function whose result travels through shared memory."""
    import numpy

    _mark(item["marks"], "arrays")
    time.sleep(0.05)
    return numpy.zeros(1 << 16, dtype="uint8")


@step("Faults/Arrays")
@batch(1, "x", load_fn=arrays)
def arrays_step(ctx: Any, loaded: list, items: list, data: list) -> None:
    pass


def dump_hang(marks: str) -> None:
    """A dump function stuck in C."""
    _mark(marks, "dump")
    threading.Event().wait()


@step("Faults/DumpHang")
@batch(1, "x", dump_fn=dump_hang)
def dump_hang_step(ctx: Any, outputs: list, items: list, data: list) -> Any:
    return [(item["marks"],) for item in items]


@step("Faults/Relay")
def relay(ctx: Any, data: dict) -> None:
    pass


@step("Faults/Hog")
@param("marks", "string", default="")
def hog(ctx: Any, data: dict) -> None:
    """Node code that holds the GIL: one C call that never gives it up."""
    _mark(ctx.marks, "hog")
    sum(range(10**15))


@step("Faults/Fork")
@param("marks", "string", default="")
@param("leave", "boolean", default=False)
def fork(ctx: Any, data: dict) -> None:
    """Node code that forks a child which never exits (as a library on multiprocessing's fork
    start method may), then blocks; with `leave`, the child leaves the process group."""
    if os.fork() == 0:
        if ctx.leave:
            os.setsid()
        _mark(ctx.marks, "forked")
        while True:
            time.sleep(60)
    _mark(ctx.marks, "fork")
    threading.Event().wait()


@step("Faults/Stuck")
@param("marks", "string", default="")
def stuck(ctx: Any, data: dict) -> None:
    """Node code stuck in C in the run's own thread."""
    _mark(ctx.marks, "stuck")
    threading.Event().wait()
'''


def env() -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}


def wait_until(test: Callable[[], Any], what: str, timeout: float = DEADLINE) -> Any:
    """Poll `test` until it returns something true; fail naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = test()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


# -- /proc ------------------------------------------------------------------------------------
def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def run_hosts(pid: int) -> list[int]:
    """The server's children that are run hosts (it also keeps a child that imports node
    files: graphbook/server/nodefiles.py)."""
    found = []
    for child in children(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"graphbook.server.runhost" in command:
            found.append(child)
    return found


def descendants(pid: int) -> list[int]:
    found = []
    for child in children(pid):
        found += [child, *descendants(child)]
    return found


@contextlib.contextmanager
def reaping() -> Iterator[list[int]]:
    """Collect process ids; those still alive at the end are killed (a failing test must not
    leave the orphans it looks for)."""
    pids: list[int] = []
    try:
        yield pids
    finally:
        for pid in pids:
            if alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 9)


def listening(port: int) -> bool:
    """Whether anything listens on `port` of 127.0.0.1 (as a server binds: connections in
    TIME_WAIT after a kill do not count)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


# -- the server -------------------------------------------------------------------------------
@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    port: int
    err: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)
    """The threads reading the server's stdout and stderr until they end."""

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path.lstrip("/"), data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                text = response.read()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, json.loads(text) if text else None

    def current(self) -> Any:
        """The run going now (its snapshot), or None."""
        run = self.call("GET", "/api/runs/current")[1]["run"]
        return run if run is not None and run["status"] in ("running", "paused") else None

    def start(self, workflow: str, **body: Any) -> str:
        status, reply = self.call("POST", "/api/runs", {"workflow": workflow, **body})
        assert status == 202, reply
        return str(reply["run_id"])

    def ended(self, run_id: str, timeout: float = DEADLINE) -> str:
        """Wait for run `run_id` to end; its status."""

        def status() -> str | None:
            run = self.last()
            done = run and run["run_id"] == run_id and run["status"] not in ("running", "paused")
            return str(run["status"]) if done else None

        return str(wait_until(status, f"run {run_id} to end", timeout))

    def last(self) -> Any:
        """The current or last run's snapshot."""
        return self.call("GET", "/api/runs/current")[1]["run"]

    def workers(self) -> list[int]:
        return descendants(self.process.pid)

    def stop(self) -> str:
        """End the server with SIGINT; its stderr. Its pipes are closed once read to the end
        (left open, the garbage collector closed them later with a ResourceWarning that failed
        whichever test it ran in)."""
        if self.process.poll() is None:
            self.process.send_signal(2)
            self.process.wait(30)
        for reader in self.readers:
            reader.join(10)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        return "".join(self.err)


def project(folder: Path) -> Path:
    (folder / "nodes").mkdir(parents=True, exist_ok=True)
    (folder / "nodes" / "fault_nodes.py").write_text(NODES)
    (folder / "workflows").mkdir(exist_ok=True)
    (folder / "marks").mkdir(exist_ok=True)
    return folder


def workflow(folder: Path, name: str, kind: str, n: int = 4) -> str:
    """Count(n) -> `kind` (Hang, Slow, Stuck, Fork), which marks what it runs under marks/."""
    from graphbook.workflow import Workflow

    wf = Workflow()
    src = wf.add("Count", id="src", n=n, marks=str(folder / "marks"))
    marked = {"marks": str(folder / "marks")} if kind in ("Stuck", "Fork") else {}
    node = wf.add(kind, id="node", **marked)
    wf.connect(src, node)
    (folder / "workflows" / name).write_text(json.dumps(wf.to_json()))
    return name


def marks(folder: Path, what: str) -> list[int]:
    return [int(p.suffix[1:]) for p in (folder / "marks").glob(f"{what}.*")]


def serve(folder: Path, *args: str, port: int = 0, watch: bool = False) -> Served:
    command = [sys.executable, "-m", "graphbook", "serve", "--port", str(port)]
    command += [] if watch else ["--no-watch"]
    command += ["--nodes", str(folder / "nodes"), "--workflows", str(folder / "workflows")]
    process = subprocess.Popen(
        [*command, "--data", str(folder / "data"), "--media", str(folder / "media"), *args],
        cwd=folder,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    err: list[str] = []
    stderr = process.stderr
    errors = threading.Thread(target=lambda: err.extend(stderr), daemon=True)
    errors.start()
    line = process.stdout.readline()
    found = SERVING.search(line)
    if not found:
        process.kill()
        process.wait()
        errors.join(10)
        process.stdout.close()
        stderr.close()
        raise AssertionError(f"graphbook serve did not start: {line!r}\n{''.join(err)}")
    stdout = process.stdout
    output = threading.Thread(target=lambda: stdout.read(), daemon=True)
    output.start()
    return Served(process, found.group(1), int(found.group(2)), err, [errors, output])
