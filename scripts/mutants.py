"""Deliberate mutants, one at a time, against the tests that cover each module (issue 36; docs/testing.md).

mutmut re-imports torch and re-runs every listed test file for each mutant, which takes hours on 2 shared cores.
This pass applies the standard mutations (comparison and boundary, arithmetic, boolean, constant, call swap,
statement removal) to one module at a time and runs only that module's tests with `-x`: the parent imports the
heavy libraries once and forks a child per mutant, which imports nilmbuild afresh from a scratch copy of the
checkout where the one mutated file is written. A mutant is killed when the tests fail (or time out). A JS module's
mutants (the same kinds) are listed by scripts/js_mutants.mjs with acorn; the site build bundles the mutated file.

    python scripts/mutants.py --list                  the modules and their tests
    python scripts/mutants.py postprocess scalers     run those modules (all of them when none is named)
    python scripts/mutants.py postprocess --show 12   the diff of one mutant (ids from the run's report)
    python scripts/mutants.py postprocess --only 12   rerun one mutant

Out of scope on purpose: the text of messages (string constants and f-strings inside `raise`, warnings and
prints), docstrings and annotations. A removed `raise` statement is in scope: that is a guard going away.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tokenize
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path(os.environ.get("NILMBUILD_MUTANTS_DIR", "/tmp/nilmbuild-mutants"))

#: safe_pickle.py whole, and the parts of nilmtk_store.py that keep PyTables from unpickling attributes
NILMTK_SAFETY = {
    *("RefusedPickle", "TimezoneName", "_pytz_name", "_utc", "ALLOWED", "_Restricted", "loads_plain"),
    *("_Deferred", "_NoPickle", "_no_unpickling", "open_store", "_check_signature", "read_attr"),
}
#: the one test that trains a model on the NILMTK fixture (100 s; it checks that the commands run) is left out
NILMTK_SLOW = ["--deselect", "tests/test_data_nilmtk.py::test_data_train_and_evaluate_run_on_the_fixture"]

#: the embedding test of the frame's height messages (embed.js, not the URL state), which loads every page twice
EMBED_HEIGHT = ["--deselect", "tests/browser/test_embedding.py::test_every_page_sizes_its_frame_in_a_few_messages"]

#: name -> (files to mutate, only these top-level functions/classes or None for all, tests; the fastest first)
MODULES = {
    "metrics": (
        ["nilmbuild/infer/metrics.py"],
        None,
        ["tests/test_reference_values.py", "tests/test_infer_metrics.py"],
    ),
    "postprocess": (
        ["nilmbuild/infer/postprocess.py"],
        None,
        ["tests/test_infer_postprocess.py", "tests/test_reference_values.py", "tests/test_postprocess_end_to_end.py"],
    ),
    "seq2subseq": (["nilmbuild/infer/seq2subseq.py"], None, ["tests/test_infer_seq2subseq.py"]),
    "scalers": (
        ["nilmbuild/data/scalers.py", "nilmbuild/data/preprocess.py"],
        {
            "Scaler",
            "_safe",
            "MaxScaling",
            "StandardScaling",
            "MinMaxScaling",
            "MeanScaling",
            "AffineScaling",
            "scaler_affine",
            "scaler_affines",
            "make_scaler",
            "scaler_from_dict",
            "fit_scalers",
        },
        ["tests/test_reference_values.py", "tests/test_scalers.py", "tests/test_data_preprocess.py"],
    ),
    "checkpoint": (
        ["nilmbuild/model/checkpoint.py"],
        None,
        ["tests/test_security_loaders.py", "tests/test_checkpoint_loading.py", "tests/test_cli_model.py"],
    ),
    # where the weights of an upstream file are, and reading it weights-only
    "importer": (
        ["nilmbuild/importer/reading.py", "nilmbuild/importer/detect.py"],
        None,
        ["tests/test_import_reading.py", "tests/test_import_fixtures.py", "tests/test_import_cli.py"],
    ),
    # the upstream scaler's fields (given or refitted from UK-DALE), the config, the checks before writing, provenance
    "importer-config": (
        [
            "nilmbuild/importer/scaler_fields.py",
            "nilmbuild/importer/upstream_config.py",
            "nilmbuild/importer/run.py",
            "nilmbuild/importer/provenance.py",
            "nilmbuild/importer/scaler_refit.py",
            "nilmbuild/importer/refit_block.py",
            "nilmbuild/importer/ukdale_house.py",
        ],
        None,
        [
            "tests/test_import_refit_values.py",
            "tests/test_import_fields_values.py",
            "tests/test_import_scaling.py",
            "tests/test_import_config.py",
            "tests/test_import_refit.py",
            "tests/test_import_provenance.py",
            "tests/test_import_fixtures.py",
            "tests/test_import_cli.py",
        ],
    ),
    # nothing in a NILMTK store's attributes is unpickled freely
    "nilmtk-safety": (
        ["nilmbuild/data/safe_pickle.py", "nilmbuild/data/nilmtk_store.py"],
        NILMTK_SAFETY,
        ["tests/test_data_nilmtk.py", *NILMTK_SLOW],
    ),
    # the grid, the sums and the metadata of a NILMTK store
    "nilmtk": (
        ["nilmbuild/data/nilmtk_source.py", "nilmbuild/data/nilmtk_store.py"],
        None,
        [
            "tests/test_data_nilmtk_mutants.py",
            "tests/test_data_nilmtk_grid.py",
            "tests/test_data_nilmtk.py",
            *NILMTK_SLOW,
        ],
    ),
    # the what-if inputs (thresholds, FiLM affine and switches) as the forward pass applies them
    "whatif": (
        ["nilmbuild/model/whatif.py"],
        None,
        ["tests/test_whatif_reference.py", "tests/test_reference_values.py", "tests/test_live_export.py"],
    ),
    # the live model's inputs, outputs and watts (the scalers' inverse affine), its ONNX export and cache key
    "live-export": (
        ["nilmbuild/live/export.py"],
        None,
        ["tests/test_reference_values.py", "tests/test_live_export.py", "tests/test_upstream_live.py"],
    ),
    # the URL fragment's state, read back after clamping: node's tests, then the pages in Chromium
    "url_state": (
        ["static/js/url_state.js"],
        None,
        [
            "tests/test_js_decoder.py::test_js_decoder_matches_python_reader",
            "tests/browser/test_embedding.py",
            "tests/browser/test_values_vs_python.py::test_clamped_state_is_what_the_fragment_says",
            *EMBED_HEIGHT,
        ],
    ),
    "pickle_store": (
        ["nilmbuild/pickle_store.py"],
        None,
        ["tests/test_pickle_store.py", "tests/test_security_loaders.py"],
    ),
}

COMPARE_SWAP = {
    ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "==",
    ast.Is: "is not", ast.IsNot: "is", ast.In: "not in", ast.NotIn: "in",
}  # fmt: skip
BINOP_SWAP = {
    ast.Add: "-", ast.Sub: "+", ast.Mult: "/", ast.Div: "*", ast.FloorDiv: "/", ast.Mod: "//", ast.Pow: "*",
    ast.LShift: ">>", ast.RShift: "<<", ast.BitAnd: "|", ast.BitOr: "&", ast.BitXor: "&",
}  # fmt: skip
OP_TOKENS = {"<", "<=", ">", ">=", "==", "!=", "is", "not", "in", "+", "-", "*", "/", "//", "%", "**", "<<", ">>"}
OP_TOKENS |= {"&", "|", "^", "and", "or"} | {o + "=" for o in ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^")}
CALL_SWAP = {"max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum", "any": "all", "all": "any"}
CALL_SWAP |= {"nanmax": "nanmin", "nanmin": "nanmax", "ceil": "floor", "floor": "ceil"}
#: calls whose arguments are only a message's text
MESSAGE_CALLS = {"UserError", "warn", "warn_once", "print", "echo", "RefusedPickle", "Refused", "_unknown"}


@dataclass
class Mutant:
    id: int
    path: str
    line: int
    what: str
    span: tuple[int, int, int, int]  # (line, col, end line, end col), characters, 1-based lines
    text: str


# ---- finding mutants ---------------------------------------------------------------------------------------------


class _Finder:
    def __init__(self, path: str, source: str, only):
        self.path, self.source, self.only = path, source, only
        self.lines = source.splitlines(keepends=True)
        self.tree = ast.parse(source)
        self.tokens = list(tokenize.generate_tokens(StringIO(source).readline))
        self.out: list[tuple] = []
        self.skip: set[int] = set()

    def ch(self, line: int, col: int) -> int:
        """AST byte column -> character column."""
        return len(self.lines[line - 1].encode("utf-8")[:col].decode("utf-8", "replace"))

    def span(self, node) -> tuple[int, int, int, int]:
        return (
            node.lineno,
            self.ch(node.lineno, node.col_offset),
            node.end_lineno,
            self.ch(node.end_lineno, node.end_col_offset),
        )

    def text(self, node) -> str:
        return ast.get_source_segment(self.source, node) or ""

    def add(self, span, text: str, what: str):
        self.out.append((span, text, what))

    def op_between(self, a, b, wanted=OP_TOKENS):
        """The span of the operator token(s) between node a's end and node b's start."""
        lo, hi = (a.end_lineno, self.ch(a.end_lineno, a.end_col_offset)), (b.lineno, self.ch(b.lineno, b.col_offset))
        toks = [t for t in self.tokens if lo <= t.start and t.end <= hi and t.string in wanted]
        if not toks:
            return None
        return (toks[0].start[0], toks[0].start[1], toks[-1].end[0], toks[-1].end[1]), " ".join(t.string for t in toks)

    def quiet_nodes(self):
        """Ids of nodes whose mutation changes only a message, a docstring or an annotation."""
        for node in ast.walk(self.tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
                if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                    self.skip.add(id(body[0].value))
            inner = []
            if isinstance(node, ast.Raise) and node.exc is not None:
                inner.append(node.exc)
            if isinstance(node, ast.Call) and _call_name(node) in MESSAGE_CALLS:
                inner += [*node.args, *(k.value for k in node.keywords)]
            if isinstance(node, ast.JoinedStr):
                inner.append(node)
            for a in ("annotation", "returns"):
                if getattr(node, a, None) is not None:
                    inner.append(getattr(node, a))
            for n in inner:
                self.skip.update(id(x) for x in ast.walk(n))

    def scope_nodes(self):
        if self.only is None:
            return [self.tree]
        return [n for n in self.tree.body if _top_name(n) in self.only]

    def find(self) -> list[tuple]:
        self.quiet_nodes()
        for scope in self.scope_nodes():
            for node in ast.walk(scope):
                if id(node) not in self.skip:
                    self.visit(node)
        return self.out

    def visit(self, node):
        for kind, fn in _VISITORS:
            if isinstance(node, kind):
                fn(self, node)


def _top_name(node) -> str | None:
    """The name a top-level statement defines (a def, a class, or one assigned name)."""
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return getattr(node, "name", None)


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _compare(fd: _Finder, node: ast.Compare):
    prev = node.left
    for op, right in zip(node.ops, node.comparators):
        got = fd.op_between(prev, right)
        if got:
            fd.add(got[0], COMPARE_SWAP[type(op)], f"{got[1]} -> {COMPARE_SWAP[type(op)]}")
        prev = right


def _binop(fd: _Finder, node):
    left = node.left if isinstance(node, ast.BinOp) else node.target
    right = node.right if isinstance(node, ast.BinOp) else node.value
    new = BINOP_SWAP.get(type(node.op))
    got = fd.op_between(left, right)
    if new and got:
        new = new + ("=" if isinstance(node, ast.AugAssign) else "")
        fd.add(got[0], new, f"{got[1]} -> {new}")
    if isinstance(node, ast.AugAssign) and got:
        fd.add(got[0], "=", f"{got[1]} -> =")


def _boolop(fd: _Finder, node: ast.BoolOp):
    new = "or" if isinstance(node.op, ast.And) else "and"
    for a, b in zip(node.values, node.values[1:]):
        got = fd.op_between(a, b, {"and", "or"})
        if got:
            fd.add(got[0], new, f"{got[1]} -> {new}")


def _unary(fd: _Finder, node: ast.UnaryOp):
    if not isinstance(node.op, ast.UAdd):
        fd.add(fd.span(node), f"({fd.text(node.operand)})", f"{fd.text(node)[:40]} -> drop the unary operator")


def _constant(fd: _Finder, node: ast.Constant):
    v = node.value
    if isinstance(v, bool):
        fd.add(fd.span(node), str(not v), f"{v} -> {not v}")
    elif isinstance(v, int):
        for new in (v + 1, v - 1) if v not in (0,) else (1,):
            fd.add(fd.span(node), repr(new), f"{v} -> {new}")
    elif isinstance(v, float):
        new = v * 2 if v not in (0.0,) else 1.0
        fd.add(fd.span(node), repr(new), f"{v!r} -> {new!r}")
    elif isinstance(v, str) and v:
        fd.add(fd.span(node), repr("XX" + v + "XX"), f"{v[:30]!r} -> 'XX...XX'")


def _call(fd: _Finder, node: ast.Call):
    name = _call_name(node)
    if name in CALL_SWAP:
        f = node.func
        target = f if isinstance(f, ast.Name) else None
        if target is not None:
            fd.add(fd.span(target), CALL_SWAP[name], f"{name}() -> {CALL_SWAP[name]}()")
        else:
            sp = fd.span(f)
            fd.add((sp[2], sp[3] - len(name), sp[2], sp[3]), CALL_SWAP[name], f".{name}() -> .{CALL_SWAP[name]}()")


def _statement(fd: _Finder, node):
    if isinstance(node, ast.Assign) and id(node.value) not in fd.skip:
        fd.add(fd.span(node.value), "None", f"{fd.text(node)[:40]} -> value None")
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        fd.add(fd.span(node), "pass", f"{fd.text(node)[:40]} -> pass")
    elif isinstance(node, ast.Raise):
        fd.add(fd.span(node), "pass", f"{fd.text(node)[:40]} -> pass")
    elif isinstance(node, (ast.Break, ast.Continue)):
        new = "continue" if isinstance(node, ast.Break) else "break"
        fd.add(fd.span(node), new, f"{fd.text(node)} -> {new}")


_VISITORS = [
    (ast.Compare, _compare),
    ((ast.BinOp, ast.AugAssign), _binop),
    (ast.BoolOp, _boolop),
    (ast.UnaryOp, _unary),
    (ast.Constant, _constant),
    (ast.Call, _call),
    ((ast.Assign, ast.Expr, ast.Raise, ast.Break, ast.Continue), _statement),
]


def apply(source: str, span, text: str) -> str:
    """Replace the character span with `text`, keeping every later line on its line number."""
    lines = source.splitlines(keepends=True)
    l1, c1, l2, c2 = span
    head, tail = lines[l1 - 1][:c1], lines[l2 - 1][c2:]
    return "".join(lines[: l1 - 1]) + head + text + "\n" * (l2 - l1) + tail + "".join(lines[l2:])


def js_mutants(path: str, source: str) -> list[tuple]:
    """(span, text, what) of a JS module's mutants, listed by scripts/js_mutants.mjs with acorn (UTF-16 offsets)."""
    cmd = ["node", str(ROOT / "scripts" / "js_mutants.mjs"), str(ROOT / path)]
    found = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    units = [0]  # units[i]: the UTF-16 offset of character i
    for ch in source:
        units.append(units[-1] + (2 if ord(ch) > 0xFFFF else 1))

    def at(offset: int) -> tuple[int, int]:
        i = bisect.bisect_left(units, offset)
        line_start = source.rfind("\n", 0, i) + 1
        return source.count("\n", 0, i) + 1, i - line_start

    return [((*at(m["start"]), *at(m["end"])), m["text"], m["what"]) for m in found]


def mutants_of(name: str, skip_none: bool = False) -> list[Mutant]:
    """The module's mutants, numbered in file order (skip_none: without the assignments replaced by None)."""
    files, only, _ = MODULES[name]
    out = []
    for path in files:
        source = (ROOT / path).read_text(encoding="utf-8")
        if path.endswith(".js"):  # the finder lists only mutants that parse and change the code
            out += [
                Mutant(len(out) + i + 1, path, s[0], w, s, t) for i, (s, t, w) in enumerate(js_mutants(path, source))
            ]
            continue
        original = ast.dump(ast.parse(source))
        for span, text, what in _Finder(path, source, only).find():
            try:
                mutated = ast.dump(ast.parse(apply(source, span, text)))
            except SyntaxError:
                continue
            if mutated != original:
                out.append(Mutant(len(out) + 1, path, span[0], what, span, text))
    if skip_none:
        out = [m for m in out if not m.what.endswith("-> value None")]
    return out


# ---- running them --------------------------------------------------------------------------------------------------


def scratch_copy(n: int = 0) -> Path:
    """Copy number n of the checkout's code and tests (shared/, .venv and node_modules linked) to mutate in."""
    root = SCRATCH / f"wt{n}"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "artifacts")
    for name in ("nilmbuild", "tests", "static", "templates", "scripts"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, root / name, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "setup.py", "package.json", "Makefile", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, root / name)
    for name in (".venv", "node_modules", "docs"):
        if (ROOT / name).exists():
            (root / name).symlink_to((ROOT / name).resolve())
    shared = SCRATCH / "shared"
    if not shared.exists() and (ROOT.parent / "shared").exists():
        shared.symlink_to((ROOT.parent / "shared").resolve())
    return root


def preload():
    """Import the heavy libraries once in the parent (never nilmbuild: each child imports it afresh)."""
    for mod in ("numpy", "torch", "pandas", "pytest", "click", "jinja2", "msgpack", "tables", "yaml", "tqdm"):
        try:
            __import__(mod)
        except ImportError:
            pass


def start_tests(root: Path, tests: list[str], log: Path) -> int:
    """Fork a child that runs the tests against the files now in `root`; its pid."""
    pid = os.fork()
    if pid:
        return pid
    os.setpgid(0, 0)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1), os.dup2(fd, 2)
    os.chdir(root)
    sys.path.insert(0, str(root))
    os.environ["PYTHONPATH"] = str(root)
    sys.dont_write_bytecode = True
    import pytest

    import nilmbuild

    if not nilmbuild.__file__.startswith(str(root)):
        os._exit(99)  # the editable install's nilmbuild, not the copy's: nothing would be mutated
    os._exit(int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests])))


def outcome(pid: int, t0: float, timeout: float) -> str | None:
    """'killed', 'survived' or 'timeout' once the child is done (or over time), else None."""
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        return "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"
    if time.monotonic() - t0 > timeout:
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return "timeout"
    return None


def run_pool(name: str, muts: list[Mutant], roots: list[Path], tests: list[str], timeout: float):
    """Run every mutant, one per scratch copy at a time; yield (mutant, outcome)."""
    todo, running = list(muts), {}  # root index -> (pid, mutant, original text, t0)
    while todo or running:
        for i, root in enumerate(roots):
            if i not in running and todo:
                m = todo.pop(0)
                original = (root / m.path).read_text(encoding="utf-8")
                (root / m.path).write_text(apply(original, m.span, m.text), encoding="utf-8")
                pid = start_tests(root, tests, SCRATCH / f"{name}.mutant{i}.log")
                running[i] = (pid, m, original, time.monotonic())
        for i, (pid, m, original, t0) in list(running.items()):
            got = outcome(pid, t0, timeout)
            if got is not None:
                (roots[i] / m.path).write_text(original, encoding="utf-8")
                del running[i]
                yield m, got
        time.sleep(0.05)


def run_module(name: str, only: set[int] | None, report: Path, jobs: int, skip_none: bool = False) -> dict:
    files, _, tests = MODULES[name]
    tests = [t for t in tests if t.startswith("-") or "::" in t or (ROOT / t).exists()]
    roots = [scratch_copy(i) for i in range(jobs)]
    log = SCRATCH / f"{name}.log"
    t0 = time.monotonic()
    pid = start_tests(roots[0], tests, log)
    while (got := outcome(pid, t0, 1800)) is None:
        time.sleep(0.1)
    if got != "survived":
        sys.exit(f"{name}: the tests fail without a mutant; see {log}")
    base = time.monotonic() - t0
    muts = [m for m in mutants_of(name, skip_none) if only is None or m.id in only]
    results = {"module": name, "tests": tests, "baseline_s": round(base, 1), "mutants": len(muts), "survivors": []}
    counts = {"killed": 0, "survived": 0, "timeout": 0}
    for m, got in run_pool(name, muts, roots, tests, max(60.0, 4 * base)):
        counts[got] += 1
        print(f"{name} #{m.id} {m.path}:{m.line} {m.what}: {got}", flush=True)
        if got == "survived":
            results["survivors"].append({"id": m.id, "where": f"{m.path}:{m.line}", "what": m.what})
    results["survivors"].sort(key=lambda s: s["id"])
    results.update(counts, seconds=round(time.monotonic() - t0))
    report.write_text(json.dumps(results, indent=1))
    return results


def show(name: str, mid: int) -> None:
    import difflib

    m = next(m for m in mutants_of(name) if m.id == mid)
    src = (ROOT / m.path).read_text(encoding="utf-8")
    diff = difflib.unified_diff(src.splitlines(), apply(src, m.span, m.text).splitlines(), m.path, m.path, lineterm="")
    print(f"#{m.id} {m.what}")
    print("\n".join(diff))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("modules", nargs="*", help=f"some of: {', '.join(MODULES)} (default: all)")
    ap.add_argument("--list", action="store_true", help="the modules, their tests and mutant counts")
    ap.add_argument("--show", type=int, help="print the diff of this mutant of the one named module")
    ap.add_argument("--only", help="run only these mutants (ids, comma-separated) of the one named module")
    ap.add_argument(
        "--skip-none", action="store_true", help="leave out the assignments replaced by None (a crash at next use)"
    )
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own scratch copy")
    a = ap.parse_args(argv)
    names = a.modules or list(MODULES)
    bad = [n for n in names if n not in MODULES]
    if bad:
        ap.error(f"unknown module {', '.join(bad)}; use some of {', '.join(MODULES)}")
    if a.list:
        for n in names:
            print(f"{n:13} {len(mutants_of(n)):4} mutants  {' '.join(MODULES[n][2])}")
        return
    if a.show is not None:
        return show(names[0], a.show)
    SCRATCH.mkdir(parents=True, exist_ok=True)
    preload()
    for n in names:
        only = None if a.only is None else {int(x) for x in a.only.split(",") if x.strip()}
        r = run_module(n, only, SCRATCH / f"{n}.json", max(1, a.jobs), a.skip_none)
        print(f"== {n}: {r['mutants']} mutants, {r['killed']} killed, {r['timeout']} timed out, "
              f"{r['survived']} survived ({r['seconds']} s; tests {r['baseline_s']} s)")  # fmt: skip
        for s in r["survivors"]:
            print(f"   survivor #{s['id']} {s['where']} {s['what']}")


if __name__ == "__main__":
    main()
