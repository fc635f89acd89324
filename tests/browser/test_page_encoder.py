"""The encoder page in Chromium: sub-step strips, hover values vs the Python reader, layer tabs, position pick."""

from __future__ import annotations

import numpy as np
import pytest

from nilmbuild.capture.format import decode


@pytest.fixture(scope="module")
def reader(site_context):
    from nilmbuild.site.views import encoder

    return decode(encoder.build(site_context).blobs["capture"])


def _open(nb, page_at, built_site):
    page = nb.open_page(page_at, built_site, "encoder", viewport=(1200, 1000))
    page.wait_for_function("!nilmbuild.test.pending()", timeout=15000)  # the FFN hidden strips follow the first frame
    return page


def _box(page, idx):
    return page.evaluate(
        f"(() => {{ const h = nilmbuild.test.heatmaps()[{idx}]; return {{box: h.box, rows: h.rows, cols: h.cols}}; }})()"
    )


def _strip_point(nb, page, idx, row, col):
    hm = _box(page, idx)
    return nb.client_point(page, "#enc-main", hm["box"], row, col, hm["rows"], hm["cols"])


def _strip_pixel(page, idx, row, col):
    """Whole CSS pixel inside cell (row, col) of strip idx, and the cell the page maps it to."""
    hm = page.evaluate(
        f"(() => {{ const h = nilmbuild.test.heatmaps()[{idx}]; return {{box: h.box, rows: h.rows, cols: h.cols}}; }})()"
    )
    b = hm["box"]
    x = int(np.ceil(b["x"] + col * b["width"] / hm["cols"]))
    y = int(np.ceil(b["y"] + row * b["height"] / hm["rows"]))
    return x, y, int((y - b["y"]) / b["height"] * hm["rows"]), int((x - b["x"]) / b["width"] * hm["cols"])


def _drawn_cell(page, idx, x, y):
    """The cell whose colour the pixel at whole CSS pixel (x, y) shows (sampled at the pixel centre)."""
    hm = page.evaluate(
        f"(() => {{ const h = nilmbuild.test.heatmaps()[{idx}]; return {{box: h.box, rows: h.rows, cols: h.cols}}; }})()"
    )
    b = hm["box"]
    return int((y + 0.5 - b["y"]) / b["height"] * hm["rows"]), int((x + 0.5 - b["x"]) / b["width"] * hm["cols"])


def test_loads_golden_and_hover(nb, page_at, built_site, reader):
    page = _open(nb, page_at, built_site)
    steps = page.evaluate("nilmbuild.test.steps.map(s => s.suffix)")
    assert steps[0] == "in" and steps[-1] == "out" and "ffn.hidden" in steps and "film" in steps
    for i, s in enumerate(steps):  # each strip is (feature rows x time columns) of its record
        shape = reader.record(f"encoder.0.{s}")["shape"]
        assert page.evaluate(f"[nilmbuild.test.heatmaps()[{i}].rows, nilmbuild.test.heatmaps()[{i}].cols]") == [
            shape[2],
            shape[1],
        ]
    x, y, _, _ = _strip_pixel(page, 1, 40, 200)
    assert nb.canvas_pixel(page, "#enc-main", x, y) != (255, 255, 255)
    assert page.locator("#enc-tabs [role=tab]").count() == page.evaluate("nilmbuild.test.page().data.n_layers")
    nb.screenshot_matches(page, "page-encoder", tolerance=3, selector=".enc-wrap")
    # hover: the tooltip holds the exact value of that cell
    x, y, f, t = _strip_point(nb, page, 1, 17, 250)  # LN1 strip
    page.mouse.move(x, y)
    v = float(reader.get("encoder.0.ln1")[0, t, f])
    fmt = page.evaluate("v => nilmbuild.test.fmt(v, 4)", v)
    assert page.locator("#nb-tooltip").text_content() == f"encoder.0.ln1 (LN1)\nt = {t} min, feature {f}\nvalue = {fmt}"
    # the FFN hidden strip (384 rows) reads the same way
    idx = page.evaluate("nilmbuild.test.steps.findIndex(s => s.suffix === 'ffn.hidden')")
    x, y, f, t = _strip_point(nb, page, idx, 300, 100)
    page.mouse.move(x, y)
    v = float(reader.get("encoder.0.ffn.hidden")[0, t, f])
    fmt = page.evaluate("v => nilmbuild.test.fmt(v, 4)", v)
    assert (
        page.locator("#nb-tooltip").text_content()
        == f"encoder.0.ffn.hidden (FFN hidden)\nt = {t} min, hidden {f}\nvalue = {fmt}"
    )


def test_tabs_and_position(nb, page_at, built_site, reader):
    page = _open(nb, page_at, built_site)
    idx = page.evaluate("nilmbuild.test.steps.findIndex(s => s.suffix === 'attn.out')")
    x, y, _, _ = _strip_pixel(page, idx, 50, 300)
    f, t = _drawn_cell(page, idx, x, y)
    before = nb.canvas_pixel(page, "#enc-main", x, y)
    page.get_by_role("tab", name="Layer 2").click()
    page.wait_for_function("!nilmbuild.test.pending()", timeout=15000)
    assert page.evaluate("nilmbuild.test.state.layer") == 2
    assert page.get_by_role("tab", name="Layer 2").get_attribute("aria-selected") == "true"
    after = nb.canvas_pixel(page, "#enc-main", x, y)
    a = reader.get("encoder.2.attn.out")[0]
    m = float(np.abs(a).max())
    want = page.evaluate("t => nilmbuild.test.colormaps.map('burd', t)", 0.5 + 0.5 * float(a[t, f]) / m)
    assert all(abs(g - w) <= 2 for g, w in zip(after, want)), (before, after, want)
    # keyboard: arrow keys move between tabs
    page.get_by_role("tab", name="Layer 2").focus()
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("nilmbuild.test.state.layer") == 1
    # click a strip: the time step follows, the panels redraw for it
    x, y, _, t = _strip_point(nb, page, 0, 10, 77)
    page.mouse.click(x, y)
    assert page.evaluate("nilmbuild.test.state.pos") == t
    assert page.locator("#enc-pos").input_value() == str(t)
    # sample select (keyboard-operable) changes the strip
    if page.locator("#enc-sample option").count() > 1:
        page.locator("#enc-sample").select_option("1")
        assert page.evaluate("nilmbuild.test.state.sample") == 1


def test_blob_budget(site_context):
    """The page's blobs stay within the ~3 MB budget (they are base64-inlined into the HTML)."""
    from nilmbuild.site.views import encoder

    spec = encoder.build(site_context)
    assert sum(len(b) for b in spec.blobs.values()) < 3_000_000
