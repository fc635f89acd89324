"""The forward-pass page in Chromium: 3D blocks sized by the records, stage selection by click / keys / play,
the zoomed heatmap's values vs the Python reader (exact stages and 8-minute-binned ones)."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from nilmbuild.capture.format import decode


@pytest.fixture(scope="module")
def spec(site_context):
    from nilmbuild.site.views import forward

    return forward.build(site_context)


def _open(nb, page_at, built_site):
    return nb.open_page(page_at, built_site, "forward", viewport=(1200, 1000))


def _zoom_point(nb, page, row, col):
    """Page coordinates inside zoom cell (row, col) and the cell the hover maps them to."""
    z = page.evaluate(
        "(() => { const h = nilmbuild.test.zoomHeatmap(); return {box: h.box, rows: h.rows, cols: h.cols}; })()"
    )
    return nb.client_point(page, "#fwd-zoom", z["box"], row, col, z["rows"], z["cols"])


def _clock(reader, sample, step):
    """The "HH:MM" of `step` minutes (the model's 1-minute steps) after sample's window start, the capture's meta.t0."""
    t0 = np.datetime64(reader.meta["t0"][sample].rstrip("Z"), "m")
    return str(t0 + np.timedelta64(step, "m"))[11:16]


def test_zoom_ticks_read_clock_time(nb, page_at, built_site, spec):
    """The zoom view's time ticks are clock times (UTC) of the selected window: the tick drawn at a column's pixel
    reads the capture's t0 of that sample plus that many minutes, for an exact and a binned stage, after a sample
    change too; the axis says UTC, not minutes."""
    reader = decode(spec.blobs["capture"])
    assert reader.meta["t0"][0] != reader.meta["t0"][1]
    page = _open(nb, page_at, built_site)
    for stage, sample in ((0, 0), (4, 0), (12, 1)):
        page.locator("#fwd-sample").select_option(str(sample))
        page.locator("#fwd-stage").select_option(str(stage))
        got = page.evaluate(
            """() => { const z = nilmbuild.test.zoomBox(), s = nilmbuild.test.stages[nilmbuild.test.state.stage];
            const c = document.getElementById('fwd-zoom-overlay').nbChart;
            return {z, full: s.colsFull, labels: c.labels.filter(l => l.y0 > z.y + z.height)}; }"""
        )
        z, full = got["z"], got["full"]
        ticks = [lb for lb in got["labels"] if len(lb["text"]) == 5 and lb["text"][2] == ":"]
        assert len(ticks) >= 2, got["labels"]
        for lb in ticks:
            col = ((lb["x0"] + lb["x1"]) / 2 - z["x"]) / z["width"] * full - 0.5  # the pixel's column, whole minutes
            assert abs(col - round(col)) < 0.01, (lb, col)
            assert lb["text"] == _clock(reader, sample, round(col)), (stage, sample, lb)
        assert any(lb["text"].startswith("time (UTC") for lb in got["labels"])
        assert not any("minute" in lb["text"] and "means" not in lb["text"] for lb in got["labels"])


def test_blocks_golden_and_zoom_values(nb, page_at, built_site, spec):
    page = _open(nb, page_at, built_site)
    stages = page.evaluate(
        "nilmbuild.test.stages.map(s => ({stage: s.st.stage, rows: s.rowsFull, cols: s.colsFull, w: s.w, h: s.h}))"
    )
    assert [s["stage"] for s in stages] == [str(i) for i in range(13)]
    reader = decode(spec.blobs["capture"])
    inp = reader.record("input")["shape"]
    assert (stages[0]["rows"], stages[0]["cols"]) == (inp[1], inp[2])
    binned = msgpack.unpackb(spec.blobs["binned"], raw=False)
    proj = binned["summaries"]["projection"]["record"]["shape"]
    assert (stages[4]["rows"], stages[4]["cols"]) == (proj[1], proj[2])  # full shape, not the binned one
    assert stages[4]["h"] > stages[0]["h"] and stages[5]["w"] < stages[4]["w"]  # 96 rows > 7 rows; transpose
    box = page.evaluate("nilmbuild.test.screenBox(nilmbuild.test.stages[3])")
    px = nb.canvas_pixel(page, "#fwd-3d", int((box["x0"] + box["x1"]) / 2), int((box["y0"] + box["y1"]) / 2))
    assert px != (255, 255, 255)
    # the info panel names the record and its shape from the blob
    info = page.locator("#fwd-info").text_content()
    assert "input" in info and " × ".join(str(d) for d in inp) in info
    nb.screenshot_matches(page, "page-forward", tolerance=3, selector=".fwd-wrap")
    # the zoomed stage: hover values are the exact (stage 0) or 8-minute-mean (stage 4) values
    page.locator("#fwd-zoom").scroll_into_view_if_needed()
    x, y, r, c = _zoom_point(nb, page, 2, 100)
    page.mouse.move(x, y)
    v = float(reader.get("input")[0, r, c])
    fmt = page.evaluate("v => nilmbuild.test.fmt(v, 4)", v)
    hm = _clock(reader, 0, c)
    assert page.locator("#nb-tooltip").text_content() == f"stage 0: channel {r}, time {hm} UTC\nvalue = {fmt}"
    # stage 4 (projection) is carried as 8-minute means: the value is the mean of the exact tensor's bin
    page.locator("#fwd-stage").select_option("4")
    assert page.evaluate("nilmbuild.test.state.stage") == 4
    page.locator("#fwd-zoom").scroll_into_view_if_needed()
    x, y, r, c = _zoom_point(nb, page, 40, 20)
    page.mouse.move(x, y)
    b = msgpack.unpackb(spec.blobs["binned"], raw=False)
    e = b["summaries"]["projection"]
    arr = np.frombuffer(e["data"], dtype="<f2").astype(np.float32).reshape(e["shape"])
    fmt = page.evaluate("v => nilmbuild.test.fmt(v, 4)", float(arr[0, r, c]))
    first, last = c * e["bin"], min(c * e["bin"] + e["bin"] - 1, proj[2] - 1)
    span = f"{_clock(reader, 0, first)}–{_clock(reader, 0, last)} UTC ({e['bin']}-minute mean)"
    assert page.locator("#nb-tooltip").text_content() == f"stage 4: feature {r}, time {span}\nvalue = {fmt}"
    assert f"mean over {e['bin']}-minute bins" in page.locator("#fwd-info").text_content()


def _bin_means(a: np.ndarray, axis: int, k: int) -> np.ndarray:
    """Mean of every k consecutive steps along `axis`, the last (shorter) bin included, bin by bin."""
    L = a.shape[axis]
    return np.stack(
        [a.take(range(s, min(s + k, L)), axis=axis).astype(np.float64).mean(axis=axis) for s in range(0, L, k)],
        axis=axis,
    )


def test_binned_means_are_true_means(site_context, spec):
    """Every bin of every stored summary (not just the first) is the mean of the exact tensor's bin."""
    b = msgpack.unpackb(spec.blobs["binned"], raw=False)
    stored = {n: e for n, e in b["summaries"].items() if "data" in e}
    assert "projection" in stored and len(stored) >= 2
    for name, e in stored.items():
        arr = np.frombuffer(e["data"], dtype="<f2").astype(np.float32).reshape(e["shape"])
        exact = decode(site_context.blob([name])).get(name)
        want = _bin_means(exact, e["time_axis"], e["bin"])
        assert arr.shape == want.shape, name
        tol = 2e-3 * max(1.0, float(np.abs(want).max()))  # float16 storage
        assert np.abs(arr - want).max() <= tol, (name, float(np.abs(arr - want).max()))


def test_binned_last_bin_may_be_shorter():
    """L = 21 steps in bins of 8: 8 + 8 + 5; the last bin is the mean of its 5 steps, on any time axis."""
    from nilmbuild.site.views.forward import BIN, _binned

    rng = np.random.default_rng(0)
    for axes in (("batch", "feature", "time"), ("batch", "time", "feature")):
        a = rng.normal(size=(2, 3, 21) if axes[-1] == "time" else (2, 21, 3)).astype(np.float32)
        reader = type("R", (), {"record": lambda self, n: {"axes": list(axes)}, "get": lambda self, n: a})()  # noqa: B023
        got = _binned(reader, "x")
        ax = axes.index("time")
        assert got.shape[ax] == 3
        np.testing.assert_allclose(got, _bin_means(a, ax, BIN), rtol=1e-6, atol=1e-7)
        last = a.take(range(16, 21), axis=ax).mean(axis=ax)
        np.testing.assert_allclose(got.take(2, axis=ax), last, rtol=1e-6, atol=1e-7)


def test_select_by_keys_click_and_play(nb, page_at, built_site):
    page = _open(nb, page_at, built_site)
    page.locator("#fwd-3d").focus()
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    assert page.evaluate("nilmbuild.test.state.stage") == 4
    assert page.locator("#fwd-stage").input_value() == "4"
    assert "projection" in page.locator("#fwd-info").text_content()
    # click a block
    box = page.evaluate("nilmbuild.test.screenBox(nilmbuild.test.stages[12])")
    cb = page.locator("#fwd-3d").bounding_box()
    page.mouse.click(cb["x"] + (box["x0"] + box["x1"]) / 2, cb["y"] + (box["y0"] + box["y1"]) / 2)
    assert page.evaluate("nilmbuild.test.state.stage") == 12
    # the sample select redraws the zoomed heatmap with that sample's values
    if page.locator("#fwd-sample option").count() > 1:
        page.locator("#fwd-sample").select_option("1")
        assert page.evaluate("nilmbuild.test.state.sample") == 1
        assert page.locator("#fwd-zoom-title").text_content().endswith("sample 1")
        assert page.evaluate("nilmbuild.test.zoomHeatmap().value(0, 0)") == page.evaluate(
            "nilmbuild.test.capture.slice('output.power', 1)[0]"
        )
    # play animates stage by stage (then stop); with animations off it jumps to the end
    page.locator("#fwd-3d").focus()
    page.keyboard.press("Home")
    assert page.evaluate("nilmbuild.test.state.stage") == 0
    page.locator("#fwd-play").click()
    page.wait_for_function("nilmbuild.test.state.stage >= 2", timeout=5000)
    page.locator("#fwd-play").click()  # Stop
    s = page.evaluate("nilmbuild.test.state.stage")
    page.wait_for_timeout(1200)
    assert page.evaluate("nilmbuild.test.state.stage") == s and page.locator("#fwd-play").text_content() == "Play"
    page.evaluate("nilmbuild.test.noAnimation = true")
    page.locator("#fwd-play").click()
    assert page.evaluate("nilmbuild.test.state.stage") == 12


def test_embed_shows_only_the_3d_view(nb, page_at, built_site):
    page = page_at((built_site / "forward.html").resolve().as_uri() + "#embed", viewport=(900, 600))
    nb.wait_ready(page)
    for sel in [".nb-header", ".nb-intro", "#fwd-zoom", ".nb-footer"]:
        assert not page.locator(sel).is_visible(), sel
    box = page.locator("#fwd-3d").bounding_box()
    assert box["height"] > 500
    b = page.evaluate(
        "nilmbuild.test.screenBox(nilmbuild.test.stages[12])"
    )  # the camera refits: the last block is inside
    assert 0 <= b["x0"] < b["x1"] <= box["width"] and 0 <= b["y0"] < b["y1"] <= box["height"]


def test_blob_budget(site_context):
    """The page's blobs stay within the ~3 MB budget (they are base64-inlined into the HTML)."""
    from nilmbuild.site.views import forward

    spec = forward.build(site_context)
    assert sum(len(b) for b in spec.blobs.values()) < 3_000_000


LABELS_3D = """() => { const t = nilmbuild.test, c = document.getElementById('fwd-3d-overlay').nbChart;
  return {labels: c.labels.map(l => ({text: l.text, x0: l.x0, x1: l.x1, y0: l.y0, y1: l.y1})),
          blocks: t.stages.map(s => t.screenBox(s)), names: t.stages.map(s => [s.st.stage, s.st.short || s.st.title]),
          W: c.canvas.clientWidth, H: c.canvas.clientHeight}; }"""


def _hit(a, b, inset=0.0):
    return (
        a["x0"] < b["x1"] - inset - 1
        and b["x0"] + inset < a["x1"] - 1
        and a["y0"] < b["y1"] - inset - 1
        and b["y0"] + inset < a["y1"] - 1
    )


def _check_3d_labels(page, stage):
    """The checks of one selection; -> the number of full names and shapes drawn."""
    page.locator("#fwd-stage").select_option(stage)
    g = page.evaluate(LABELS_3D)
    L, texts = g["labels"], [lb["text"] for lb in g["labels"]]
    for i, a in enumerate(L):
        assert -1 <= a["x0"] and a["x1"] <= g["W"] + 1 and -1 <= a["y0"] and a["y1"] <= g["H"] + 1, a
        assert not [b["text"] for b in L[i + 1 :] if _hit(a, b)], a
    for k, (num, name) in enumerate(g["names"]):
        assert f"{num} · {name}" in texts or num in texts, (stage, num, texts)
        for lb in (lb for lb in L if lb["text"] in (f"{num} · {name}", num)):
            assert [j for j, b in enumerate(g["blocks"]) if j != k and _hit(lb, b, inset=4)] == [], lb
    num, name = g["names"][int(stage)]
    assert f"{num} · {name}" in texts
    return sum(" · " in t for t in texts) + sum("×" in t for t in texts)


def test_3d_labels_thin_out_without_overlap(nb, page_at, built_site):
    """The 3D view's labels (stage names, numbers, shapes), as drawn, at 1400x900 and 390x844: no two boxes overlap,
    none leaves the canvas or covers another block (its screen box less the 4 px corners an isometric box leaves
    empty), every stage keeps at least its number and the selected stage its full name, for several selections.
    On the phone the labels thin out: fewer full names and shapes than on the desktop."""
    drawn = {}
    for size in ((1400, 900), (390, 844)):
        page = nb.open_page(page_at, built_site, "forward", viewport=size)
        drawn[size] = [_check_3d_labels(page, stage) for stage in ("0", "6", "10")]
    assert all(0 < p < d for p, d in zip(drawn[(390, 844)], drawn[(1400, 900)])), drawn
