"""Hover and click readouts against the tensors, read in Python from the built page (issue 35, item 1).

The pointer goes to a known pixel of a chart; the tooltip must name that pixel's sample (its time or epoch) and
carry the values Python reads from the page's own blobs (nilmbuild.site.assets.read_blobs, the capture reader)
or from the training log. Regressions these catch: a readout that snaps to an axis end (a two-point reference
line's sample won the nearest-sample search), a click that pins a tooltip for cell (0, 0) at the grid's corner,
and a mode switch that leaves the previous mode's text up.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgpack
import numpy as np
import pytest

from nilmbuild.capture.format import decode
from nilmbuild.site.assets import read_blobs


def _page_blobs(site, slug):
    html = (Path(site) / f"{slug}.html").read_text()
    payload = json.loads(re.search(r'<script type="application/json" id="nb-page">(.*?)</script>', html, re.S).group(1))
    return read_blobs(html), payload


def _tip(page):
    """The tooltip's lines as {name: text} (first line kept whole under "x"), and whether it is shown."""
    t = page.locator("#nb-tooltip")
    lines = t.text_content().split("\n")
    out = {"x": lines[0]}
    for ln in lines[1:]:
        k, _, v = ln.rpartition(": ")
        out[k] = v
    return out, t.is_visible()


def _num(s):
    return float(s.replace("−", "-"))


def _close(got, want, rel=2e-6):
    return abs(got - want) <= rel * abs(want) + 1e-9


def _hover_plot(page, selector, plot_js, x, lane=0):
    """Move the pointer to the whole page pixel nearest data x, a third of the way down lane `lane` of a plot2d
    chart (placed with its drawn layout: plot box and x range). Returns (tooltip lines, shown, the data x of the
    pixel the pointer is on), the last computed here from the pixel, to pick the expected sample in Python."""
    page.locator(selector).scroll_into_view_if_needed()
    cb = page.locator(selector).bounding_box()
    L = page.evaluate(f"(() => {{ const p = {plot_js}; return p.layout; }})()")
    box, span, plot_w = L["lanes"][lane], L["xr"][1] - L["xr"][0], L["W"] - L["left"] - L["right"]
    X = round(cb["x"] + L["left"] + (x - L["xr"][0]) / span * plot_w)
    Y = round(cb["y"] + box["y"] + box["height"] / 3)
    page.mouse.move(X, Y)
    tip, shown = _tip(page)
    return tip, shown, L["xr"][0] + (X - cb["x"] - L["left"]) / plot_w * span


def _nearest(xs, x):
    return int(np.argmin(np.abs(np.asarray(xs, dtype=np.float64) - x)))


# ---------------------------------------------------------------- Data
@pytest.fixture(scope="module")
def data_blob(built_site):
    return msgpack.unpackb(_page_blobs(built_site, "data")[0]["data"])


def _clock(start_iso, seconds, with_seconds):
    t = datetime.fromisoformat(start_iso).replace(tzinfo=UTC) + timedelta(seconds=float(seconds))
    return t.strftime("%H:%M:%S" if with_seconds else "%H:%M") + " UTC"


@pytest.mark.parametrize("frac", [0.03, 0.37, 0.81, 0.995])
def test_data_raw_readout_is_the_sample_under_the_pointer(nb, page_at, built_site, data_blob, frac):
    """Anywhere along the day (not only at its ends), the readout's time is the raw sample's clock time and its
    values are that raw sample, the 1-minute bin holding it, and the cut-off."""
    D = data_blob
    t = np.frombuffer(D["raw"]["t"], "<i4")
    raw = np.frombuffer(D["raw"]["aggregate_w"], "<f4")
    res = np.frombuffer(D["resampled"]["aggregate_w"], "<f4")
    i = int(frac * (len(t) - 1))
    page = nb.open_page(page_at, built_site, "data", viewport=(1400, 900))
    tip, shown, xh = _hover_plot(page, "#raw-plot", "nilmbuild.test.plots.raw", t[i] / 3600, 0)
    assert shown
    j = _nearest(t / 3600, xh)  # the raw sample under the pointer (raw is the densest series)
    names = list(tip)[1:]
    assert tip["x"] == f"time = {_clock(D['start'], t[j], True)}"
    assert _num(tip[names[0]]) == pytest.approx(float(f"{raw[j]:.6g}"), rel=1e-9)
    assert _num(tip[names[1]]) == pytest.approx(float(f"{res[int(t[j] // D['step_s'])]:.6g}"), rel=1e-9)
    assert _num(tip[names[2]]) == D["cutoff_w"]
    cursor = page.evaluate("nilmbuild.test.plots.raw.cursor")  # the crosshair stands on that sample, not an edge
    assert cursor == pytest.approx(t[j] / 3600, abs=1e-9)


@pytest.mark.parametrize("frac", [0.1, 0.5, 0.9])
def test_data_states_readout_is_the_minute_under_the_pointer(nb, page_at, built_site, data_blob, frac):
    D = data_blob
    n, devs = D["resampled"]["n"], D["devices"]
    apps = np.frombuffer(D["resampled"]["appliances_w"], "<f4").reshape(len(devs), n)
    j = int(frac * (n - 1))
    page = nb.open_page(page_at, built_site, "data", viewport=(1400, 900))
    for k in (0, len(devs) - 1):
        tip, shown, xh = _hover_plot(page, "#states-plot", "nilmbuild.test.plots.states", j * D["step_s"] / 3600, k)
        j = _nearest(np.arange(n) * D["step_s"] / 3600, xh)
        assert shown
        assert tip["x"] == f"time = {_clock(D['start'], j * D['step_s'], False)}"
        assert _num(tip["power (1 min)"]) == pytest.approx(float(f"{apps[k, j]:.6g}"), rel=1e-9, abs=1e-12)
        assert _num(tip["ON threshold"]) == D["thresholds_w"][devs[k]]


def test_data_features_mouse_readout_equals_model_input(nb, page_at, built_site, site_context):
    page = nb.open_page(page_at, built_site, "data", viewport=(1400, 900))
    C = site_context.x.shape[1]
    for m, ch in ((3, 0), (250, 1), (477, C - 1)):
        tip, shown, xh = _hover_plot(page, "#features-plot", "nilmbuild.test.plots.features", m, ch)
        m = _nearest(np.arange(site_context.x.shape[2]), xh)
        assert shown and tip["x"] == f"minute in window = {m} min", tip
        (name,) = list(tip)[1:]
        assert _num(tip[name]) == pytest.approx(float(f"{site_context.x[0, ch, m]:.6g}"), rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------- Training
@pytest.fixture(scope="module")
def train_log(site_context):
    log = site_context.loaded.train_log or {}
    if not log.get("epochs"):
        pytest.skip("this checkpoint has no training log: the Training page draws no charts")
    return log


def test_training_loss_readout_is_the_epoch_under_the_pointer(nb, page_at, built_site, train_log):
    E, devs = train_log["epochs"], train_log["devices"]
    page = nb.open_page(page_at, built_site, "training", viewport=(1400, 900))
    for e in sorted({1, len(E) // 2, len(E) - 2}):
        for k in (0, len(devs) - 1):
            tip, shown, _ = _hover_plot(page, "#loss-plot", "nilmbuild.test.plots.loss", E[e]["epoch"], k)
            assert shown and tip["x"] == f"epoch = {E[e]['epoch']}", tip
            for comp, v in E[e]["loss"]["devices"][devs[k]].items():
                if comp in tip:
                    assert _close(_num(tip[comp]), v, 1e-5), (e, devs[k], comp, tip[comp], v)


def test_training_validation_readout_with_baselines(nb, page_at, built_site, train_log):
    """The MAE lane holds two-point dashed baselines: the readout still reports the hovered epoch, not 1 or N."""
    E, devs = train_log["epochs"], train_log["devices"]
    page = nb.open_page(page_at, built_site, "training", viewport=(1400, 900))
    e = len(E) // 2
    tip, shown, _ = _hover_plot(page, "#val-plot", "nilmbuild.test.plots.val", E[e]["epoch"], 1)
    assert shown and tip["x"] == f"epoch = {E[e]['epoch']}", tip
    for d in devs:
        want = (E[e].get("val") or {}).get("devices", {}).get(d, {}).get("mae")
        if want is not None:
            assert _close(_num(tip[d.replace("_", " ")]), want, 1e-5), (d, tip)
        base = (train_log.get("baseline_val", {}).get(d) or {}).get("mae")
        if base is not None:
            assert _close(_num(tip[d.replace("_", " ") + " baseline"]), base, 1e-5)


def test_training_schedule_readout(nb, page_at, built_site, train_log):
    E = train_log["epochs"]
    page = nb.open_page(page_at, built_site, "training", viewport=(1400, 900))
    e = min(len(E) - 1, 3)
    tip, shown, _ = _hover_plot(page, "#sched-plot", "nilmbuild.test.plots.sched", E[e]["epoch"], 0)
    assert shown and tip["x"] == f"epoch = {E[e]['epoch']}"
    assert _close(_num(tip["anti-collapse weight"]), E[e]["schedule"]["anti_collapse"], 1e-5)
    assert _num(tip["multi-crop on"]) == (1 if E[e]["schedule"]["crops"] else 0)


# ---------------------------------------------------------------- Gate
def test_gate_readout_follows_the_mode_switch(nb, page_at, built_site):
    """Hover the power lane, switch to soft mode without moving the pointer: the text is rebuilt ("(soft)", the
    captured soft run at that minute, in watts from the page's scaler), never left at "(hard)"."""
    blobs, payload = _page_blobs(built_site, "gate")
    cap = decode(blobs["capture"])
    extra = msgpack.unpackb(blobs["extra"])
    dev = extra["devices"][0]
    soft = cap.get(payload["data"]["names"]["soft_output"])[0, 0]
    a, b = payload["watts"]["appliances"][dev]["a"], payload["watts"]["appliances"][dev]["b"]
    page = nb.open_page(page_at, built_site, "gate", viewport=(1400, 900))
    t = 301
    tip, shown, xh = _hover_plot(page, "#gate-time", "nilmbuild.test.plot()", t, 2)
    t = _nearest(np.arange(soft.shape[-1]), xh)
    when = f"time = {_clock(extra['t0'][0], t * extra['resample_s'], False)}"  # the window's clock time (UTC)
    assert shown and tip["x"] == when
    assert any("(hard)" in k for k in tip) and not any("(soft)" in k for k in tip)
    page.select_option("#ctl-mode", "soft")
    page.wait_for_timeout(100)  # one animation frame: the refresh runs after the redraw
    tip, shown = _tip(page)
    assert shown and tip["x"] == when
    assert any("(soft)" in k for k in tip) and not any("(hard)" in k for k in tip), tip
    want = np.float32(np.float32(soft[t]) * np.float32(a) + np.float32(b))
    assert _close(_num(tip["captured soft run"]), float(want), 6e-6), (tip, want)


# ---------------------------------------------------------------- Encoder and Attention: clicks
def _grid_point(nb, page, selector, hm_js, r, c):
    hm = page.evaluate(f"(() => {{ const h = {hm_js}; return {{box: h.box, rows: h.rows, cols: h.cols}}; }})()")
    return nb.client_point(page, selector, hm["box"], r, c, hm["rows"], hm["cols"])


def test_encoder_click_keeps_the_clicked_cell_and_layer_switch_refreshes(nb, page_at, built_site):
    cap = decode(_page_blobs(built_site, "encoder")[0]["capture"])
    page = nb.open_page(page_at, built_site, "encoder", viewport=(1400, 900))
    page.wait_for_function("!nilmbuild.test.pending()", timeout=15000)
    page.locator("#enc-main").scroll_into_view_if_needed()
    x, y, f, t = _grid_point(nb, page, "#enc-main", "nilmbuild.test.heatmaps()[1]", 40, 300)
    page.mouse.click(x, y)
    page.wait_for_timeout(100)
    text, shown = page.locator("#nb-tooltip").text_content(), page.locator("#nb-tooltip").is_visible()
    fmt = page.evaluate("v => nilmbuild.test.fmt(v, 4)", float(cap.get("encoder.0.ln1")[0, t, f]))
    assert shown and text == f"encoder.0.ln1 (LN1)\nt = {t} min, feature {f}\nvalue = {fmt}", text
    tb = page.locator("#nb-tooltip").bounding_box()  # next to the pointer, not at the grid's corner
    assert abs(tb["x"] - x) < 40 and abs(tb["y"] - y) < 40 or abs(tb["x"] + tb["width"] - x) < 40, (tb, x, y)
    if page.evaluate("nilmbuild.test.page().data.n_layers") > 1:
        page.evaluate("nilmbuild.test.setLayer(1)")
        page.evaluate("document.dispatchEvent(new Event('click'))")  # as a tab click does
        page.wait_for_function("!nilmbuild.test.pending()", timeout=15000)
        page.wait_for_timeout(100)
        fmt = page.evaluate("v => nilmbuild.test.fmt(v, 4)", float(cap.get("encoder.1.ln1")[0, t, f]))
        assert (
            page.locator("#nb-tooltip").text_content()
            == f"encoder.1.ln1 (LN1)\nt = {t} min, feature {f}\nvalue = {fmt}"
        )


def test_attention_click_keeps_the_clicked_cell_and_head_switch_refreshes(nb, page_at, built_site):
    from tests.browser.test_page_attention import weights_row

    reader = decode(_page_blobs(built_site, "attention")[0]["capture"])
    page = nb.open_page(page_at, built_site, "attention", viewport=(1400, 900))
    page.locator("#att-main").scroll_into_view_if_needed()
    lay = page.evaluate("nilmbuild.test.layout()")
    L = page.evaluate("nilmbuild.test.heatmaps[0].rows")
    x, y, r, c = nb.client_point(page, "#att-main", lay["big"], 200, 150, L, L)
    page.mouse.click(x, y)
    page.wait_for_timeout(100)
    text = page.locator("#nb-tooltip").text_content()
    assert page.locator("#nb-tooltip").is_visible()
    assert text.startswith(f"layer 0, head 0\nquery t = {r} min\nkey s = {c} min\nweight = "), text
    got = _num(text.rsplit("weight = ", 1)[1])
    want = float(weights_row(reader, 0, 0, 0, r)[c])
    assert abs(got - want) <= 1e-3 * abs(want) + 1e-9
    page.select_option("#att-head", "3")
    page.wait_for_timeout(150)
    text = page.locator("#nb-tooltip").text_content()
    assert text.startswith(f"layer 0, head 3\nquery t = {r} min\nkey s = {c} min\nweight = "), text
    got = _num(text.rsplit("weight = ", 1)[1])
    want = float(weights_row(reader, 0, 0, 3, r)[c])
    assert abs(got - want) <= 1e-3 * abs(want) + 1e-9


# ---------------------------------------------------------------- FiLM and Embedding charts
def _plot_js(canvas_id):
    return f"nilmbuild.test.plots2d.find(p => p.canvas.id === '{canvas_id}')"


def _watts(payload, key):
    ab = payload["watts"]["aggregate"] if key == "aggregate" else payload["watts"]["appliances"][key]
    return lambda z: np.float32(np.float32(z) * np.float32(ab["a"]) + np.float32(ab["b"]))


def test_film_ablation_readout_is_both_runs_at_the_minute_in_watts(nb, page_at, built_site):
    blobs, payload = _page_blobs(built_site, "film")
    cap, names = decode(blobs["capture"]), payload["data"]["names"]
    extra = msgpack.unpackb(blobs["extra"])
    devs = extra["devices"]
    page = nb.open_page(page_at, built_site, "film", viewport=(1400, 900))
    nb.flush(page)
    L = cap.record(names["output"])["shape"][-1]
    for d in (0, len(devs) - 1):
        tip, shown, xh = _hover_plot(page, "#film-ablation", _plot_js("film-ablation"), 0.37 * (L - 1), d)
        t = _nearest(np.arange(L), xh)
        w = _watts(payload, devs[d])
        assert shown and tip["x"] == f"time = {_clock(extra['t0'][0], t * extra['resample_s'], False)}", tip
        for label, rec in (("FiLM on", "output"), ("FiLM off", "output_no_film"), ("ground truth", "target")):
            want = float(w(cap.get(names[rec])[0, d, t]))
            assert _close(_num(tip[label]), want, 6e-6), (devs[d], label, tip[label], want)


def test_embedding_input_readout_is_the_captured_input(nb, page_at, built_site):
    blobs, payload = _page_blobs(built_site, "embedding")
    cap, names = decode(blobs["capture"]), payload["data"]["names"]
    extra = msgpack.unpackb(blobs["extra"])
    page = nb.open_page(page_at, built_site, "embedding", viewport=(1400, 900))
    x, z = cap.get(names["input"])[0], cap.get(names["instance_norm"])[0]
    L = x.shape[-1]
    tip, shown, xh = _hover_plot(page, "#emb-input", _plot_js("emb-input"), 0.61 * (L - 1), 0)
    t = _nearest(np.arange(L), xh)
    assert shown and tip["x"] == f"time = {_clock(extra['t0'][0], t * extra['resample_s'], False)}", tip
    assert _close(_num(tip["aggregate"]), float(_watts(payload, "aggregate")(x[0, t])), 6e-6)
    tip, shown, xh = _hover_plot(page, "#emb-input", _plot_js("emb-input"), 0.2 * (L - 1), 2)
    t = _nearest(np.arange(L), xh)
    assert _close(_num(tip["aggregate"]), float(z[0, t]), 6e-6)
