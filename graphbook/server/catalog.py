"""The node catalog: every node kind with its parameters and docs, and reloading node files."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from graphbook import protocol as p
from graphbook.engine.runners import json_data
from graphbook.errors import LoadFailure
from graphbook.node_index import node_files
from graphbook.params import type_fits
from graphbook.registry import Registry
from graphbook.server.nodefiles import IMPORT_LIMIT, NodeFiles
from graphbook.spec import NodeSpec

logger = logging.getLogger(__name__)


class CatalogState:
    """The registry as clients see it, with a version bumped on every change.

    Node files are never imported here: a child process imports them (NodeFiles, NOTE [ Node
    files at import ]), waited on from a thread, and what they define is recorded into a copy
    of the registry that replaces its contents on the event loop when done: the loop keeps
    serving, a request sees the catalog before a load or after it, and one load runs at a time.
    """

    def __init__(self, registry: Registry, folder: Path, limit: float = IMPORT_LIMIT) -> None:
        self.registry = registry
        self.folder = folder
        self.files = NodeFiles(limit)
        self.version = 1
        self._lock = asyncio.Lock()
        self.extra: Callable[[], list[p.NodeInfo]] = list
        """More catalog entries than the registry's kinds: the library's components."""

    async def load(self) -> None:
        """Import every node file in the folder (at start)."""
        if self.folder.is_dir():
            async with self._lock:
                await self._in_thread(lambda fresh: self._load_all(fresh))

    async def close(self) -> None:
        """End the process that imports node files."""
        async with self._lock:
            await asyncio.to_thread(self.files.close)

    def _load_all(self, registry: Registry) -> None:
        self.files.load(registry, self.folder, node_files(self.folder))
        registry.report_plugins(self.folder)

    def catalog(self) -> p.Catalog:
        nodes = [node_info(spec) for spec in self.registry] + self.extra()
        return p.Catalog(self.version, nodes, self.failures(), type_fits())

    def failures(self) -> list[LoadFailure]:
        return list(self.registry.failures.values())

    async def reload(self, changed: Iterable[Path]) -> p.CatalogChanged | None:
        """Re-import changed node files (drop deleted ones); the change, if any."""
        paths = sorted(path for path in set(changed) if _is_node_file(path, self.folder))
        if not paths:
            return None
        async with self._lock:
            before = {spec.name: spec.code_hash for spec in self.registry}
            failures_before = set(self.registry.failures)
            await self._in_thread(lambda fresh: self._reimport(fresh, paths))
            return self._changed(before, failures_before)

    def changed_elsewhere(
        self, added: list[str], removed: list[str], changed: list[str]
    ) -> p.CatalogChanged:
        """Entries of `extra` changed (a library component saved): the next version."""
        self.version += 1
        return p.CatalogChanged(self.version, added, removed, changed, self.failures())

    def _reimport(self, registry: Registry, paths: list[Path]) -> None:
        for path in paths:
            if not path.is_file():
                registry.unload_file(path)
        self.files.load(registry, self.folder, [path for path in paths if path.is_file()])

    async def _in_thread(self, load: Callable[[Registry], object]) -> None:
        fresh = self.registry.copy()
        await asyncio.to_thread(load, fresh)
        self.registry.take(fresh)

    def _changed(
        self, before: dict[str, str], failures_before: set[str]
    ) -> p.CatalogChanged | None:
        after = {spec.name: spec.code_hash for spec in self.registry}
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        changed_names = sorted(n for n in set(before) & set(after) if before[n] != after[n])
        same_failures = set(self.registry.failures) == failures_before
        if not (added or removed or changed_names) and same_failures:
            return None
        self.version += 1
        logger.info("catalog %d: +%s -%s ~%s", self.version, added, removed, changed_names)
        return p.CatalogChanged(self.version, added, removed, changed_names, self.failures())


def _is_node_file(path: Path, folder: Path) -> bool:
    try:
        parts = path.resolve().relative_to(folder.resolve()).parts
    except ValueError:
        return False
    return path.suffix == ".py" and not any(part.startswith((".", "__")) for part in parts)


def param_info(fields: dict[str, Any], default: Any) -> p.ParamInfo:
    return p.ParamInfo(**{**fields, "default": json_data(default)})


def node_info(spec: NodeSpec) -> p.NodeInfo:
    params = [param_info(param.to_json(), param.default) for param in spec.params]
    return p.NodeInfo(
        spec.name,
        spec.kind,
        spec.category,
        list(spec.inputs),
        list(spec.outputs),
        params,
        spec.doc,
        spec.code_hash,
        spec.gives,
        spec.pack,
        spec.pack_kind,
    )
