"""The model's sizes are not written in static/ or templates/ (issue 15 item 5), nor in the prose of the site's
views (issue 33: page summaries, stage titles, diagram labels): pages take them from the blob's shapes or from the
sizes Python hands them (``site.model`` in templates, ``page().model`` in JS, both from
nilmbuild/site/views/_common.py:model_sizes; views format them from ``ctx.loaded.cfg``), so a checkpoint with
another window, width or layer count renders correctly. Sizes spelled as words ("three encoder layers") count too.

The sizes searched for are the shipped config's (NILMFormerConfig defaults), not a copy of them. Not model
sizes, so not searched: numbers on a line with ``px`` (CSS and canvas pixel sizes) and colormaps.js (a table
of published colormap anchors at LUT indices 0..255).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from nilmbuild.model.config import NILMFormerConfig
from nilmbuild.site.prose import spelled
from nilmbuild.site.views._common import model_sizes

ROOT = Path(__file__).resolve().parents[1]
SKIP_FILES = {"static/js/colormaps.js"}


def _files() -> list[Path]:
    files = sorted((ROOT / "static" / "js").rglob("*.js")) + sorted((ROOT / "templates").rglob("*.html"))
    return [f for f in files if f.relative_to(ROOT).as_posix() not in SKIP_FILES]


def _patterns() -> list[re.Pattern]:
    cfg, m = NILMFormerConfig(), model_sizes(NILMFormerConfig())
    big = sorted({m["window"], m["centre"], m["d_model"], m["d_ff"], m["film_enc_out"]})
    pats = [rf"(?<![\w.#&-]){n}(?![\w.])" for n in big]  # 480, 240, 96, 384, 576 anywhere
    pats += [
        rf"\b{cfg.n_head} heads?\b",
        rf"heads? of {cfg.head_dim}\b",
        rf"(√|&radic;){cfg.head_dim}\b",
        rf"\b{cfg.head_dim} dim",
        rf"\b{cfg.n_cond} condition",
        rf"\b{m['n_elec']} electrical",
        rf"\b{cfg.n_freq_bands} (spectral|band)",
        rf"\b{cfg.film_hidden_dim}[- ](number|hidden|device)",
        rf"\b{m['film_in']} (inputs|→)",
        rf"× {cfg.film_hidden_dim}\)",
        rf"\b{cfg.n_encoder_layers} (encoder )?layers",
        rf"\b{cfg.n_channels} (input )?channels",
        rf"\b{m['window_hours']}-hour",
        rf"\b{cfg.c_embedding} → ",
        rf"\b{cfg.c_embedding} ×",
        rf"\b{cfg.n_exo} sin/cos",
        rf"\b{m['n_devices']} devices",
        rf"\b{cfg.n_head}-head",
        rf"\b{cfg.c_embedding} -> ",
        rf"\b{m['film_in']} -> ",
        rf"\bd = {', '.join(str(d) for d in cfg.dilations)}\b",
    ]
    words = [
        rf"\b{spelled(cfg.n_encoder_layers)}\b[\w\s-]{{0,40}}\blayers\b",
        rf"\b{spelled(cfg.n_head)}\b[\w\s-]{{0,20}}\bheads?\b",
        rf"\b({m['n_devices']}|{spelled(m['n_devices'])})\b[\w\s-]{{0,20}}\b(appliances|devices)\b",
    ]
    return [re.compile(p) for p in pats] + [re.compile(p, re.IGNORECASE) for p in words]


def _hits(text: str, patterns) -> list[tuple[int, str]]:
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if "px" in line:
            continue
        if any(p.search(line) for p in patterns):
            out.append((i, line.strip()[:140]))
    return out


def _view_prose() -> list[tuple[str, int, str]]:
    """(file, line, text) of every string literal in nilmbuild/site/views/*.py that is not a docstring: the words
    a view puts on a page (summaries, titles, labels)."""
    out = []
    for f in sorted((ROOT / "nilmbuild" / "site" / "views").glob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        out += [
            (f.relative_to(ROOT).as_posix(), n.lineno, n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
        ]
    return out


def test_no_model_size_in_the_views_prose():
    patterns = _patterns()
    found = [(f, i, line) for f, i, text in _view_prose() for _, line in _hits(text, patterns)]
    assert found == [], "model sizes written in a view's prose:\n" + "\n".join(f"{f}:{i}: {t}" for f, i, t in found)


def test_the_prose_search_reads_the_views():
    texts = [t for _, _, t in _view_prose()]
    assert "Projection" in texts and any("appliances out" in t for t in texts)  # f-string parts are literals too


def test_no_model_size_literals_in_static_or_templates():
    patterns = _patterns()
    found = [
        (f.relative_to(ROOT).as_posix(), i, line)
        for f in _files()
        for i, line in _hits(f.read_text(encoding="utf-8"), patterns)
    ]
    assert found == [], "model sizes written as literals:\n" + "\n".join(f"{f}:{i}: {line}" for f, i, line in found)


@pytest.mark.parametrize(
    "line",
    [
        "splits every 96-d vector into 8 heads of 12 dimensions",
        "var state = { t: 240 };",
        "FFN 96 &rarr; 384 &rarr; 96",
        "the 13 condition features",
        "× 3 encoder layers",
        "1×1 projection 8 → 96",
        "over the 8-hour window",
        "Q/K/V and the 8-head split, every head's 480 x 480 attention weights",
        "The encoder is three identical pre-norm layers",
        "the three diagonally masked encoder layers",
        "Aggregate in, five appliances out",
        "d = 1, 2, 4, 8",
        "45 -> 32 -> 576",
    ],
)
def test_the_search_finds_sizes_where_they_were(line):
    """The patterns catch the literals this test was written to remove (each line is one that was in static/)."""
    assert _hits(line, _patterns()) != []


@pytest.mark.parametrize(
    "line",
    [
        "{{ site.model.n_head }} heads",
        "height: LIVE_PX",
        "style='width:480px'",
        "var v = 0.96;",
        "#960000",
        "cells = 1024",
        "The encoder is {{ site.model.n_layers | spelled }} identical pre-norm layers",
        "three ways to see it",
    ],
)
def test_the_search_leaves_other_numbers(line):
    assert _hits(line, _patterns()) == []
