"""The gate page (architecture.md 9) in Chromium: offline, recomputation equals the capture, live threshold."""

from __future__ import annotations

import pytest

from nilmbuild.capture.format import decode


@pytest.fixture
def gate(nb, page_at, built_site):
    return nb.open_page(page_at, built_site, "gate")


def _curve_xy(page, p, y):
    box = page.locator("#gate-curve").bounding_box()
    W, H = box["width"], box["height"]
    return 56 + p * (W - 112), 26 + (1 - y) * (H - 66)


def test_loads_offline_and_draws(nb, gate):
    assert gate.evaluate("document.documentElement.dataset.ready") == "true"
    shot = nb.element_rgb(gate, "#gate-time", dtype=float)
    assert shot.reshape(-1, 3).std(axis=0).max() > 10  # not blank
    assert gate.locator("#ctl-sample option").count() >= 1
    assert gate.locator("button.nb-save-png").count() == 2  # one per view


def test_default_threshold_reproduces_captured_power(gate, site_context):
    devs = gate.evaluate("nilmbuild.test.extra.devices")
    b = gate.evaluate("nilmbuild.test.extra.samples[0]")
    L = gate.evaluate("nilmbuild.test.current().p.length")
    reader = decode(site_context.blob([f"heads.{d}.power" for d in devs], samples=[b]))
    for d, name in enumerate(devs):
        gate.select_option("#ctl-device", str(d))
        badge = gate.locator("#gate-match")
        assert badge.get_attribute("data-matches") == str(L), (name, badge.text_content())
        want = float(reader.get(f"heads.{name}.power")[0, 240])
        got = gate.locator("#gate-readout dd[data-key=captured]").get_attribute("data-value")
        assert got == repr(want) or float(got) == want, (name, got, want)
        # the recomputed float32 value, rounded to the record's stored precision, is the captured one
        same = gate.evaluate(
            "(() => { const r = nilmbuild.test.current(), c = nilmbuild.test.gate.captured(nilmbuild.test.cap, nilmbuild.test.extra.devices,"
            " nilmbuild.test.state.dev, 0, 'hard'); return nilmbuild.test.gate.same(r.power[240], c.values[240], c.storage); })()"
        )
        assert same


def test_soft_mode_matches_captured_soft_gate_run(gate):
    gate.select_option("#ctl-mode", "soft")
    L = gate.evaluate("nilmbuild.test.current().p.length")
    assert gate.locator("#gate-match").get_attribute("data-matches") == str(L)
    assert "ablation.soft_gate.output.power" in gate.locator("#gate-match").text_content()


def test_threshold_slider_moves_the_step(nb, gate):
    x, y = _curve_xy(gate, 0.9, 0.5)
    before = nb.scrolled_pixel(gate, "#gate-curve", x - 1, y)
    gate.locator("#ctl-threshold").fill("0.9")
    assert gate.locator("#ctl-threshold-value").text_content() == "0.90"
    after = nb.scrolled_pixel(gate, "#gate-curve", x - 1, y)
    assert before != after
    r, g, b = after  # the hard-gate step is drawn in #D55E00
    assert r > 180 and g < 140 and b < 60, after
    on = gate.evaluate("Array.from(nilmbuild.test.current().gate).filter(v => v > 0).length")
    p = gate.evaluate("Array.from(nilmbuild.test.current().p).filter(v => v > 0.9).length")
    assert on == p


def test_golden(nb, gate):
    assert nb.screenshot_matches(gate, "page-gate", tolerance=3, selector="#gate-time")
