"""Functions in graphbook/ stay short: 50 lines at most, counted as ESLint's
`max-lines-per-function` counts them for web/ (eslint.config.js): blank lines, comments and the
docstring left out. A longer one is several concepts, to split into named functions."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 50
NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}
WAITING = {
    "graphbook/engine/ray_pool.py:RayPool.__init__": "split with the Ray pool itself (issue 39)",
}
"""Functions over the limit that another change splits, each with why it is not split here."""


def code_lines(source: str) -> set[int]:
    """The lines that hold code (a multi-line string's lines included)."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in NOT_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines


def lengths(source: str) -> dict[str, int]:
    """Each function's (and method's) qualified name -> its lines of code."""
    code = code_lines(source)
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = f"{prefix}{getattr(child, 'name', '')}"
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found[name] = len(body_lines(child) & code)
            scope = isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            visit(child, f"{name}." if scope else prefix)

    visit(ast.parse(source), "")
    return found


def body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    lines = set(range(function.lineno, (function.end_lineno or function.lineno) + 1))
    first = function.body[0]
    value = first.value if isinstance(first, ast.Expr) else None
    if isinstance(value, ast.Constant) and isinstance(value.value, str):  # the docstring
        lines -= set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def test_no_function_is_over_the_limit() -> None:
    long = {
        f"{path.relative_to(ROOT)}:{name}": size
        for path in sorted((ROOT / "graphbook").rglob("*.py"))
        for name, size in lengths(path.read_text()).items()
        if size > LIMIT
    }
    over = [f"{where} has {size} lines" for where, size in long.items() if where not in WAITING]
    assert not over, f"functions over {LIMIT} lines of code:\n" + "\n".join(over)
    split = sorted(WAITING.keys() - long.keys())
    assert not split, f"functions no longer over the limit; take them off WAITING: {split}"


def test_lines_are_counted_as_eslint_counts_them() -> None:
    source = 'def f():\n    """Doc\n    string."""\n\n    # a comment\n    x = 1\n    return x\n'
    assert lengths(source) == {"f": 3}
    nested = "class A:\n    def m(self):\n        def inner():\n            pass\n"
    assert lengths(nested) == {"A.m": 3, "A.m.inner": 2}
