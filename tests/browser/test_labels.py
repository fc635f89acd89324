"""No overlapping or clipped labels (issue 35, item 5), at desktop 1400x900 and phone 390x844.

Every plot2d chart records the box of each text it draws (title, legend, notes, tick labels, axis and lane titles:
plot2d.js put); the DOM labels are the colour-bar legend ticks and the PCGrad matrix's device names. No two boxes
of one chart may overlap, and none may stick out of its canvas."""

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


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("slug", NAV_ORDER)
def test_no_overlapping_or_clipped_labels(nb, page_at, built_site, slug, size):
    page = nb.open_page(page_at, built_site, slug, viewport=size)
    nb.flush(page)
    assert page.evaluate(CHART_LABELS) == []
    assert page.evaluate(DOM_LABELS) == []


def test_the_check_sees_an_overlap(nb, page_at, built_site):
    """The checker is not blind: two lanes squeezed into a few pixels make their tick labels collide."""
    page = nb.open_page(page_at, built_site, "data", viewport=(1400, 900))
    page.evaluate(
        "(() => { const c = document.getElementById('states-plot'); c.style.height = '120px'; nilmbuild.test.plots.states.draw(); })()"
    )
    assert any(b[0] == "states-plot" for b in page.evaluate(CHART_LABELS))


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
