"""The node-file index: which node names each file of a node folder defines, without importing it.

`graphbook run` imports only the files that define the nodes its workflow uses (a folder of
node files may import torch, which alone costs seconds). A file's names are read from its
syntax: every class it defines, and the name each `@step(...)`/`@resource(...)` gives a
function. That over-counts (a helper class is listed too), which costs only an import. When an
import shows the file's real names, they replace the guess. Entries are kept by file size and
modification time in `__pycache__/graphbook-nodes.json` beside the files, so a changed file is
read again; a folder that cannot be written to is simply read every time.
"""

from __future__ import annotations

import ast
import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

INDEX_VERSION = 1
INDEX_FILE = Path("__pycache__") / "graphbook-nodes.json"
NAMING_DECORATORS = ("step", "resource")


def node_files(root: Path) -> list[Path]:
    """The node files under `root`: every `.py` file not in a hidden or dunder folder or file."""
    return [
        path
        for path in sorted(root.rglob("*.py"))
        if not any(part.startswith((".", "__")) for part in path.relative_to(root).parts)
    ]


def plugin_inits(root: Path) -> list[Path]:
    """The `__init__.py` files under `root` of Graphbook 0.13 plugin packages: those that call
    `export(...)` or `web(...)`, or import 0.13's plugin module."""
    found = []
    for path in sorted(root.rglob("__init__.py")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        try:
            tree = ast.parse(path.read_bytes(), str(path))
        except (SyntaxError, ValueError, OSError):
            continue
        if any(_is_plugin_call(node) for node in ast.walk(tree)):
            found.append(path)
    return found


def _is_plugin_call(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.module in ("graphbook.plugins", "graphbook.core.plugins")
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in ("export", "web")
    return False


class NodeIndex:
    """Node names by file for one node folder, cached by each file's size and mtime."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / INDEX_FILE
        self._entries: dict[str, dict[str, Any]] = self._read()
        self._changed = False

    def names(self, path: Path) -> set[str]:
        """The node names `path` may define (from the cache while the file is unchanged)."""
        key, stamp = self._key(path), _stamp(path)
        entry = self._entries.get(key)
        if entry is not None and entry.get("stamp") == stamp:
            return set(entry.get("names", []))
        names = declared_names(path)
        self._set(key, stamp, names)
        return names

    def record(self, path: Path, names: Iterable[str]) -> None:
        """The names an import of `path` really registered."""
        self._set(self._key(path), _stamp(path), set(names))

    def save(self) -> None:
        if not self._changed:
            return
        data = {"version": INDEX_VERSION, "files": self._entries}
        try:
            self.path.parent.mkdir(exist_ok=True)
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            temporary.write_text(json.dumps(data, sort_keys=True))
            os.replace(temporary, self.path)
        except OSError as exc:  # a read-only folder: read the files again next time
            logger.info("could not write the node index %s: %s", self.path, exc)
        self._changed = False

    def _set(self, key: str, stamp: list[int], names: set[str]) -> None:
        entry = {"stamp": stamp, "names": sorted(names)}
        if self._entries.get(key) != entry:
            self._entries[key] = entry
            self._changed = True

    def _key(self, path: Path) -> str:
        return path.resolve().relative_to(self.root.resolve()).as_posix()

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
            return {}
        files = data.get("files")
        return files if isinstance(files, dict) else {}


def _stamp(path: Path) -> list[int]:
    stat = path.stat()
    return [stat.st_mtime_ns, stat.st_size]


def declared_names(path: Path) -> set[str]:
    """Class names and `@step`/`@resource` names in a file's syntax; none if it does not parse
    (importing it would fail too, and is reported when every file is loaded)."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError, OSError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            named = [_given_name(d) for d in node.decorator_list if _is_naming(d)]
            names.update(n if n is not None else node.name for n in named)
        elif isinstance(node, ast.Call) and _is_naming(node.func):  # step("X")(fn)
            given = _given_name(node.func)
            if given is not None:
                names.add(given)
    return names


def _is_naming(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr in NAMING_DECORATORS
    return isinstance(target, ast.Name) and target.id in NAMING_DECORATORS


def _given_name(decorator: ast.expr) -> str | None:
    """The node name a `@step("Cat/Name")` gives (its last segment); None if it gives none."""
    if not isinstance(decorator, ast.Call):
        return None
    values = [*decorator.args[:1], *(k.value for k in decorator.keywords if k.arg == "name")]
    for value in values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts = [p for p in value.value.strip().split("/") if p]
            return parts[-1] if parts else None
    return None
