"""The loss landscape on the Training page: drawn from extra["landscape"] of the real checkpoint, or a notice
that says how to compute it. The drawn case computes a small real landscape of the shipped weights (5 x 5 grid,
2 validation windows) and builds only the Training page from it."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest


@pytest.fixture(scope="module")
def landscape_site(tmp_path_factory, site_context):
    from nilmbuild.site.pages import build_all
    from nilmbuild.train.landscape import compute_landscape, val_batch

    ctx = copy.copy(site_context)
    ctx.loaded = copy.copy(site_context.loaded)
    model = copy.deepcopy(site_context.loaded.model)
    ls = compute_landscape(model, val_batch(ctx.loaded, ctx.prepared, 2, 0), grid=5, span=0.5, seed=0)
    ctx.loaded.extra = {**(ctx.loaded.extra or {}), "landscape": ls}
    out = tmp_path_factory.mktemp("landscape-site")
    build_all(ctx, out, build_only=["training"])
    return out, ls


def test_shipped_page_draws_the_stored_landscape_or_says_how_to_compute_it(nb, page_at, built_site, site_context):
    if not (site_context.loaded.train_log or {}).get("epochs"):
        pytest.skip("no training log: the page shows no figures at all")
    page = nb.open_page(page_at, built_site, "training")
    if (site_context.loaded.extra or {}).get("landscape"):
        assert page.locator("#landscape").is_visible() and page.locator("#no-landscape").count() == 0
    else:
        note = page.locator("#no-landscape")
        assert note.is_visible() and "nilmbuild landscape" in note.text_content()
        assert page.locator("#landscape").count() == 0


def _on_segment_to_white(got, want, most=0.6, tol=4):
    """got == want lightened toward white by a share in [0, most] (a contour line lightens by up to 0.55)."""
    got, want = np.asarray(got, float), np.asarray(want, float)
    room = 255.0 - want
    s = float(np.dot(got - want, room) / max(np.dot(room, room), 1e-9))
    return -0.02 <= s <= most and np.abs(got - (want + s * room)).max() <= tol


def test_grid_points_have_their_loss_colour_and_hover_value(nb, page_at, landscape_site):
    out, ls = landscape_site
    page = nb.open_page(page_at, out, "training")
    page.locator("#landscape").scroll_into_view_if_needed()
    logs = np.log10(np.array(ls["loss"]))
    lo, hi = logs.min(), logs.max()
    for i, j in ((2, 2), (0, 4), (4, 1)):  # centre, beta=-span/alpha=+span, another
        p = page.evaluate(f"nilmbuild.test.landscape.toPixel({ls['alpha'][j]}, {ls['beta'][i]})")
        x, y = int(round(p["x"])), int(round(p["y"]))
        x += -1 if j == 4 else 1  # stay inside the plotted square at its edges
        y += 1 if i == 4 else -1
        want = page.evaluate(f"nilmbuild.test.colormaps.map('viridis', {(logs[i, j] - lo) / (hi - lo)})")
        got = nb.canvas_pixel(page, "#landscape", x, y)
        assert _on_segment_to_white(got, want), (i, j, got, want)
    c = page.evaluate("nilmbuild.test.landscape.toPixel(0, 0)")
    box = page.locator("#landscape").bounding_box()
    page.mouse.move(box["x"] + c["x"], box["y"] + c["y"])
    want = page.evaluate(f"nilmbuild.test.fmt({ls['centre_loss']}, 5)")
    assert f"loss {want}" in page.locator("#landscape-readout").text_content()
    assert not math.isnan(ls["centre_loss"])
