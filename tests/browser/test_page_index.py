"""The Overview page (architecture.md 1, 4.2, 13.1) in Chromium: offline, flow diagram, shapes from the capture."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def overview(nb, page_at, built_site):
    page = page_at(built_site / "index.html", viewport=(1280, 900))
    nb.wait_ready(page)
    if page.evaluate("nilmbuild.test.state.playing"):
        page.click("#flow-play")  # stop the pulses: a static, deterministic frame
    assert page.evaluate("nilmbuild.test.state.playing") is False
    return page


def test_loads_offline_and_draws(nb, overview):
    assert overview.evaluate("document.documentElement.dataset.ready") == "true"
    assert nb.element_rgb(overview, "#flow").reshape(-1, 3).std(axis=0).max() > 10
    assert overview.locator("button.nb-save-png").count() == 1
    assert overview.locator(".nb-phase-legend li").count() == 5


def test_edge_hover_shows_the_captured_shape(overview, site_context):
    n_edges = overview.evaluate("nilmbuild.test.state.layout.edges.length")
    assert n_edges >= 15
    box = overview.locator("#flow").bounding_box()
    for k in (0, 4, n_edges - 1):
        name = overview.evaluate(f"nilmbuild.test.state.layout.edges[{k}].e.record")
        x, y = overview.evaluate(f"nilmbuild.test.state.layout.edges[{k}].pts[24]")
        s = overview.evaluate("nilmbuild.test.state.scale")
        overview.mouse.move(box["x"] + x * s, box["y"] + y * s)
        tip = overview.locator("#nb-tooltip").text_content()
        shape = "(" + ", ".join(str(int(s)) for s in site_context.capture.records[name].shape) + ")"
        assert name in tip and shape in tip, (k, tip)
    # the shapes table lists every edge with the record's shape
    rows = overview.locator("#shapes-table tbody tr")
    assert rows.count() == n_edges
    rec = rows.nth(0).locator("td").nth(2).text_content()
    assert (
        rows.nth(0).locator("td").nth(3).text_content()
        == "(" + ", ".join(str(int(s)) for s in site_context.capture.records[rec].shape) + ")"
    )


def test_stages_link_to_pages_and_embed_snippets(overview, built_site):
    hrefs = overview.eval_on_selector_all(".nb-flow-link[href]", "els => els.map(e => e.getAttribute('href'))")
    assert hrefs and all((built_site / h).exists() for h in hrefs)
    assert "disaggregation.html" in hrefs
    snippets = overview.eval_on_selector_all(".nb-snippet", "els => els.map(e => e.value)")
    assert snippets and all("#embed" in s and "<iframe" in s for s in snippets)
    # keyboard: stage links are focusable and show their shape
    overview.focus(".nb-flow-link[data-node='norm']")
    assert "instance_norm" in overview.locator("#nb-tooltip").text_content()


def test_sample_select_changes_the_input_sparkline(nb, overview):
    if overview.locator("#flow-sample option").count() < 2:
        pytest.skip("one example window only")
    b = overview.evaluate("nilmbuild.test.state.layout.boxes.input")
    before = nb.canvas_rgb(overview, "#flow")
    overview.select_option("#flow-sample", "1")
    after = nb.canvas_rgb(overview, "#flow")
    y0, y1, x0, x1 = int(b["y"]) + 26, int(b["y"] + b["h"]) - 26, int(b["x"]) + 8, int(b["x"] + b["w"]) - 8
    assert np.abs(before[y0:y1, x0:x1] - after[y0:y1, x0:x1]).max() > 30
    # the stage boxes do not depend on the sample
    n = overview.evaluate("nilmbuild.test.state.layout.boxes.norm")
    p = overview.evaluate("nilmbuild.test.state.layout.boxes.enc2")
    ys, xs = slice(int(n["y"]), int(n["y"] + n["h"])), slice(int(n["x"]), int(p["x"] + p["w"]))
    assert np.abs(before[ys, xs] - after[ys, xs]).max() <= 2


def test_golden(nb, overview):
    nb.screenshot_matches(overview, "page-index-flow", tolerance=6, selector="#flow")
