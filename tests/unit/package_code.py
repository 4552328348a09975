"""graphbook/'s modules, each read and parsed once a test session: the architecture test and
the function-length test read the same trees."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "graphbook"


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own)."""
    return {module_name(path): path for path in sorted((ROOT / PACKAGE).rglob("*.py"))}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def tree(module: str) -> ast.Module:
    path = modules()[module]
    return ast.parse(path.read_text(), str(path))
