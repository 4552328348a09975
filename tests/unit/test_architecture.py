"""The layers written in ARCHITECTURE.md hold for the code: every import points to its own floor
or below, no modules import each other in a circle, and every module is on the map.

Each module is parsed once; its imports are all of them: at the top, inside functions, under
TYPE_CHECKING, absolute and relative."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

from tests.unit.package_code import PACKAGE, ROOT, modules, tree

FLOOR_ROW = re.compile(r"^\| (\d+) \| [^|]+ \| (.+) \|$", re.MULTILINE)
EXCEPTION = re.compile(r"^- `(graphbook[\w.]*)` imports `(graphbook[\w.]*)`: \S", re.MULTILINE)
CIRCLE = re.compile(r"^- circle: (`graphbook[\w.]*`(?:, `graphbook[\w.]*`)+)", re.MULTILINE)
NAME = re.compile(r"`(graphbook[\w.]*)`")


@functools.cache
def architecture() -> str:
    return (ROOT / "ARCHITECTURE.md").read_text()


@functools.cache
def floors() -> dict[str, int]:
    """Each name the layer table places (a module, or a package and all in it) -> its floor."""
    placed: dict[str, int] = {}
    for floor, cell in FLOOR_ROW.findall(architecture()):
        for name in NAME.findall(cell):
            assert name not in placed, f"{name} is on two floors of ARCHITECTURE.md's table"
            placed[name] = int(floor)
    return placed


def exceptions() -> set[tuple[str, str]]:
    return set(EXCEPTION.findall(architecture()))


def open_circles() -> list[frozenset[str]]:
    return [frozenset(NAME.findall(names)) for names in CIRCLE.findall(architecture())]


def floor_of(module: str) -> int | None:
    """The floor of the longest name in the table that holds `module` (the package itself,
    `graphbook`, holds only its own `__init__`)."""
    for name in sorted(floors(), key=len, reverse=True):
        if module == name or (name != PACKAGE and module.startswith(name + ".")):
            return floors()[name]
    return None


@functools.cache
def imports_of(module: str) -> frozenset[str]:
    """The graphbook modules `module` imports, each as the module (or package) that exists."""
    path = modules()[module]
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return frozenset(imports_in(tree(module), here) - {module})


def imports_in(code: ast.Module, here: str) -> set[str]:
    """What a module in package `here` imports of graphbook: every import statement."""
    found: set[str] = set()
    for node in ast.walk(code):
        if isinstance(node, ast.Import):
            found.update(existing(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node, here)
            found.update(existing(f"{base}.{alias.name}") for alias in node.names)
    return found - {""}


def absolute(node: ast.ImportFrom, here: str) -> str:
    if not node.level:
        return node.module or ""
    parts = here.split(".")[: len(here.split(".")) - node.level + 1]
    return ".".join([*parts, node.module] if node.module else parts)


def existing(name: str) -> str:
    """`name` cut back to a module of graphbook (`graphbook.steps.Step` -> `graphbook.steps`);
    "" for a module outside it."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name


def arrows() -> Iterator[tuple[str, str]]:
    for module in modules():
        for imported in imports_of(module):
            yield module, imported


def test_the_table_places_every_module() -> None:
    assert len(set(floors().values())) >= 8, "ARCHITECTURE.md's layer table is missing"
    unplaced = sorted(m for m in modules() if floor_of(m) is None)
    assert not unplaced, f"modules on no floor of ARCHITECTURE.md's table: {unplaced}"
    stale = sorted(n for n in floors() if n not in modules())
    assert not stale, f"ARCHITECTURE.md's table names modules that do not exist: {stale}"


def test_every_import_points_to_its_floor_or_below() -> None:
    allowed = exceptions()
    broken = [
        f"{module} (floor {floor_of(module)}) imports {imported} (floor {floor_of(imported)})"
        for module, imported in arrows()
        if (floor_of(imported) or 0) > (floor_of(module) or 0) and (module, imported) not in allowed
    ]
    assert not broken, "imports that run up a floor:\n" + "\n".join(sorted(broken))


def test_every_exception_is_an_import_that_runs_up() -> None:
    """An exception the code no longer needs is taken off the list, not kept just in case."""
    upward = {(m, i) for m, i in arrows() if (floor_of(i) or 0) > (floor_of(m) or 0)}
    stale = sorted(exceptions() - upward)
    assert not stale, f"ARCHITECTURE.md excepts imports that do not run up: {stale}"


def test_no_modules_import_each_other_in_a_circle() -> None:
    found = circles({m: imports_of(m) for m in modules()})
    known = open_circles()
    new = [sorted(c) for c in found if c not in known]
    assert not new, f"modules that import each other in a circle: {new}"
    gone = [sorted(c) for c in known if c not in found]
    assert not gone, f"ARCHITECTURE.md lists circles that are broken now; remove them: {gone}"


def circles(graph: dict[str, frozenset[str]]) -> list[frozenset[str]]:
    """The strongly connected sets of two or more modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.get(module, frozenset()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            members = {stack.pop()}
            while module not in members:
                members.add(stack.pop())
            if len(members) > 1:
                found.append(frozenset(members))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_relative_and_inner_imports_are_seen() -> None:
    """The check reads what the import system would: an import inside a function, a relative
    one, and a name taken from a module are arrows to that module."""
    source = "def f():\n    from ..events import Event\n    from . import parser\n"
    assert imports_in(ast.parse(source), "graphbook.cli") == {
        "graphbook.events",
        "graphbook.cli.parser",
    }
    assert imports_in(ast.parse("import graphbook.engine.executor as e"), "graphbook") == {
        "graphbook.engine.executor"
    }


def test_every_module_is_on_the_map() -> None:
    missing = [
        p.name
        for p in modules().values()
        if p.name not in ("__init__.py", "__main__.py") and p.name not in architecture()
    ]
    assert not missing, f"modules missing from ARCHITECTURE.md: {missing}"
