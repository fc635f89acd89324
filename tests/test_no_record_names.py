"""Page JS receives record names from its view, never spells them (issue 15: one list of record names).

Record names live in nilmbuild/model/names.py; each view puts the names its page reads into the payload
(``page().data.names``), so renaming a record in the model changes every page with it. This test searches the JS
for what a hand-written name looks like: a string that starts with a record prefix of names.py (``"encoder.``,
``"heads.`` ...), a string passed straight to the capture (``cap.slice("input", i)``, ``watts.row(cap, "...")``),
or a fixed record name (``"input"``, ``"projection"`` ...) on a line that reads the capture.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nilmbuild.model import names

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "static" / "js"
FILES = sorted(JS.glob("*.js"))  # page entries and every module they import


def _patterns() -> list[re.Pattern]:
    prefixes = "|".join(re.escape(p) for p in names.PREFIXES)
    fixed = "|".join(re.escape(n) for n in names.FIXED)
    return [
        re.compile(rf"""["'`](?:{prefixes})"""),  # "encoder.0.attn.q", "heads." + dev + ".power"
        re.compile(r"""\bcap\.(?:record|slice|get|has|attentionRow)\(\s*["'`]"""),  # cap.slice("input", i)
        re.compile(r"""\(\s*cap\s*,\s*["'`]"""),  # watts.row(cap, "output.power", ...), kit.storage(cap, "...")
        re.compile(rf"""["'`](?:{fixed})["'`].*\bcap\b|\bcap\b.*["'`](?:{fixed})["'`]"""),  # var n = "input" ... cap
    ]


def _hits(text: str, patterns) -> list[tuple[int, str]]:
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        code = line.split("//")[0] if not line.lstrip().startswith("*") else ""
        if any(p.search(code) for p in patterns):
            out.append((i, line.strip()[:140]))
    return out


def test_page_js_has_no_record_name_literals():
    patterns = _patterns()
    found = [(f.name, i, line) for f in FILES for i, line in _hits(f.read_text(encoding="utf-8"), patterns)]
    assert found == [], "record names written in page JS (take them from page().data.names):\n" + "\n".join(
        f"{f}:{i}: {line}" for f, i, line in found
    )


@pytest.mark.parametrize(
    "line",
    [
        'var qRec0 = cap.record("encoder.0.attn.q");',
        'function prefix(layer, masked) { return (masked ? "" : "ablation.no_mask.") + "encoder." + layer + ".attn"; }',
        'var logit = cap.slice("heads." + name + ".gate_logit", i);',
        'var inputName = "input", agg = function () { var x = cap.slice(inputName, S.sample); };',
        'var pred = watts.inverse(d, watts.row(cap, "output.power", b, i));',
        'pDefs.push({ name: "weights." + p + ".device_embed" });',
        'mapDefs.push({ name: "embed.with_pos", group: "embed" });',
        'var inRec = cap.record("input"), C = inRec.shape[1];',
    ],
)
def test_the_search_finds_names_where_they_were(line):
    """Each line is one that was in static/js before the pages received their names."""
    assert _hits(line, _patterns()) != []


@pytest.mark.parametrize(
    "line",
    [
        "var w = cap.record(N.weights[layer]);",
        'if (n.id === "input") {',
        'var PHASE_LABEL = { input: "input", output: "output" };',
        'g.fillText("head " + h, s.x + 12, s.y - 2);',
        "// the captured encoder.L.film",
        'var out = document.createElement("output");',
    ],
)
def test_the_search_leaves_other_strings(line):
    assert _hits(line, _patterns()) == []
