"""Functions in graphbook/ stay short: 50 lines at most, counted as ESLint's
`max-lines-per-function` counts them for web/ (eslint.config.js): blank lines, comments and the
docstring left out. A longer one is several concepts, to split into named functions."""

from __future__ import annotations

import ast

from tests.unit.package_code import ROOT, modules, tree

LIMIT = 50
WAITING: dict[str, str] = {}
"""Functions over the limit that another change splits, each with why it is not split here."""
BLOCKS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.ExceptHandler,
    ast.Match,
    ast.match_case,
)
"""Nodes whose span holds other statements (and so the blank lines and comments between them):
of these only the first line counts, the lines of what they hold count on their own."""


def lengths(code: ast.Module) -> dict[str, int]:
    """Each function's (and method's) qualified name -> its lines of code."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = f"{prefix}{getattr(child, 'name', '')}"
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found[name] = len(code_lines(child))
            scope = isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            visit(child, f"{name}." if scope else prefix)

    visit(code, "")
    return found


def code_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """The lines of `function` that hold code: neither blank, nor a comment, nor its docstring."""
    lines: set[int] = set()
    for node in ast.walk(function):
        start = getattr(node, "lineno", None)
        if start is not None:
            end = start if isinstance(node, BLOCKS) else getattr(node, "end_lineno", start)
            lines.update(range(start, end + 1))
    return lines - docstring_lines(function)


def docstring_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    first = function.body[0]
    value = first.value if isinstance(first, ast.Expr) else None
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return set()


def test_no_function_is_over_the_limit() -> None:
    long = {
        f"{path.relative_to(ROOT)}:{name}": size
        for module, path in modules().items()
        for name, size in lengths(tree(module)).items()
        if size > LIMIT
    }
    over = [f"{where} has {size} lines" for where, size in long.items() if where not in WAITING]
    assert not over, f"functions over {LIMIT} lines of code:\n" + "\n".join(over)
    split = sorted(WAITING.keys() - long.keys())
    assert not split, f"functions no longer over the limit; take them off WAITING: {split}"


def test_lines_are_counted_as_eslint_counts_them() -> None:
    source = 'def f():\n    """Doc\n    string."""\n\n    # a comment\n    x = 1\n    return x\n'
    assert lengths(ast.parse(source)) == {"f": 3}
    nested = "class A:\n    def m(self):\n        def inner():\n            pass\n"
    assert lengths(ast.parse(nested)) == {"A.m": 3, "A.m.inner": 2}
    called = "def g():\n    if x:\n        # why\n\n        h(\n            1,\n        )\n"
    assert lengths(ast.parse(called)) == {"g": 5}
