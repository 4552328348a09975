"""NodeFiles: the server's node files imported and described in a child process, with a time
limit, so that whatever a file does at import is an error listed against that file.

NOTE [ Node files at import ]
A node file is user code, and importing it runs it: it may raise, call `sys.exit(3)` or
`os._exit`, kill its own process, raise KeyboardInterrupt, or loop forever. The server never
imports one. A child process (a fresh interpreter in a session of its own, its stdout sent to
stderr: `graphbook mcp` speaks on stdout) imports each file in turn and sends back, per file,
the specs of its nodes as data only (`NodeSpec.described`: no code, plain defaults) or its
failure. Whatever happens to the child is the failure of the file it was importing: it ended
(with its exit code or signal), or it took longer than the limit (it is ended, with its whole
process group). A fresh child then goes on with the files left. The child stays warm between
reloads, as the server's own imports once did (a file that imports torch pays it once).

Its replies are read as data: only Graphbook's and Python's own types are unpickled, so reading
them never imports a node file's module in the server.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from graphbook.errors import LoadFailure
from graphbook.registry import Registry, failure_of, file_key, import_specs
from graphbook.spec import NodeSpec

logger = logging.getLogger(__name__)
IMPORT_LIMIT = 60.0
"""Seconds one node file has to import (torch alone takes seconds on a loaded machine)."""
POLL = 0.1
"""Seconds between looks at the child while waiting for its reply."""
ENDING = 5.0
"""Seconds a child whose pipe closed has to exit, to tell its exit code."""
BOOT = "from graphbook.server.nodefiles import main; main"
SAFE_MODULES = ("builtins", "copyreg", "collections", "pathlib", "graphbook")
"""Where the classes in a child's reply may come from (never a node file's module)."""


@dataclass(frozen=True)
class Describe:
    """To the child: import these node files of `root`, in order."""

    root: Path
    paths: tuple[Path, ...]


@dataclass(frozen=True)
class Described:
    """From the child, per file: the specs of its nodes (data only), or its failure."""

    key: str
    specs: tuple[NodeSpec, ...]
    failure: LoadFailure | None


class Child:
    """One child process that imports node files, and the server's end of its pipe."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self.conn = Connection(ours.detach())
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"{BOOT}({theirs.fileno()})"],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            start_new_session=True,  # ended as a group: what a file forked goes with it
        )
        theirs.close()

    def reply(self, limit: float) -> Described | str:
        """The child's next reply; or why none came: it ended, or `limit` passed (it is then
        ended). Waits on the process as well as the pipe: a process a node file forked may
        hold the pipe open after the child has ended."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.conn.poll(POLL):
                return self._read()
            if self.process.poll() is not None and not self.conn.poll(0):
                return self._ended()
        self.end()
        return f"it did not finish importing within {limit:.0f} s (a loop at import?)"

    def _ended(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(ENDING)
        code = self.process.poll()
        self.end()
        how = "its pipe closed" if code is None else _exit_text(code)
        return f"importing it ended the process that imported it ({how})"

    def _read(self) -> Described | str:
        try:
            data = self.conn.recv_bytes()
        except (EOFError, OSError):
            return self._ended()
        try:
            found = _DataOnly(io.BytesIO(data)).load()
        except Exception as exc:  # a default or name that is not plain data: the file's error
            return f"its nodes could not be described as data: {type(exc).__name__}: {exc}"
        return found if isinstance(found, Described) else f"an unexpected reply {found!r:.80}"

    def end(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        with contextlib.suppress(OSError):
            self.conn.close()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


class NodeFiles:
    """Node files imported in a child process (NOTE [ Node files at import ]), their results
    recorded into a registry. Blocking: called from a thread, one call at a time."""

    def __init__(self, limit: float = IMPORT_LIMIT) -> None:
        self.limit = limit
        self._child: Child | None = None

    def load(self, registry: Registry, root: Path, paths: Iterable[Path]) -> None:
        """Import `paths` (node files of `root`) and record in `registry` what each defines,
        or its failure."""
        pending = list(paths)
        while pending:
            child = self._warm()
            try:
                child.conn.send(Describe(root, tuple(pending)))
            except OSError:  # it had ended since the last load: a fresh one
                child.end()
                self._child = None
                continue
            while pending:
                found = child.reply(self.limit)
                path = pending.pop(0)
                if isinstance(found, Described):
                    _record(registry, found)
                    continue
                key = file_key(path, root)
                registry.record_failure(LoadFailure(key, f"not loaded: {found}", ""))
                if not child.alive:
                    self._child = None
                    break

    def close(self) -> None:
        if self._child is not None:
            self._child.end()
            self._child = None

    def _warm(self) -> Child:
        if self._child is None or not self._child.alive:
            if self._child is not None:
                self._child.end()
            self._child = Child()
        return self._child


def _record(registry: Registry, found: Described) -> None:
    if found.failure is not None:
        registry.record_failure(found.failure)
    else:
        registry.record_file(found.key, list(found.specs))


class _DataOnly(pickle.Unpickler):
    """Unpickles Graphbook's and Python's own types only: never a node file's module."""

    def find_class(self, module: str, name: str) -> Any:
        if module.split(".")[0] not in SAFE_MODULES:
            raise pickle.UnpicklingError(f"{module}.{name} is not plain data")
        return super().find_class(module, name)


def _exit_text(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
    return True


# -- the child ---------------------------------------------------------------------------------
def describe(root: Path, path: Path) -> Described:
    """Import one node file here: what it defines, as data, or its failure."""
    key = file_key(path, root)
    try:
        specs = tuple(spec.described() for spec in import_specs(path, root))
        pickle.dumps(specs)
    except BaseException as exc:  # whatever the file does at import is its failure
        return Described(key, (), failure_of(key, exc))
    return Described(key, specs, None)


def main(fd: int) -> None:
    """The child: a fresh interpreter (`Child` starts `python -c` with a call of it) that
    imports the node files it is asked to, until its pipe closes. SIGINT is ignored: Ctrl-C
    reaches the server, which decides; a KeyboardInterrupt here came from a file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="node files: %(levelname)s %(message)s")
    conn = Connection(fd)
    while True:
        try:
            order: Describe = conn.recv()
        except (EOFError, OSError):
            return
        for path in order.paths:
            conn.send(describe(order.root, path))
