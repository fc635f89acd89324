"""No overlapping or clipped labels (issue 35, item 5), at desktop 1400x900 and phone 390x844.

Every plot2d chart records the box of each text it draws (title, legend, notes, tick labels, axis and lane titles:
plot2d.js put), and so do the figures drawn by hand: the Disaggregation lanes, the forward page's 3D view and zoom,
and the grids' axes and panels on the encoder, attention, FiLM and embedding pages (plot2d.recordText records every
fillText on their canvases); the DOM labels are the colour-bar legend ticks and the PCGrad matrix's device names,
and the text marks placed over a figure (the attention map's title, the encoder strips' ranges). No two boxes of one
chart may overlap, none may stick out of its canvas, and no text mark may cover a label of the figure under it."""

from __future__ import annotations

import pytest

from nilmbuild.site.pages import NAV_ORDER

SIZES = [(1400, 900), (390, 844)]

CHART_LABELS = """() => { const bad = [];
  (nilmbuild.test.plots2d || []).forEach(p => {
    const W = p.canvas.clientWidth, H = p.canvas.clientHeight, L = p.labels;
    if (!W) return;   // a chart of a hidden view
    for (let i = 0; i < L.length; i++) {
      const a = L[i];
      if (a.x0 < -1 || a.y0 < -1 || a.x1 > W + 1 || a.y1 > H + 1) bad.push([p.canvas.id, "clipped", a.text]);
      for (let j = i + 1; j < L.length; j++) {
        const b = L[j];
        if (a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1) bad.push([p.canvas.id, a.text, b.text]);
      }
    }
  });
  return bad; }"""

DOM_LABELS = """() => { const bad = [];
  const groups = Array.from(document.querySelectorAll('.nb-legend-ticks, #pc-cols, #pc-rows'));
  groups.forEach(g => {
    const r = Array.from(g.children).filter(e => e.offsetParent).map(e => [e.textContent, e.getBoundingClientRect()]);
    for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) {
      const a = r[i][1], b = r[j][1];
      if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) bad.push([g.id || g.className, r[i][0], r[j][0]]);
    }
  });
  return bad; }"""


MARKS_OVER_LABELS = """() => { const bad = [];
  (nilmbuild.test.plots2d || []).forEach(p => {
    const c = p.canvas.getBoundingClientRect();
    if (!c.width) return;
    p.canvas.parentNode.querySelectorAll(':scope > .att-mark, :scope > .enc-mark').forEach(m => {
      if (!m.textContent.trim() || !m.offsetParent) return;
      const rg = document.createRange(); rg.selectNodeContents(m);
      const r = rg.getBoundingClientRect(), x0 = r.left - c.left, x1 = r.right - c.left, y0 = r.top - c.top, y1 = r.bottom - c.top;
      p.labels.forEach(l => { if (x0 < l.x1 - 1 && l.x0 < x1 - 1 && y0 < l.y1 - 1 && l.y0 < y1 - 1) bad.push([p.canvas.id, m.textContent, l.text]); });
    });
  });
  return bad; }"""

#: the hand-drawn figures whose labels the checks above see (each records at least one label box on its page)
HAND_DRAWN = {
    "disaggregation": ["lanes"],
    "forward": ["fwd-3d-overlay", "fwd-zoom-overlay"],
    "embedding": ["emb-rf", "emb-maps-labels"],
    "encoder": ["enc-main-overlay", "enc-ffn", "enc-film", "enc-evo"],
    "attention": ["att-main-axes", "att-split", "att-heads-axes"],
    "film": ["film-spectrum", "film-mlp", "film-params-labels", "film-live-labels"],
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("slug", NAV_ORDER)
def test_no_overlapping_or_clipped_labels(nb, page_at, built_site, slug, size):
    page = nb.open_page(page_at, built_site, slug, viewport=size)
    nb.flush(page)
    recorded = page.evaluate("(nilmbuild.test.plots2d || []).filter(p => p.labels.length).map(p => p.canvas.id)")
    assert set(HAND_DRAWN.get(slug, [])) <= set(recorded), recorded
    assert page.evaluate(CHART_LABELS) == []
    assert page.evaluate(DOM_LABELS) == []
    assert page.evaluate(MARKS_OVER_LABELS) == []


def test_the_check_sees_an_overlap(nb, page_at, built_site):
    """The checker is not blind: two lanes squeezed into a few pixels make their tick labels collide."""
    page = nb.open_page(page_at, built_site, "data", viewport=(1400, 900))
    page.evaluate(
        "(() => { const c = document.getElementById('states-plot'); c.style.height = '120px'; nilmbuild.test.plots.states.draw(); })()"
    )
    assert any(b[0] == "states-plot" for b in page.evaluate(CHART_LABELS))


def test_the_check_sees_a_grid_overlap(nb, page_at, built_site):
    """Labels drawn by hand are recorded too: a fillText on the attention map's axes canvas over its title mark is
    seen, and the Disaggregation lanes squeezed into 90 px make their tick labels collide."""
    page = nb.open_page(page_at, built_site, "attention", viewport=(1400, 900))
    page.evaluate(
        """(() => { const c = document.getElementById('att-main-axes'), g = c.getContext('2d'), t = document.querySelector('.att-title');
        const r = t.getBoundingClientRect(), cr = c.getBoundingClientRect();
        g.font = '12px sans-serif'; g.textBaseline = 'top'; g.fillText('over the title', r.left - cr.left, r.top - cr.top); })()"""
    )
    assert any(b[2] == "over the title" for b in page.evaluate(MARKS_OVER_LABELS))
    page = nb.open_page(page_at, built_site, "disaggregation", viewport=(1400, 900))
    page.evaluate(
        "(() => { const c = document.getElementById('lanes'); c.style.height = '90px'; window.dispatchEvent(new Event('resize')); })()"
    )
    page.wait_for_timeout(300)
    assert any(b[0] == "lanes" for b in page.evaluate(CHART_LABELS))


def test_playground_lane_titles_wrap_inside_a_phone(nb, page_at, built_site):
    """At 390 px the Playground's long lane titles (from the view's data) and its below-0 note wrap onto lines inside
    the canvas: the chart's recorded labels hold each of them whole, and none sticks out of the canvas (the generic
    check above sees the Playground's chart too)."""
    page = nb.open_page(page_at, built_site, "playground", viewport=(390, 844))
    charts = page.evaluate(
        "(nilmbuild.test.plots2d || []).filter(p => p.canvas.id === 'pg-canvas').map(p => ({W: p.canvas.clientWidth, labels: p.labels}))"
    )
    assert len(charts) == 1, "the Playground's chart records its label boxes"
    W, labels = charts[0]["W"], charts[0]["labels"]
    drawn = " ".join(a["text"] for a in labels)
    text = page.evaluate("nilmbuild.test.page().data.text")
    negative = page.evaluate("nilmbuild.test.playground.geo.lanes.some(l => l.min < 0)")
    for key in ("power", "gate") + (("neg_note",) if negative else ()):
        if text.get(key):
            assert text[key] in drawn, (key, drawn)
    assert all(-1 <= a["x0"] and a["x1"] <= W + 1 for a in labels), [
        a for a in labels if a["x0"] < -1 or a["x1"] > W + 1
    ]
    assert page.evaluate(CHART_LABELS) == []
