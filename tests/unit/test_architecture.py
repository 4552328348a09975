"""The import rules written in ARCHITECTURE.md hold for the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULE = re.compile(
    r"^- `(graphbook[\w.]*)` never imports `(graphbook[\w.]*)`(?:, but in `(graphbook[\w.]*)`)?",
    re.MULTILINE,
)
LEAF = re.compile(r"^- `(graphbook[\w.]*)` imports no other `graphbook` module", re.MULTILINE)
ONLY = re.compile(r"^- `(graphbook[\w.]*)` imports only `(graphbook[\w.]*)`", re.MULTILINE)


def rules() -> list[tuple[str, str, str]]:
    """(owner, forbidden, the one module of owner allowed to, or "")."""
    return RULE.findall((ROOT / "ARCHITECTURE.md").read_text())


def leaves() -> list[str]:
    return LEAF.findall((ROOT / "ARCHITECTURE.md").read_text())


def shims() -> list[tuple[str, str]]:
    return ONLY.findall((ROOT / "ARCHITECTURE.md").read_text())


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in (ROOT / "graphbook").rglob("*.py")}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_architecture_lists_rules() -> None:
    assert len(rules()) >= 10


def test_rules_name_modules_that_exist() -> None:
    """A rule about a module that was moved or renamed would hold for nothing."""
    names = set(modules())
    named = [m for rule in (*rules(), *shims()) for m in rule if m] + leaves()
    stale = [m for m in named if not any(within(n, m) for n in names)]
    assert not stale, f"ARCHITECTURE.md has rules on modules that do not exist: {stale}"


def test_a_rule_s_exception_is_one_module_of_its_owner() -> None:
    """`X never imports Y, but in X.m`: the exception names a module inside X."""
    stray = [(o, a) for o, _, a in rules() if a and not within(a, o)]
    assert not stray, f"exceptions outside the package they are made in: {stray}"


def test_import_rules_hold() -> None:
    broken = [
        f"{name} imports {imported} (rule: {owner} never imports {forbidden})"
        for owner, forbidden, allowed in rules()
        for name, path in modules().items()
        if within(name, owner) and not (allowed and within(name, allowed))
        for imported in imports_of(path)
        if within(imported, forbidden)
    ]
    assert not broken, "\n".join(broken)


def test_leaf_modules_import_nothing_of_graphbook() -> None:
    """The modules every layer shares (the run's events, errors as values) stand alone."""
    assert leaves(), "ARCHITECTURE.md names no leaf module"
    broken = [
        f"{leaf} imports {imported}"
        for leaf in leaves()
        for imported in imports_of(ROOT / (leaf.replace(".", "/") + ".py"))
        if within(imported, "graphbook")
    ]
    assert not broken, "\n".join(broken)


def test_shims_import_only_what_they_re_export() -> None:
    """graphbook.core is 0.13's import paths and nothing else: it imports compat013 only."""
    assert shims(), "ARCHITECTURE.md names no shim"
    broken = [
        f"{name} imports {imported} (rule: {owner} imports only {allowed})"
        for owner, allowed in shims()
        for name, path in modules().items()
        if within(name, owner)
        for imported in imports_of(path)
        if within(imported, "graphbook") and not within(imported, allowed)
    ]
    assert not broken, "\n".join(broken)


def test_every_module_is_on_the_map() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text()
    missing = [
        p.name
        for p in (ROOT / "graphbook").rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py") and p.name not in text
    ]
    assert not missing, f"modules missing from ARCHITECTURE.md: {missing}"
