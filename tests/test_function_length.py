"""No function in nilmbuild/ needs a scroll bar (issue 15: "no Python function in nilmbuild/ is longer than about
80 lines"). A function's length here is its signature and body without its docstring, so documenting a function
never pushes it over the limit, and a long function cannot hide behind a short docstring either."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "nilmbuild"
LIMIT = 80


def _length(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    n = fn.end_lineno - fn.lineno + 1
    first = fn.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        n -= first.end_lineno - first.lineno + 1
    return n


def _long_functions(limit: int) -> list[str]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _length(node) > limit:
                out.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name} ({_length(node)} lines)")
    return out


def test_no_function_over_the_limit():
    assert _long_functions(LIMIT) == [], "split these into functions with one job each"


def test_the_check_sees_long_functions():
    src = "def f():\n    '''doc\n    more'''\n" + "    x = 1\n" * 5
    fn = ast.parse(src).body[0]
    assert _length(fn) == 6  # def line + 5 statements; the 2-line docstring is not counted
