"""scripts/mutants.py (`make mutate`): which mutants it makes of a small source, and that each keeps line numbers."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "mutants.py"
SOURCE = '''def f(x, ys):
    """Doc: x < 1 is never mutated here."""
    if x <= 1 and not ys:
        raise ValueError(f"bad {x + 1}")
    total = max(0.5, x * 2)
    return (total - x,
            "key")
'''


def _tool():
    spec = importlib.util.spec_from_file_location("mutants_tool", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    return mod


def test_the_standard_mutations_of_a_small_function():
    tool = _tool()
    found = tool._Finder("f.py", SOURCE, None).find()
    got = sorted((span[0], text) for span, text, _ in found)
    assert got == sorted(
        [
            (3, "(ys)"),  # not ys -> ys
            (3, "0"),  # 1 -> 0
            (3, "2"),  # 1 -> 2
            (3, "<"),  # <= -> <
            (3, "or"),
            (4, "pass"),  # the raise removed; its message is not mutated
            (5, "1.0"),  # 0.5 -> 1.0
            (5, "1"),  # 2 -> 1
            (5, "3"),  # 2 -> 3
            (5, "/"),
            (5, "None"),  # the assigned value
            (5, "min"),
            (6, "+"),
            (7, "'XXkeyXX'"),
        ]
    )


def test_a_mutant_keeps_every_line_on_its_number_and_parses():
    tool = _tool()
    tree = ast.parse(SOURCE)
    ret = tree.body[0].body[-1]  # the two-line return
    fd = tool._Finder("f.py", SOURCE, None)
    out = tool.apply(SOURCE, fd.span(ret.value), "None")
    assert out.count("\n") == SOURCE.count("\n")
    assert ast.parse(out).body[0].body[-1].lineno == ret.lineno
    assert "return None" in out
