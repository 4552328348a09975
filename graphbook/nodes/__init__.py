"""Graphbook's node library: one module a pack, the core nodes (core.py) first.

The registry (graphbook/registry.py) knows no node of its own: whoever runs workflows (the CLI,
the server's run host, `run_workflow`) builds one with `library_registry()`, the library loaded.

A pack is a module of node classes and decorated functions (graphbook.nodes.files, ...), or a
package of such modules split by the kind of work (graphbook.nodes.curation: routing, sampling,
duplicates, fields), whose `__init__` docstring is the pack's. Its nodes name their category
("Sources", "Images", ...), which is where the palette shows them; the pack says where they come
from. A pack imports its heavy libraries (PIL, torch, pyarrow)
inside the functions that need them, so loading the library stays cheap for a workflow that
uses none of it.

Other people's packs are Python packages that name a module in the entry point group
`graphbook.nodes` (pyproject.toml: `[project.entry-points."graphbook.nodes"] mine =
"my_package.nodes"`); they load as the library does, under their distribution's name.
"""

from __future__ import annotations

import functools
import importlib.util
import pkgutil
from dataclasses import replace
from importlib.metadata import EntryPoint, entry_points

from graphbook.nodes import core
from graphbook.registry import Registry
from graphbook.spec import class_spec

ENTRY_POINT_GROUP = "graphbook.nodes"
PACKS: tuple[str, ...] = ("files", "tables", "datasets", "images", "models", "curation")
"""The library's packs, by module name under graphbook.nodes."""
EXAMPLES = "graphbook.examples.nodes"


def library_registry() -> Registry:
    """A registry holding the whole library: what a run of a workflow file can name."""
    registry = Registry()
    load_library(registry)
    return registry


def load_library(registry: Registry) -> None:
    """Register the core nodes, the library's packs, the examples' nodes, and every installed
    node pack."""
    load_core(registry)
    for name in PACKS:
        for module in pack_modules(name):
            registry.load_module(module, pack=name, pack_kind="builtin")
    registry.load_module(EXAMPLES, pack="examples", pack_kind="example")
    for point in installed_packs():
        registry.load_module(point.module, pack=pack_name(point), pack_kind="pack")


def load_core(registry: Registry) -> None:
    """The core pack: its steps under their class names, its resources under short ones
    (`Number`, `Function`, ...)."""
    for step_cls in core.STEPS:
        registry.add_spec(replace(class_spec(step_cls), pack="core", pack_kind="builtin"))
    for name, res_cls in core.RESOURCES.items():
        spec = class_spec(res_cls)
        registry.add_spec(replace(spec, name=name, pack="core", pack_kind="builtin"))


def pack_modules(name: str) -> list[str]:
    """The modules of the library's pack `name`: the module itself, or each module of the
    package (found on disk, not imported here: a pack that fails to import is the registry's
    to report)."""
    found = importlib.util.find_spec(f"{__name__}.{name}")
    folders = found.submodule_search_locations if found is not None else None
    if not folders:
        return [f"{__name__}.{name}"]
    names = sorted(info.name for info in pkgutil.iter_modules(list(folders)))
    return [f"{__name__}.{name}.{module}" for module in names]


@functools.cache
def installed_packs() -> list[EntryPoint]:
    """The installed packs' entry points, read once a process (reading every distribution's
    metadata takes tens of milliseconds)."""
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda point: point.name)


def pack_name(point: EntryPoint) -> str:
    """An installed pack's name: its distribution's, else the entry point's."""
    return point.dist.name if point.dist is not None else point.name
