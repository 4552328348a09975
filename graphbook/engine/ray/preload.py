"""What a Ray actor imports as it starts: the slow modules (torch takes seconds of CPU) that the
workflow's code uses, so that its first task does not wait for them. Not what the driver
happens to have imported: a driver that imported torch for something else (a notebook, a test
session, a server that ran another workflow) would have every actor import it for nothing,
each start seconds longer.

The workflow's code is, for the pool's load and dump actors (started before any run), the node
files the driver loaded and the script it runs; for a batch step's stage actors, the step as
it is pickled to them: the modules its pickle names, and what those import at their top. What
a function needs and its actor did not preload is imported when the actor learns the function.
"""

from __future__ import annotations

import contextlib
import pickletools
import sys
from collections.abc import Iterable, Iterator
from types import ModuleType

from graphbook.registry import NODES_PACKAGE

SLOW = ("numpy", "torch", "torchvision", "PIL.Image")
"""Modules slow enough to import that an actor imports them as it starts, when the code it will
run uses them."""


def of_node_files() -> list[str]:
    """The SLOW modules that the node files the driver loaded, or the script it runs (a
    workflow built in Python), use."""
    modules = [module for name, module in list(sys.modules.items()) if _by_value(name)]
    return slow(name for module in modules for name in used_by(module))


def of_pickle(pickled: bytes) -> list[str]:
    """The SLOW modules that loading `pickled` (code, cloudpickled) imports: the modules it
    names (its functions and classes by reference, the modules its functions' globals are),
    and what those of them the driver has imported use (a module whose functions travel by
    value, a node file or the script, travels with only the globals they use: those are
    named)."""
    named = set(_strings(pickled))
    loaded = (sys.modules.get(name) for name in named if not _by_value(name))
    used = (name for module in loaded if module is not None for name in used_by(module))
    return slow([*named, *used])


def _by_value(name: str) -> bool:
    """Whether cloudpickle sends the functions of module `name` by value (its code with them)."""
    return name in (NODES_PACKAGE, "__main__") or name.startswith(NODES_PACKAGE + ".")


def used_by(module: ModuleType) -> set[str]:
    """The names of the modules that `module`'s globals are, or were defined in."""
    found: set[str] = set()
    for value in list(vars(module).values()):
        if isinstance(value, ModuleType):
            found.add(value.__name__)
            continue
        with contextlib.suppress(Exception):  # a lazy object may raise on any attribute
            name = getattr(value, "__module__", None)
            if isinstance(name, str):
                found.add(name)
    return found


def slow(names: Iterable[str]) -> list[str]:
    """The SLOW modules among `names` or their parents (`torch.nn` is torch's)."""
    given = set(names)
    return [m for m in SLOW if any(n == m or n.startswith(m + ".") for n in given)]


def _strings(pickled: bytes) -> Iterator[str]:
    """The strings of a pickle: module and qualified names among them (a GLOBAL's two)."""
    for _, arg, _ in pickletools.genops(pickled):
        if isinstance(arg, str):
            yield from arg.split(" ")


__all__ = ["SLOW", "of_node_files", "of_pickle", "slow", "used_by"]
