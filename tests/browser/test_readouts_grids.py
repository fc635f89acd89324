"""The grid, network and what-if readouts against the tensors (issue 35, item 1), and time axes in clock time (item 2).

As in test_readouts.py: the pointer goes to a known cell of a grid (its box as the page drew it), and the tooltip must
name that cell (row, column, its clock time) and carry the value Python reads from the page's own blobs
(nilmbuild.capture.format.decode), or, for what the page computes live (the FiLM sliders, the what-if panel's model
run), the value Python computes the same way (numpy in float64, the PyTorch model). Tick labels of every time axis
over a window are that window's start + the step's offset, in UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgpack
import numpy as np
import pytest

from nilmbuild.capture.format import decode
from tests.browser.test_readouts import _close, _hover_plot, _nearest, _num, _page_blobs, _plot_js, _watts


def _clock(start_iso, seconds):
    t = datetime.fromisoformat(str(start_iso).replace("Z", "")).replace(tzinfo=UTC) + timedelta(seconds=float(seconds))
    return t.strftime("%H:%M") + " UTC"


def _fmt(page, v, digits):
    return page.evaluate(f"v => nilmbuild.test.fmt(v, {digits})", float(v))


def _hover_cell(nb, page, selector, hm, r, c):
    """Move the pointer into cell (r, c) of heatmap `hm` ({box, rows, cols}) drawn on `selector`; -> the tooltip's text
    and the cell the pointer is in (computed here from the pixel)."""
    page.locator(selector).scroll_into_view_if_needed()
    nb.flush(page)  # a view redrawn when on screen (core.onScreen) is current before the pointer reads it
    x, y, rr, cc = nb.client_point(page, selector, hm["box"], r, c, hm["rows"], hm["cols"])
    page.mouse.move(x, y)
    tip = page.locator("#nb-tooltip")
    assert tip.is_visible()
    return tip.text_content(), rr, cc


def _grids(page, js):
    return page.evaluate(f"({js}).map(h => ({{box: h.box, rows: h.rows, cols: h.cols}}))")


# ---------------------------------------------------------------- FiLM
@pytest.fixture(scope="module")
def film_data(built_site):
    blobs, payload = _page_blobs(built_site, "film")
    return decode(blobs["capture"]), msgpack.unpackb(blobs["extra"]), payload


def test_film_gamma_beta_grid_readout_is_the_captured_parameter(nb, page_at, built_site, film_data):
    """Every cell of the γ/β grids names its layer, device (or the device mean) and feature, with that captured value;
    the device embeddings name their device and dimension. On a second sample the values follow it."""
    cap, extra, payload = film_data
    N, devs = payload["data"]["names"], [d.replace("_", " ") for d in extra["devices"]]
    page = nb.open_page(page_at, built_site, "film", viewport=(1400, 900))
    grids = _grids(page, "nilmbuild.test.paramHeatmaps()")
    defs = page.evaluate("nilmbuild.test.paramHeatmaps().map(h => h.def)")
    D = len(devs)
    for i in sorted({0, len(extra["samples"]) - 1}):
        page.select_option("#ctl-sample", str(i))
        gamma, beta = cap.get(N["film_enc"]["gamma"])[i], cap.get(N["film_enc"]["beta"])[i]  # (D, layers, F)
        means = {"gamma": cap.get(N["film_enc"]["gamma_mean"])[i], "beta": cap.get(N["film_enc"]["beta_mean"])[i]}
        for k, d in enumerate(defs):
            hm = grids[k]
            r, c = (hm["rows"] - 1, hm["cols"] - 2) if k % 3 == 0 else (min(k % hm["rows"], hm["rows"] - 1), 3 + k)
            text, r, c = _hover_cell(nb, page, "#film-params", hm, r, c)
            if d["kind"] == "embed":
                want = cap.get(d["name"])[r, c]
                assert text == f"{d['name']}\n{devs[r]}, dim {c}: {_fmt(page, want, 6)}", (k, text)
                continue
            sym = "γ" if d["which"] == "gamma" else "β"
            if r < D:
                want, who = (gamma if d["which"] == "gamma" else beta)[r, d["layer"], c], devs[r]
            else:
                want, who = means[d["which"]][d["layer"], c], "device mean"
            assert text == f"{sym} layer {d['layer']}, {who}, feature {c}\n{_fmt(page, want, 6)}", (i, k, text)


def test_film_live_grid_readout_is_the_capture_then_the_sliders_in_numpy(nb, page_at, built_site, film_data):
    """The live grids: left the captured FFN output, right (1 + γ')·x + β' at the cell's time (clock time). At rest
    the right grid is the captured FiLM output; with γ scale 2 and β offset -0.3 it is numpy's float64 value, rounded
    once to float32."""
    cap, extra, payload = film_data
    N = payload["data"]["names"]
    page = nb.open_page(page_at, built_site, "film", viewport=(1400, 900))
    layer = page.evaluate("nilmbuild.test.page().data.names.ffn_out.length") - 1
    page.select_option("#ctl-layer", str(layer))
    nb.flush(page)
    x = cap.get(N["ffn_out"][layer])[0]  # (L, F)
    film = cap.get(N["film"][layer])[0]
    g = cap.get(N["film_enc"]["gamma_mean"])[0][layer]
    b = cap.get(N["film_enc"]["beta_mean"])[0][layer]
    L, F = x.shape
    grids = _grids(page, "nilmbuild.test.liveHeatmaps")
    for side, (f, t) in enumerate(((F - 3, int(0.7 * L)), (5, int(0.2 * L)))):
        text, f, t = _hover_cell(nb, page, "#film-live", grids[side], f, t)
        want = x[t, f] if side == 0 else film[t, f]
        title = N["ffn_out"][layer] if side == 0 else "(1 + γ′)·ffn_out + β′"
        assert text == f"{title}\nfeature {f}, {_clock(extra['t0'][0], t * extra['resample_s'])}: {_fmt(page, want, 6)}"
    page.locator("#ctl-gscale").fill("2")
    page.locator("#ctl-boffset").fill("-0.3")
    text, f, t = _hover_cell(nb, page, "#film-live", grids[1], 7, int(0.55 * L))
    want = np.float32((1.0 + np.float64(g[f]) * 2.0) * np.float64(x[t, f]) + (np.float64(b[f]) - 0.3))
    assert want != film[t, f]
    assert text.endswith(f": {_fmt(page, want, 6)}"), (text, want)
    rd = page.locator("#film-readout dd[data-key=recomputed]").get_attribute("data-value")
    assert float(rd) == float(want)  # the readout beside it follows the hovered cell
    cell = page.locator("#film-readout dd[data-key=cell]").text_content()
    assert cell == f"L{layer}, f {f}, {_clock(extra['t0'][0], t * extra['resample_s'])}"


def test_film_network_readout_is_each_captured_activation(nb, page_at, built_site, film_data):
    """The FiLM network chart (both MLPs): a cell's tooltip names its vector and index with that captured value, for
    the last device (a device-index mix-up shows)."""
    cap, extra, payload = film_data
    N = payload["data"]["names"]
    D = len(extra["devices"])
    page = nb.open_page(page_at, built_site, "film", viewport=(1400, 900))
    page.select_option("#ctl-device", str(D - 1))
    page.locator("#film-mlp").scroll_into_view_if_needed()
    cells = page.evaluate("nilmbuild.test.mlpCells().map(c => ({x: c.x, y: c.y, w: c.w, h: c.h, label: c.label}))")
    enc, dec = N["film_enc"], N["film_dec"]

    def want(label):
        vec, idx = label.rsplit("[", 1)
        k = int(idx[:-1])
        for gen in (enc, dec):  # each MLP's input: the condition features, then the device embedding
            n_cond = cap.record(gen["input"])["shape"][2] - cap.record(gen["device_embed"])["shape"][1]
            if vec == f"{gen['input']} cond":
                return cap.get(gen["input"])[0, D - 1, k]
            if vec == f"{gen['input']} embed":
                return cap.get(gen["input"])[0, D - 1, n_cond + k]
            if vec == gen["hidden"]:
                return cap.get(vec)[0, D - 1, k]
        if vec.startswith(("γ layer ", "β layer ")):
            rec = enc["gamma"] if vec[0] == "γ" else enc["beta"]
            return cap.get(rec)[0, D - 1, int(vec.split()[-1]), k]
        assert vec == "(γ_dec, β_dec)", vec
        return cap.get(dec["gamma"] if k == 0 else dec["beta"])[0, D - 1]

    picks = {}
    for c in cells:  # one cell of each vector, away from its ends
        vec = c["label"].rsplit("[", 1)[0]
        picks.setdefault(vec, []).append(c)
    cb = page.locator("#film-mlp").bounding_box()
    assert len(picks) >= 6, list(picks)
    for vec, cs in picks.items():
        c = cs[len(cs) * 2 // 3]
        page.mouse.move(cb["x"] + c["x"] + c["w"] / 2, cb["y"] + c["y"] + c["h"] / 2)
        text = page.locator("#nb-tooltip").text_content()
        assert text == f"{c['label']} = {_fmt(page, want(c['label']), 6)}", (text, vec)


# ---------------------------------------------------------------- Embedding
def test_embedding_feature_map_readout_is_the_captured_map(nb, page_at, built_site):
    blobs, payload = _page_blobs(built_site, "embedding")
    cap, extra = decode(blobs["capture"]), msgpack.unpackb(blobs["extra"])
    page = nb.open_page(page_at, built_site, "embedding", viewport=(1400, 900))
    i = len(extra["samples"]) - 1
    page.select_option("#ctl-sample", str(i))
    grids = _grids(page, "nilmbuild.test.heatmaps")
    names = page.evaluate("nilmbuild.test.heatmaps.map(h => h.def.name)")
    for k, name in enumerate(names):
        hm = grids[k]
        text, r, c = _hover_cell(
            nb, page, "#emb-maps", hm, hm["rows"] - 1 - k % hm["rows"], int((0.1 + 0.13 * k) * hm["cols"])
        )
        rec = cap.record(name)
        batched = rec["axes"][0] == "batch"
        v = cap.get(name)[i, r, c] if batched else cap.get(name)[r, c]
        axis = rec["axes"][1 if batched else 0]
        t = _clock(extra["t0"][i], c * extra["resample_s"])
        assert text == f"{name}\n{axis} {r}, time {t}\nvalue {_fmt(page, v, 6)}", (k, text)
        hovered = page.locator("#emb-readout dd[data-key=hovered]").text_content()
        assert hovered == f"{name}[{r}, {c}] = {_fmt(page, v, 6)}"


def test_embedding_map_ticks_are_the_windows_clock(nb, page_at, built_site):
    blobs, _ = _page_blobs(built_site, "embedding")
    extra = msgpack.unpackb(blobs["extra"])
    page = nb.open_page(page_at, built_site, "embedding", viewport=(1400, 900))
    page.select_option("#ctl-sample", "1")
    ticks = page.evaluate("nilmbuild.test.mapTicks()")
    assert len(ticks) >= 2
    for tk in ticks:
        assert tk["label"] + " UTC" == _clock(extra["t0"][1], tk["step"] * extra["resample_s"])


# ---------------------------------------------------------------- Attention: the head-ablation matrix
def test_head_ablation_matrix_hover_readout(nb, page_at, built_site):
    blobs, _ = _page_blobs(built_site, "attention")
    cap = decode(blobs["capture"])
    page = nb.open_page(page_at, built_site, "attention", viewport=(1400, 900))
    nb.flush(page)
    names = page.evaluate("nilmbuild.test.page().data.names")
    delta, sample = cap.get(names["head_delta"]), cap.get(names["head_sample"])
    Ly, H, D = delta.shape
    devs = [d.replace("_", " ") for d in cap.meta["devices"]]
    hm = page.evaluate(
        "(() => { const m = nilmbuild.test.headMatrix; return {box: m.box(), rows: m.heatmap.rows, cols: m.heatmap.cols}; })()"
    )
    assert (hm["rows"], hm["cols"]) == (Ly * H, D)
    l, h, d = np.unravel_index(int(np.argmax(delta)), delta.shape)
    for ll, hh, dd in ((l, h, d), (Ly - 1, 0, D - 1), (0, H - 1, 0)):
        text, r, c = _hover_cell(nb, page, "#att-heads", hm, ll * H + hh, dd)
        ll, hh, dd = r // H, r % H, c
        want = (
            f"layer {ll}, head {hh} zeroed\n{devs[dd]}: mean |Δ| = {_fmt(page, delta[ll, hh, dd], 4)} W\n"
            f"largest on batch sample {int(sample[ll, hh, dd])} (click to open)"
        )
        assert text == want


# ---------------------------------------------------------------- Clock-time axes
def _x_tick_labels(page, plot_js):
    """The x tick labels of a plot2d chart: [(data x under the label's centre, text, nudged)] (the labels under the
    last lane; nudged: moved inside the canvas at its edge, so not centred on its step)."""
    return page.evaluate(
        f"""(() => {{ const p = {plot_js}, L = p.layout, last = L.lanes[L.lanes.length - 1], yb = last.y + last.height;
        return p.labels.filter(a => a.y0 > yb && a.y1 < yb + 22)
          .map(a => [p.pxToX((a.x0 + a.x1) / 2), a.text, a.x0 < 2 || a.x1 > L.W - 2]); }})()"""
    )


def _tick_text(start_iso, seconds):
    """What a clock tick reads: HH:MM, or the date (MM-DD) at midnight (plot2d's xTickText)."""
    t = datetime.fromisoformat(str(start_iso).replace("Z", "")) + timedelta(seconds=float(seconds))
    return t.strftime("%m-%d") if t.strftime("%H:%M") == "00:00" else t.strftime("%H:%M")


@pytest.mark.parametrize(
    ("slug", "plot_js", "sample"),
    [
        ("gate", "nilmbuild.test.plot()", 1),
        ("film", _plot_js("film-ablation"), 1),
        ("film", _plot_js("film-live-plot"), 0),
        ("embedding", _plot_js("emb-input"), 1),
    ],
)
def test_time_axis_ticks_are_the_window_start_plus_the_offset(nb, page_at, built_site, slug, plot_js, sample):
    """A tick at step s of sample i's window reads t0[i] + s steps, in UTC (and the readout's time likewise)."""
    blobs, _ = _page_blobs(built_site, slug)
    extra = msgpack.unpackb(blobs["extra"])
    page = nb.open_page(page_at, built_site, slug, viewport=(1400, 900))
    page.select_option("#ctl-sample", str(sample))
    nb.flush(page)
    page.locator(f"#{page.evaluate(f'({plot_js}).canvas.id')}").scroll_into_view_if_needed()
    ticks = [t for t in _x_tick_labels(page, plot_js) if not t[2]]
    assert len(ticks) >= 3, ticks
    for x, text, _ in ticks:
        step = round(x)
        assert abs(x - step) < 0.6, (x, text)  # a label centred on a whole step (a clock tick)...
        assert text == _tick_text(extra["t0"][sample], step * extra["resample_s"]), (x, text)  # ... reading its time
    tip, shown, xh = _hover_plot(page, f"#{page.evaluate(f'({plot_js}).canvas.id')}", plot_js, 40, 0)
    assert shown and tip["x"] == f"time = {_clock(extra['t0'][sample], round(xh) * extra['resample_s'])}", tip


def test_disaggregation_ticks_and_readout_in_clock_time(nb, page_at, built_site):
    blobs, payload = _page_blobs(built_site, "disaggregation")
    cap = decode(blobs["capture"])
    step_s = payload["model"]["step_minutes"] * 60
    page = nb.open_page(page_at, built_site, "disaggregation", viewport=(1400, 900))
    page.select_option("#sample", "1")
    ticks = page.evaluate("nilmbuild.test.view().xTicks")
    assert len(ticks) >= 3
    for tk in ticks:
        assert tk["label"] + " UTC" == _clock(cap.meta["t0"][1], tk["step"] * step_s)
    page.locator("#lanes").focus()
    for key in ["ArrowRight"] * 7:
        page.keyboard.press(key)
    assert page.locator("#readout").text_content().startswith(f"time = {_clock(cap.meta['t0'][1], 7 * step_s)} · ")


# ---------------------------------------------------------------- What-if charts (the live model)
RUN_TIMEOUT = 180_000


def test_whatif_chart_readout_is_the_capture_and_the_live_run(nb, page_at, built_site, site_context):
    """The what-if chart on the Gate page: at a step of a device's lane the readout gives the captured watts (Python's
    reader and the page's scaler) and the live run's watts, which equal PyTorch's within the panel's bound; its time is
    the window's clock time."""
    from nilmbuild.site.views.live_parts import watts_bounds
    from tests.browser.test_whatif import torch_watts, wait_runs

    blobs, payload = _page_blobs(built_site, "gate")
    extra = msgpack.unpackb(blobs["extra"])
    data = payload["data"]["whatif"]
    page = nb.open_page(page_at, built_site, "gate", viewport=(1400, 900))
    page.locator("#whatif-panel").scroll_into_view_if_needed()
    wait_runs(page, 1)
    devs = extra["devices"]
    b = extra["samples"][0]
    want_live, gate = torch_watts(site_context, b)
    power = decode(blobs["capture"]).get(data["power"])[0]  # (D, L): the captured run the panel compares with
    bounds = watts_bounds(site_context.loaded)
    L = power.shape[-1]
    thr = [d.gate_threshold for d in site_context.loaded.cfg.devices]
    for k in (0, len(devs) - 1):
        tip, shown, xh = _hover_plot(page, "#whatif-plot", _plot_js("whatif-plot"), 0.43 * (L - 1), k)
        t = _nearest(np.arange(L), xh)
        assert shown and tip["x"] == f"time = {_clock(data['starts'][0], t * data['live']['stepS'])}", tip
        captured = float(_watts(payload, devs[k])(power[k, t]))
        assert _close(_num(tip["captured"]), captured, 6e-6), (tip, captured)
        live = _num(tip["live, these settings"])
        if abs(gate[k, t] - thr[k]) >= 1e-4:
            assert abs(live - float(want_live[k, t])) <= bounds[devs[k]], (devs[k], t, live, want_live[k, t])
        shown_live = page.evaluate(f"nilmbuild.test.whatif.state.last.watts[{devs[k]!r}][{t}]")
        assert _num(tip["live, these settings"]) == float(_fmt(page, shown_live, 6).replace("−", "-"))


# ---------------------------------------------------------------- Forward: the 3D faces' colour scales
def _face_scale(v: np.ndarray, most: int = 128) -> float:
    """A block face's colour scale, computed here from the captured matrix: box-average to at most `most` cells a
    side, every n-th |mean| (at most 4096 of them, as float32), their 98th percentile."""
    R, C = v.shape
    tr, tc = min(R, most), min(C, most)
    m = np.empty((tr, tc))
    for r in range(tr):
        r0 = r * R // tr
        r1 = max(r0 + 1, (r + 1) * R // tr)
        for c in range(tc):
            c0 = c * C // tc
            c1 = max(c0 + 1, (c + 1) * C // tc)
            m[r, c] = v[r0:r1, c0:c1].astype(np.float64).mean()
    flat = m.ravel()
    a = np.sort(np.abs(flat[:: max(1, flat.size // 4096)]).astype(np.float32))
    q = a[min(a.size - 1, int(0.98 * a.size))]
    return float(q if q > 0 else (a[-1] or 1))


def test_forward_faces_say_their_own_scale(nb, page_at, built_site):
    """The 3D blocks' faces are each coloured on their own scale: the legend says so and gives each face's range,
    and an exact stage's range is the one computed here from the captured tensor (for the selected sample)."""
    blobs, payload = _page_blobs(built_site, "forward")
    cap = decode(blobs["capture"])
    stages = payload["data"]["stages"]
    page = nb.open_page(page_at, built_site, "forward", viewport=(1400, 900))
    text = page.locator("#fwd-face-text").text_content()
    assert "each on its own colour scale" in text
    for i in (0, len(payload["data"]["samples"]) - 1):
        page.select_option("#fwd-sample", str(i))
        text = page.locator("#fwd-face-text").text_content()
        for st in stages:
            if st.get("binned") or len(st["records"]) != 1:
                continue
            rec = cap.get(st["records"][0])[i]
            v = rec.reshape(1, -1) if rec.ndim == 1 else rec.reshape(-1, rec.shape[-1])
            want = f"{st['stage']} {st.get('short') or st['title']} ±{_fmt(page, _face_scale(v), 3)}"
            assert want in text, (want, text)
