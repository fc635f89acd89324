"""The Data page (architecture.md 2-3) in Chromium: offline, the preprocessing figures, values from the pipeline."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def datapage(nb, page_at, built_site):
    return nb.open_page(page_at, built_site, "data")


def test_loads_offline_and_draws(nb, datapage):
    for sel in ("#raw-plot", "#states-plot", "#timeline", "#features-plot"):
        assert nb.element_rgb(datapage, sel).reshape(-1, 3).std(axis=0).max() > 10, sel
    assert datapage.locator("button.nb-save-png").count() == 4
    assert datapage.locator("#scaling-table tbody tr").count() == 1 + len(
        datapage.evaluate("nilmbuild.test.msgpack.decode(nilmbuild.test.blob('data')).devices")
    )


def test_scaler_table_is_the_prepared_scalers(datapage, site_context):
    sc = site_context.prepared.scalers["aggregate"]
    cells = datapage.locator("#scaling-table tbody tr").nth(0).locator("td")
    assert cells.nth(1).text_content() == sc["kind"]
    key = [k for k in sc if k != "kind"][0]
    got = float(cells.nth(2).text_content().split("=")[1].split(",")[0])
    assert got == pytest.approx(sc[key], rel=1e-5)


def test_zoom_changes_the_raw_plot(nb, datapage):
    before = nb.element_rgb(datapage, "#raw-plot")
    datapage.select_option("#raw-zoom", "1")
    after = nb.element_rgb(datapage, "#raw-plot")
    assert np.abs(before - after).max() > 50


def test_time_feature_readout_equals_model_input(nb, datapage, site_context):
    datapage.locator("#features-plot").focus()
    for _ in range(7):
        datapage.keyboard.press("ArrowRight")
    tip = datapage.locator("#nb-tooltip").text_content()
    lines = tip.split("\n")
    assert lines[0].startswith("minute in window = 7")
    want = float(site_context.x[0, 0, 7])  # channel 0 (scaled aggregate) of window 0
    got = float(lines[1].split(":")[1])
    assert got == pytest.approx(float(f"{want:.6g}"), rel=1e-9, abs=1e-12)
    # another example window changes the feature lanes
    if datapage.locator("#feature-sample option").count() > 1:
        before = nb.element_rgb(datapage, "#features-plot")
        datapage.select_option("#feature-sample", "1")
        assert np.abs(before - nb.element_rgb(datapage, "#features-plot")).max() > 50


def test_golden(nb, datapage):
    nb.screenshot_matches(datapage, "page-data-raw", tolerance=6, selector="#raw-plot")
