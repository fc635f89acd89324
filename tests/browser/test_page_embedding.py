"""The embedding page (architecture.md 5, forward-pass.md stages 1-4) in Chromium: offline, readouts equal the
Python reader's values, moving t moves the receptive field, the sample selector redraws the feature maps."""

from __future__ import annotations

import pytest


@pytest.fixture
def emb(nb, page_at, built_site):
    return nb.open_page(page_at, built_site, "embedding")


def _std(nb, page, selector):
    return nb.element_rgb(page, selector, dtype=float).reshape(-1, 3).std(axis=0).max()


def test_loads_offline_and_draws(nb, emb):
    assert emb.evaluate("document.documentElement.dataset.ready") == "true"
    for sel in ("#emb-input", "#emb-rf", "#emb-maps"):
        assert _std(nb, emb, sel) > 10, sel
    assert emb.locator("button.nb-save-png").count() == 3
    # shapes come from the records: 4 ResUnits, projection to 96
    assert emb.evaluate("nilmbuild.test.heatmaps.map(h => h.rows)") == [8, 8, 8, 8, 8, 8, 96]


def test_readout_equals_captured(emb, site_context):
    from nilmbuild.capture.format import decode

    b = emb.evaluate("nilmbuild.test.extra.samples[0]")
    r = decode(site_context.blob([f"embed.res{i}.out" for i in range(4)], samples=[b]))
    emb.evaluate("nilmbuild.test.setT(123)")
    emb.select_option("#ctl-channel", "3")
    for i in range(4):
        got = emb.locator(f"#emb-readout dd[data-key='embed.res{i}.out']").get_attribute("data-value")
        assert float(got) == float(r.get(f"embed.res{i}.out")[0, 3, 123]), i


def test_moving_t_moves_the_receptive_field(nb, emb):
    boxes = emb.evaluate("nilmbuild.test.boxes()")
    b3 = boxes[3]  # ResUnit 3 out: bracket of 31 steps under the map
    x = b3["x"] + (240.5 / 480) * b3["width"]
    y = b3["y"] + b3["height"] + 8
    before = nb.scrolled_pixel(emb, "#emb-stack", x, y)
    emb.locator("#emb-rf").focus()
    for _ in range(4):
        emb.keyboard.press("Shift+ArrowLeft")  # keyboard: t -= 10 per press
    assert emb.evaluate("nilmbuild.test.state.t") == 200
    after = nb.scrolled_pixel(emb, "#emb-stack", x, y)
    assert before != after
    r, g, bl = before  # the bracket is orange (#D55E00)
    assert r > 180 and bl < 80, before
    moved = nb.scrolled_pixel(emb, "#emb-stack", b3["x"] + (200.5 / 480) * b3["width"], y)
    assert moved[0] > 180 and moved[2] < 80, moved  # ... and is now under t = 200


def test_sample_selector_redraws_maps(nb, emb):
    if emb.locator("#ctl-sample option").count() < 2:
        pytest.skip("one sample only")
    box = emb.evaluate("nilmbuild.test.boxes()[6]")
    pts = [(box["x"] + box["width"] * f, box["y"] + box["height"] * g) for f in (0.2, 0.5, 0.8) for g in (0.3, 0.7)]
    before = [nb.scrolled_pixel(emb, "#emb-stack", x, y) for x, y in pts]
    emb.select_option("#ctl-sample", "1")
    after = [nb.scrolled_pixel(emb, "#emb-stack", x, y) for x, y in pts]
    assert before != after


def test_golden(nb, emb):
    assert nb.screenshot_matches(emb, "page-embedding", tolerance=3, selector="#emb-rf")
