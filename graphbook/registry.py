"""The registry: every node kind known to a session, loaded from code and from node folders."""

from __future__ import annotations

import difflib
import importlib.util
import logging
import signal
import sys
import traceback
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from graphbook.decorators import collecting, draft_of, function_spec, is_node_function
from graphbook.errors import GraphbookError, LoadFailure, NodeDefinitionError
from graphbook.lifecycle import BatchStep, GeneratorSourceStep, PromptStep, SourceStep, Step
from graphbook.node_index import NodeIndex, node_files, plugin_inits
from graphbook.resources import Resource
from graphbook.spec import NodeSpec, PackKind, class_spec

_BASES = {Step, SourceStep, GeneratorSourceStep, BatchStep, PromptStep, Resource}
logger = logging.getLogger(__name__)
NODES_PACKAGE = "graphbook_nodes"


class UnknownNodeError(GraphbookError):
    """No node kind with this name is registered."""


class Registry:
    """Node kinds by name. Build one, fill it, and pass it to whatever needs it."""

    def __init__(self) -> None:
        self._specs: dict[str, NodeSpec] = {}
        self._owners: dict[str, str] = {}
        """Node name -> the file that defined it, so a reload drops nodes a file no longer has."""
        self.failures: dict[str, LoadFailure] = {}

    def add(self, node: Any) -> NodeSpec:
        """Register a Step/Resource class or a decorated function; returns its spec."""
        spec = spec_of(node)
        return self.add_spec(spec)

    def add_spec(self, spec: NodeSpec) -> NodeSpec:
        old = self._specs.get(spec.name)
        if old is not None and old.origin and spec.origin and old.origin != spec.origin:
            logger.warning(
                "node %r from %s replaces the one from %s", spec.name, spec.origin, old.origin
            )
        self._specs[spec.name] = spec
        self._owners.pop(spec.name, None)
        return spec

    def get(self, name: str) -> NodeSpec:
        spec = self._specs.get(name)
        if spec is None:
            raise UnknownNodeError(self.unknown_message(name))
        return spec

    def unknown_message(self, name: str) -> str:
        return f"unknown node type {name!r}; {self.suggest(name)}"

    def suggest(self, name: str) -> str:
        """How to fix an unknown node name: the closest known names, or where nodes come from."""
        close = difflib.get_close_matches(name, list(self._specs), n=3, cutoff=0.6)
        lowered = [n for n in self._specs if n.lower() == name.lower() and n not in close]
        close = lowered + close
        if close:
            return f"did you mean {', '.join(map(repr, close))}?"
        return "load the file that defines it with --nodes DIR"

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[NodeSpec]:
        return iter(sorted(self._specs.values(), key=lambda s: (s.category, s.name)))

    def __len__(self) -> int:
        return len(self._specs)

    def copy(self) -> Registry:
        """A registry with the same nodes and failures, to change without touching this one."""
        other = Registry()
        other._specs, other._owners = dict(self._specs), dict(self._owners)
        other.failures = dict(self.failures)
        return other

    def take(self, other: Registry) -> None:
        """Hold `other`'s nodes and failures from now on, in one step: whoever holds this
        registry sees all of a reload done on a copy, or none of it."""
        self._specs, self._owners, self.failures = other._specs, other._owners, other.failures

    def load_folder(self, folder: Path | str) -> list[NodeSpec]:
        """Import every `.py` file under `folder`; a file that fails is recorded, not raised."""
        root = _node_folder(folder)
        added: list[NodeSpec] = []
        for path in node_files(root):
            added.extend(self.load_file(path, root))
        self.report_plugins(root)
        return added

    def load_needed(
        self,
        folders: Iterable[Path | str],
        names: Iterable[str],
        modules: Mapping[str, str] | None = None,
    ) -> list[NodeSpec]:
        """Import only the files of `folders` that define the node kinds `names` (found by the
        node-file index, graphbook/node_index.py); if one is still unknown after that, import
        every other file too, so nothing is missed that loading everything would find; then,
        for a kind still unknown, the Python module `modules` names for it (a 0.13 file's
        `data.module`)."""
        wanted = set(names)
        indexes = [NodeIndex(_node_folder(folder)) for folder in folders]
        added: list[NodeSpec] = []
        rest: list[tuple[NodeIndex, Path]] = []
        for index in indexes:
            for path in node_files(index.root):
                if wanted & index.names(path):
                    added.extend(self._load_indexed(index, path))
                else:
                    rest.append((index, path))
        if wanted - self._specs.keys():
            for index, path in rest:
                added.extend(self._load_indexed(index, path))
            for index in indexes:
                self.report_plugins(index.root)
        for index in indexes:
            index.save()
        for name in sorted(wanted - self._specs.keys()):
            if modules and modules.get(name):
                added.extend(self.load_module(modules[name]))
        return added

    def load_module(
        self, name: str, pack: str = "", pack_kind: PackKind = "custom"
    ) -> list[NodeSpec]:
        """Import a Python module by name and register the nodes it defines (as members of
        `pack`), and those its package exported as a Graphbook 0.13 plugin (`export(name, cls)`
        in its `__init__.py`, under that name); a module that fails to import is recorded as a
        failure, not raised."""
        key = f"module {name}"
        try:
            with collecting() as decorated:
                module = importlib.import_module(name)
            found = [
                replace(spec_of(node), pack=pack, pack_kind=pack_kind)
                for node in nodes_in(module, decorated)
            ]
            found += [replace(spec, pack=pack, pack_kind=pack_kind) for spec in exported_by(name)]
        except Exception as exc:
            self.failures[key] = LoadFailure(key, f"{type(exc).__name__}: {exc}", _trace(exc))
            return []
        self.failures.pop(key, None)
        for spec in found:
            self.add_spec(spec)
        return found

    def report_plugins(self, root: Path) -> None:
        """A 0.13 plugin package's `__init__.py` (its `export()` and `web()` calls) is not
        loaded; say so as a failure of that file, which the CLI and the editor show."""
        for path in plugin_inits(root):
            key = str(path.resolve())
            self.failures[key] = LoadFailure(
                key,
                "not loaded: a Graphbook 0.13 plugin's __init__.py (export() of nodes, web() "
                "of a browser bundle) does not run from a node folder; its node files here load "
                "as node files (installed as a package, its export() calls register the nodes), "
                "and web plugins are not supported",
                "",
            )

    def _load_indexed(self, index: NodeIndex, path: Path) -> list[NodeSpec]:
        found = self.load_file(path, index.root)
        if file_key(path, index.root) not in self.failures:
            index.record(path, (spec.name for spec in found))
        return found

    def load_file(self, path: Path, root: Path | None = None) -> list[NodeSpec]:
        """Import one node file and register the nodes it defines; whatever the file does at
        import (raise, `sys.exit`) is recorded as its failure, not raised."""
        root = root or path.parent
        key = file_key(path, root)
        try:
            found = import_specs(path, root)
        except BaseException as exc:  # a broken user file must not take the others down
            self.record_failure(failure_of(key, exc))
            return []
        return self.record_file(key, found)

    def record_file(self, key: str, found: list[NodeSpec]) -> list[NodeSpec]:
        """Node file `key` (file_key's) loaded and defines `found`, as they are now: its
        nodes it no longer defines are dropped, its failure is forgotten."""
        self.failures.pop(key, None)
        names = {spec.name for spec in found}
        for stale in [n for n, owner in self._owners.items() if owner == key and n not in names]:
            del self._specs[stale], self._owners[stale]
        for spec in found:
            self.add_spec(spec)
            self._owners[spec.name] = key
        return found

    def record_failure(self, failure: LoadFailure) -> None:
        """A node file failed to load: say so; the nodes it defined last keep their
        definitions (`broken_file` says why they are stale)."""
        self.failures[failure.path] = failure
        logger.warning("could not load node file %s: %s", failure.path, failure.error)

    def broken_file(self, name: str) -> LoadFailure | None:
        """Why the file that defined node kind `name` no longer loads, if it does not: the
        registry still holds the definition it had when it last loaded."""
        owner = self._owners.get(name)
        return self.failures.get(owner) if owner is not None else None

    def defined_by(self, path: Path | str) -> list[str]:
        """The names of the nodes that node file `path` defines, as last loaded."""
        key = str(Path(path).resolve())
        return sorted(name for name, owner in self._owners.items() if owner == key)

    def unload_file(self, path: Path | str) -> list[str]:
        """Forget a deleted node file: its nodes and its failure; returns the names dropped."""
        key = str(Path(path).resolve())
        self.failures.pop(key, None)
        dropped = [name for name, owner in self._owners.items() if owner == key]
        for name in dropped:
            del self._specs[name], self._owners[name]
        return dropped


@dataclass(frozen=True)
class Exported:
    """A node a package exported under a name of its own choosing: Graphbook 0.13's plugin API,
    `export(name, cls)` (graphbook/compat013/plugins.py), records each here as it is called."""

    name: str
    node: type
    module: str


EXPORTED: list[Exported] = []
"""Every export so far, in order (a package is imported once a process, and its exports with
it): what its import says, not a registry's state; `load_module` registers a package's."""


def exported_by(package: str) -> list[NodeSpec]:
    """The nodes `package` or any module under it (its top-level package's) exported, each under
    the name it was exported as."""
    top = package.split(".")[0]
    return [
        replace(spec_of(e.node), name=e.name) for e in EXPORTED if e.module.split(".")[0] == top
    ]


def _node_folder(folder: Path | str) -> Path:
    root = Path(folder)
    if not root.is_dir():
        raise GraphbookError(f"node folder {str(root)!r} does not exist or is not a folder")
    return root


def spec_of(node: Any) -> NodeSpec:
    if isinstance(node, NodeSpec):
        return node
    if isinstance(node, type):
        return class_spec(node)
    if is_node_function(node):
        return function_spec(node)
    raise NodeDefinitionError(
        f"{node!r} is not a node: use a Step/Resource subclass or a function decorated with "
        "@step(...) or @resource(...)"
    )


def nodes_in(module: ModuleType, decorated: Iterable[Any] = ()) -> list[Any]:
    """The node classes and functions a module defines itself (not ones it imported).

    `decorated` adds node functions seen while the module ran whose name was later rebound;
    a function and the `staticmethod` around it count once, as the module names it.
    """
    found: list[Any] = []
    seen: set[int] = set()
    for value in [*vars(module).values(), *decorated]:
        key = id(draft_of(value, create=False) or value)
        if key in seen or not _defined_in(value, module):
            continue
        if _is_node_class(value) or is_node_function(value):
            seen.add(key)
            found.append(value)
    return found


def _is_node_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, Step | Resource) and value not in _BASES


def _defined_in(value: Any, module: ModuleType) -> bool:
    target = getattr(value, "__func__", value)
    return getattr(target, "__module__", None) == module.__name__


def file_key(path: Path, root: Path) -> str:
    """How a registry names node file `path` of folder `root` (its failures, the owner of its
    nodes): its resolved path, or, for a symlink that leads outside the folder, the link's own
    path inside it (where it leads is not shown)."""
    resolved = path.resolve()
    if resolved.is_relative_to(root.resolve()):
        return str(resolved)
    return str(root.resolve() / path.relative_to(root))


def import_specs(path: Path, root: Path) -> list[NodeSpec]:
    """Import node file `path` of folder `root`: the specs of the nodes it defines. Raises
    whatever the import raised (SystemExit too)."""
    if not path.resolve().is_relative_to(root.resolve()):
        raise OutsideFolder(
            "not loaded: a symlink that leads outside the node folder (only files inside it load)"
        )
    with collecting() as decorated:
        module = import_file(path, root)
    return [spec_of(node) for node in nodes_in(module, decorated)]


class OutsideFolder(GraphbookError):
    """A node file is a symlink that leads outside its folder."""


def failure_of(key: str, exc: BaseException) -> LoadFailure:
    """Node file `key`'s failure to import, from what its import raised. A KeyboardInterrupt
    is raised again where Ctrl-C may have sent it (SIGINT handled): a person wants out; in a
    process that ignores SIGINT (the server's children), it came from the file."""
    if isinstance(exc, KeyboardInterrupt) and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        raise exc
    if isinstance(exc, OutsideFolder):
        return LoadFailure(key, str(exc), "")
    return LoadFailure(key, f"{type(exc).__name__}: {exc}", _trace(exc))


def import_file(path: Path, root: Path) -> ModuleType:
    """Import a file as module `graphbook_nodes.<relative.dotted.path>`, replacing any older one."""
    relative = path.resolve().relative_to(root.resolve()).with_suffix("")
    name = f"{NODES_PACKAGE}." + ".".join(relative.parts)
    _ensure_package(root)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise GraphbookError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        # Compiled from the text every time: a cached .pyc is keyed by the file's mtime in whole
        # seconds, so two saves within one second would otherwise load the older code.
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _ensure_package(root: Path) -> None:
    """Make `graphbook_nodes` importable (workers unpickle node functions by module name) and
    let node files import their sibling modules, as they could in Graphbook."""
    if NODES_PACKAGE not in sys.modules:
        package = ModuleType(NODES_PACKAGE)
        package.__path__ = []
        sys.modules[NODES_PACKAGE] = package
    folder = str(root.resolve())
    if folder not in sys.path:
        sys.path.append(folder)


def _trace(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))
