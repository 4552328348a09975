"""Graphbook's node library: one module a pack, loaded into every registry beside the core nodes.

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
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphbook.registry import Registry

ENTRY_POINT_GROUP = "graphbook.nodes"
PACKS: tuple[str, ...] = ("files", "tables", "datasets", "images", "models", "curation")
"""The library's packs, by module name under graphbook.nodes."""
EXAMPLES = "graphbook.examples.nodes"


def load_library(registry: Registry) -> None:
    """Register the library's packs, the examples' nodes, and every installed node pack."""
    for name in PACKS:
        for module in pack_modules(name):
            registry.load_module(module, pack=name, pack_kind="builtin")
    registry.load_module(EXAMPLES, pack="examples", pack_kind="example")
    for point in installed_packs():
        registry.load_module(point.module, pack=pack_name(point), pack_kind="pack")


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
