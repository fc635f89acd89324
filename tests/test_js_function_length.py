"""Page entry modules are small functions with one job each (issue 15: "split page files into small draw*/on*
functions"): no function in these static/js/page_*.js is longer than LIMIT lines (signature to closing brace,
nested functions counted in their parent too, so a long closure cannot hide its body in inner functions)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

JS = Path(__file__).resolve().parents[1] / "static" / "js"
LIMIT = 60
#: entry modules split so far; add a page here once its start() is split (page_data, page_forward, page_training,
#: page_playground are not yet)
SPLIT = ["attention", "film", "gate", "encoder", "embedding", "index", "disaggregation", "data", "training"]


def _code_only(src: str) -> str:
    """The source with comments, strings and template literals blanked (newlines kept), so braces count."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2) + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c in "\"'`":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", src[i : j + 1]))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(src: str) -> list[tuple[str, int, int]]:
    """(name, first line, length in lines) of every `function` in src."""
    code, found = _code_only(src), []
    for m in re.finditer(r"\bfunction\b\s*([\w$]*)\s*\(", code):
        start = code.index("{", m.end())
        depth, j = 0, start
        for j in range(start, len(code)):
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            if depth == 0:
                break
        a, b = code.count("\n", 0, m.start()) + 1, code.count("\n", 0, j) + 1
        found.append((m.group(1) or "<anonymous>", a, b - a + 1))
    return found


@pytest.mark.parametrize("slug", SPLIT)
def test_no_long_function_in_page(slug):
    long = [(name, line, n) for name, line, n in functions((JS / f"page_{slug}.js").read_text()) if n > LIMIT]
    assert long == [], f"page_{slug}.js: functions over {LIMIT} lines (split them): {long}"


def test_the_scanner_measures_functions():
    src = 'function a() {\n  var s = "}{";  // }\n  /* { */\n  function b() { return `{`; }\n}\nfunction c() {}\n'
    assert functions(src) == [("a", 1, 5), ("b", 4, 1), ("c", 6, 1)]
    long = "function start() {\n" + "  x();\n" * (LIMIT + 1) + "}\n"
    assert functions(long)[0][2] > LIMIT
