"""The Disaggregation page (architecture.md 11) in Chromium: offline, predictions in watts equal the capture."""

from __future__ import annotations

import numpy as np
import pytest

from nilmbuild.capture.format import decode
from nilmbuild.data.preprocess import scaler_from_dict


@pytest.fixture
def dis(nb, page_at, built_site):
    return nb.open_page(page_at, built_site, "disaggregation", viewport=(1280, 1000))


def test_loads_offline_and_draws(nb, dis):
    assert nb.element_rgb(dis, "#lanes").reshape(-1, 3).std(axis=0).max() > 10
    assert dis.locator("button.nb-save-png").count() == 1
    assert dis.locator("#sample option").count() == dis.evaluate(
        "nilmbuild.test.decode(nilmbuild.test.blob('capture')).meta.samples.length"
    )


def test_readout_equals_captured_prediction_in_watts(dis, site_context):
    dis.locator("#lanes").focus()
    for key in ["ArrowRight"] * 5 + ["ArrowDown"]:  # t = 5 min, lane 1 = the first device
        dis.keyboard.press(key)
    text = dis.locator("#readout").text_content()
    dev = site_context.capture.meta["devices"][0]
    reader = decode(site_context.blob(["output.power", "target.power"]))
    sc = scaler_from_dict(site_context.prepared.scalers["appliances"][dev])
    pred = np.float32(sc.inverse(np.float64(reader.get("output.power")[0, 0, 5])))
    truth = np.float32(sc.inverse(np.float64(reader.get("target.power")[0, 0, 5])))
    part = {p.split(":")[0].strip(): p.split(":")[1].strip() for p in text.split(" · ") if ":" in p}
    assert float(part[f"{dev} predicted"].split()[0]) == pytest.approx(float(f"{pred:.5g}"), rel=1e-9, abs=1e-9)
    assert float(part[f"{dev} truth"].split()[0]) == pytest.approx(float(f"{truth:.5g}"), rel=1e-9, abs=1e-9)


def test_sample_select_and_split_animation(nb, dis):
    static = nb.canvas_rgb(dis, "#lanes")
    if dis.locator("#sample option").count() > 1:
        dis.select_option("#sample", "1")
        assert np.abs(static - nb.canvas_rgb(dis, "#lanes")).max() > 50
        dis.select_option("#sample", "0")
        assert np.abs(static - nb.canvas_rgb(dis, "#lanes")).max() <= 2
    dis.click("#play-split")
    # check "still running" and press skip in ONE task, so the animation cannot finish between the two
    running, split_before = dis.evaluate("""() => { const s = nilmbuild.test.state, running = s.anim !== null;
        const split = s.split; if (running) document.getElementById("play-split").click(); return [running, split]; }""")
    if running:  # (reduced motion runs it to the end at once; the last frame has split 1, still running)
        assert 0 <= split_before <= 1
    assert dis.evaluate("nilmbuild.test.state.anim === null && nilmbuild.test.state.split === 1")
    assert np.abs(static - nb.canvas_rgb(dis, "#lanes")).max() <= 2
    # the first frame of the split (devices stacked inside the aggregate) differs from the lanes
    dis.evaluate("nilmbuild.test.view().draw(0)")
    assert np.abs(static - nb.canvas_rgb(dis, "#lanes")).max() > 50
    dis.evaluate("nilmbuild.test.view().draw(1)")
    assert np.abs(static - nb.canvas_rgb(dis, "#lanes")).max() <= 2


def test_day_view_seams_and_metrics(nb, dis, site_context):
    if dis.locator("#mode").is_disabled():
        assert "not available" in dis.locator("#day-error").text_content()
        return
    res = site_context.disaggregation
    dis.select_option("#mode", "day")
    assert dis.locator("#metrics-box").is_visible()
    assert dis.evaluate("nilmbuild.test.view().opts.seams.length") == len(res["seams"])
    first = dis.locator("#metrics tbody tr").nth(0).locator("td")
    dev = res["devices"][0]
    mae = res["metrics"][dev]["mae"]
    assert float(first.nth(1).text_content()) == pytest.approx(float(f"{mae:.4g}"), rel=1e-9)
    before = nb.element_rgb(dis, "#lanes")
    dis.select_option("#post-step", "0")
    from nilmbuild.site.views.disaggregation import POST_STEPS

    dis.select_option("#post-step", str(len(POST_STEPS) - 1))  # back to the last step, the default
    assert np.abs(before - nb.element_rgb(dis, "#lanes")).max() <= 2


def test_golden(nb, dis):
    nb.screenshot_matches(dis, "page-disaggregation-window", tolerance=6, selector="#lanes")


def test_your_signal_without_an_edit_replaces_the_chart(dis):
    """No Playground edit stored: the message takes the chart's place (the old chart is not left under it), and
    another view brings the chart back."""
    assert dis.evaluate("localStorage.getItem('nilmbuild:your-signal')") is None
    dis.select_option("#mode", "signal")
    dis.wait_for_selector("#signal-empty:not([hidden])", timeout=10000)
    assert "Playground" in dis.locator("#signal-empty").text_content()
    assert dis.locator("#lanes").is_hidden()
    dis.select_option("#mode", "window")
    assert dis.locator("#lanes").is_visible() and dis.locator("#signal-empty").is_hidden()
