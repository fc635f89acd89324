"""The Training page (architecture.md 10) in Chromium: the checkpoint's training log, or a clear notice without one."""

from __future__ import annotations

import pytest


@pytest.fixture
def training(nb, page_at, built_site):
    return nb.open_page(page_at, built_site, "training")


def test_loads_offline(training, site_context):
    log = site_context.loaded.train_log or {}
    if not log.get("epochs"):
        assert training.locator("#no-log").is_visible()
        assert training.locator("#loss-plot").count() == 0 and training.locator("#pc-canvas").count() == 0
    else:
        assert training.locator("#no-log").count() == 0
        has_landscape = bool((site_context.loaded.extra or {}).get("landscape"))
        assert training.locator("button.nb-save-png").count() == 4 + has_landscape


def test_pcgrad_heatmap_cell_and_epoch_slider(nb, training, site_context):
    log = site_context.loaded.train_log or {}
    epochs = log.get("epochs") or []
    if not epochs or not any(e["pcgrad"]["mean_cos"] for e in epochs):
        pytest.skip("no PCGrad statistics in this checkpoint's log")
    devs = log["devices"]
    D = len(devs)
    training.locator("#pc-canvas").scroll_into_view_if_needed()
    box = training.locator("#pc-canvas").bounding_box()
    cell = box["width"] / D
    r, c = 0, 1
    cos = epochs[-1]["pcgrad"]["mean_cos"][f"{devs[0]}|{devs[1]}"]
    want = training.evaluate(f"nilmbuild.test.colormaps.map('burd', ({cos} + 1) / 2)")
    got = nb.pixel(training, "#pc-canvas", int(c * cell + cell / 2), int(r * cell + cell / 2))
    assert all(abs(g - w) <= 3 for g, w in zip(got, want)), (got, want)
    # hover reads the logged value
    training.mouse.move(box["x"] + c * cell + cell / 2, box["y"] + r * cell + cell / 2)
    assert f"cos {training.evaluate(f'nilmbuild.test.fmt({cos}, 4)')}" in training.locator("#pc-readout").text_content()
    # another epoch: its own logged cosine, or grey cells where PCGrad was off (e.g. warm-up epochs)
    for e, rec in enumerate(epochs[:-1]):
        training.locator("#pc-epoch").fill(str(e + 1))
        got0 = nb.pixel(training, "#pc-canvas", int(c * cell + cell / 2), int(r * cell + cell / 2))
        key = f"{devs[0]}|{devs[1]}"
        if key in rec["pcgrad"]["mean_cos"]:
            want0 = training.evaluate(
                f"nilmbuild.test.colormaps.map('burd', ({rec['pcgrad']['mean_cos'][key]} + 1) / 2)"
            )
        else:
            want0 = [217, 217, 217]  # nanColor 0.85: nothing logged
        assert all(abs(g - w) <= 3 for g, w in zip(got0, want0)), (e, got0, want0)
        training.mouse.move(box["x"] + c * cell + cell / 2, box["y"] + r * cell + cell / 2)
        if key not in rec["pcgrad"]["mean_cos"]:
            assert "PCGrad off in this epoch" in training.locator("#pc-readout").text_content()
        break


def test_pcgrad_labels_sit_over_their_columns_and_rows(training, site_context):
    """Each device label is centred on its matrix column (row), and no two labels overlap, however long the name."""
    if not (site_context.loaded.train_log or {}).get("epochs"):
        pytest.skip("no training log")
    training.locator("#pc-canvas").scroll_into_view_if_needed()
    got = training.evaluate("""() => {
      const c = document.getElementById('pc-canvas').getBoundingClientRect();
      const rects = (id) => Array.from(document.querySelectorAll(id + ' span')).map(s => s.getBoundingClientRect());
      return {canvas: [c.left, c.top, c.width, c.height], cols: rects('#pc-cols').map(r => [r.left, r.right, r.top, r.bottom]),
              rows: rects('#pc-rows').map(r => [r.left, r.right, r.top, r.bottom])};
    }""")
    x, y, w, h = got["canvas"]
    D = len(got["cols"])
    for k, (left, right, _top, bottom) in enumerate(got["cols"]):
        assert abs((left + right) / 2 - (x + (k + 0.5) * w / D)) <= 2, (k, left, right)
        assert bottom <= y + 1
    for k, (_left, right, top, bottom) in enumerate(got["rows"]):
        assert abs((top + bottom) / 2 - (y + (k + 0.5) * h / D)) <= 2, (k, top, bottom)
        assert right <= x + 1
    for spans, lo, hi in ((got["cols"], 0, 1), (got["rows"], 2, 3)):
        for a, b in zip(spans, spans[1:]):
            assert a[hi] <= b[lo] + 0.5, (a, b)  # no overlap along the axis


def test_device_types_table(training, site_context):
    types = (site_context.loaded.extra or {}).get("device_types") or {}
    if not types:
        assert training.locator("#no-types").is_visible()
        return
    rows = training.locator("#types-table tbody tr")
    assert rows.count() == len(types)
    first = next(iter(types))
    assert types[first]["type"] in rows.nth(0).text_content()


def test_golden(nb, training):
    sel = "#no-log" if training.locator("#no-log").count() else "#fig-pcgrad"
    nb.screenshot_matches(training, "page-training", tolerance=6, selector=sel)
