"""Sites of imported upstream checkpoints (CondiNILM, the original NILMFormer; the small reference fixtures of
tests/fixtures/upstream) build with `nilmbuild site -c OUT.pt` alone, and every page built for the architecture
opens in the browser, becomes ready and logs no console error (page_at asserts that at teardown). The overview
names the architecture and the upstream file by name and sha256."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[1]
FIX = ROOT / "fixtures" / "upstream"
CASES = {"condinilm_small": "last.ckpt", "nilmformer_small": "NILMFormer_0.pt"}


def test_every_page_is_ready_without_console_errors(nb, page_at, upstream_site):
    site, slugs, _ = upstream_site
    assert {"index", "data", "disaggregation"} <= set(slugs)
    for slug in slugs:
        nb.open_page(page_at, site, slug)  # page_at asserts no console errors and no requests at teardown


@pytest.mark.parametrize("slug", ["attention", "forward", "film", "why"])
def test_new_pages_are_ready_without_error_on_a_phone(nb, page_at, upstream_site, slug):
    """The pages redraw on a width change and size their own canvases: at 390 px too, no error reaches the page."""
    site, _, _ = upstream_site
    page = nb.open_page(page_at, site, slug, viewport=(390, 844))
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    assert page.locator("#nb-error").is_hidden()


def test_overview_names_architecture_and_source_file(nb, page_at, upstream_site):
    site, _, name = upstream_site
    page = nb.open_page(page_at, site, "index")
    text = page.locator("body").text_content()
    src = FIX / name / CASES[name]
    assert ("CondiNILM" if name.startswith("condinilm") else "original NILMFormer") in text
    lead = page.locator(".nb-question").text_content()  # the lead names the architecture and the imported file
    assert f"imported from {src.name} (sha256 {hashlib.sha256(src.read_bytes()).hexdigest()[:12]})" in lead
    assert f"{src.name} (sha256 {hashlib.sha256(src.read_bytes()).hexdigest()})" in text
    assert str(FIX) not in text


# ---- the pages item 4 adds for upstream architectures: Attention, Forward, CondiNILM's FiLM ----------------------


def _capture(site: Path, slug: str):
    """The Python reader of a built page's capture blob (what the page's decode.js reads)."""
    from nilmbuild.capture.format import decode
    from nilmbuild.site.assets import read_blobs

    return decode(read_blobs((site / f"{slug}.html").read_text())["capture"])


def _model(name: str):
    sys.path.insert(0, str(ROOT))
    from test_upstream_models import _build

    return _build(name)[0].eval()


def _lut_steps(page, rgb, cmap: str, frac: float) -> int:
    """How many LUT entries (of 256) the pixel's colour is from the entry of `frac` (0..1) in the page's colormap."""
    lut = np.array(page.evaluate(f"Array.from(nilmbuild.test.colormaps.lut('{cmap}'))")).reshape(256, 4)[:, :3]
    hits = np.flatnonzero(np.abs(lut - np.array(rgb)).max(axis=1) <= 1)
    want = int(round(min(1.0, max(0.0, frac)) * 255))
    return int(np.abs(hits - want).min()) if hits.size else 256


def test_attention_shows_the_stats_token_and_the_models_weights(nb, page_at, upstream_site):
    import torch

    from nilmbuild.model import Trace
    from nilmbuild.model.names import INPUT, attn

    site, slugs, name = upstream_site
    assert "attention" in slugs
    page = nb.open_page(page_at, site, "attention", viewport=(1400, 900))
    model, reader = _model(name), _capture(site, "attention")
    cfg, T = model.cfg, model.cfg.window + 1
    l, h = cfg.n_encoder_layers - 1, cfg.n_head - 1  # the last layer and head: any count works
    page.select_option("#uat-layer", str(l))
    page.select_option("#uat-head", str(h))
    got = np.array(page.evaluate(f"Array.from(nilmbuild.test.headWeights({l}, {h}))")).reshape(T, T)
    with torch.no_grad():  # the model itself on the page's first window (its input record is stored f32)
        trace = Trace(keep=lambda n: n == attn(l, "weights"))
        model(torch.from_numpy(np.array(reader.get(INPUT)[:1])), trace=trace)
    want = trace[attn(l, "weights")].numpy()[0, h]
    assert got.shape == want.shape == (T, T)
    assert float(np.abs(got - want).max()) <= 2e-3  # the capture's bound on rebuilt weights (q, k in f16)
    assert abs(got[T - 1, 0] - want[T - 1, 0]) <= 2e-3 and got[T - 1, T - 1] == 0.0  # the stats token's row
    lay = page.evaluate("nilmbuild.test.layout()")
    b = lay["big"]
    x, y = b["x"] + (0.5 / T) * b["width"], b["y"] + ((T - 0.5) / T) * b["height"]  # row: stats token, key 0
    rgb = nb.canvas_pixel(page, "#uat-main", x, y)
    assert _lut_steps(page, rgb, "viridis", (np.log10(max(float(want[T - 1, 0]), 1e-30)) + 4) / 4) <= 1
    X, Y, r, c = nb.client_point(page, "#uat-main", b, 3, T - 1, T, T)  # query step 3 -> key: the stats token
    page.mouse.move(X, Y)
    assert (r, c) == (3, T - 1) and f"key stats token (token {T})" in page.locator("#nb-tooltip").text_content()
    text = page.locator("#uat-row-stats").text_content()  # the hovered query's weight on the stats token
    shown = float(text.split(f"on the stats token (token {T}): ", 1)[1].split(";", 1)[0].replace("−", "-"))
    assert abs(shown - float(want[3, T - 1])) <= 2e-3 + 1e-4 * abs(shown)


def test_forward_stages_follow_the_models_graph(nb, page_at, upstream_site):
    site, slugs, name = upstream_site
    assert "forward" in slugs
    page = nb.open_page(page_at, site, "forward", viewport=(1400, 900))
    model, reader = _model(name), _capture(site, "forward")
    cfg = model.cfg
    stages = page.evaluate("nilmbuild.test.page().data.stages")
    titles = [s["title"] for s in stages]
    layers = [t for t in titles if t.startswith("Encoder layer ")]
    assert layers == [f"Encoder layer {l}" for l in range(cfg.n_encoder_layers)]
    assert titles.index("Tokens") < titles.index("Encoder layer 0") < titles.index("Final LayerNorm")
    has_film = cfg.arch == "condinilm" and cfg.use_film
    assert ("Output FiLM" in titles) == has_film and ("Conv head" in titles) == (cfg.arch == "nilmformer")
    i = titles.index("Tokens")
    page.evaluate(f"nilmbuild.test.select({i})")
    zoom = page.evaluate("nilmbuild.test.zooms().map(z => ({rows: z.rows, cols: z.cols, box: z.box}))")[0]
    assert (zoom["rows"], zoom["cols"]) == (cfg.d_model, cfg.window + 1)  # features x tokens, time left to right
    tokens, stats = reader.get("tokens")[0], reader.get("stats_token")[0, 0]
    f = cfg.d_model - 1
    got = page.evaluate(f"nilmbuild.test.zooms()[0].value({f}, {cfg.window})")
    assert abs(got - float(tokens[cfg.window, f])) <= 1e-6  # the page's value is the captured token's
    assert abs(got - float(stats[f])) <= 1e-3 * max(1.0, abs(float(stats[f])))  # and that token is the stats token
    m = float(np.abs(tokens).max())
    b = zoom["box"]
    rgb = nb.canvas_pixel(page, "#uf-zoom", b["x"] + (cfg.window + 0.5) / (cfg.window + 1) * b["width"],
                          b["y"] + (f + 0.5) / cfg.d_model * b["height"])  # fmt: skip
    assert _lut_steps(page, rgb, "burd", (got + m) / (2 * m)) <= 1


def test_film_page_is_condinilms_film_or_says_it_has_none(nb, page_at, upstream_site):
    site, slugs, name = upstream_site
    page = nb.open_page(page_at, site, "film", viewport=(1400, 900))
    model = _model(name)
    if not model.cfg.arch == "condinilm":
        assert "has no FiLM" in page.locator("#nb-absent").text_content()
        return
    reader = _capture(site, "film")
    gamma, beta = reader.get("film_dec.gamma")[0], reader.get("film_dec.beta")[0]
    raw, film, power = (reader.get(n)[0] for n in ("head.power_raw", "head.power_film", "head.power"))
    for d in range(len(model.cfg.devices)):  # what the page draws, against (1 + gamma) power + beta, then ReLU
        got = np.array(page.evaluate(f"Array.from(nilmbuild.test.row('head.power_film', {d}))"))
        want = (1 + float(gamma[d])) * raw[d].astype(np.float64) + float(beta[d])
        assert float(np.abs(got - want).max()) <= 1e-5 * max(1.0, float(np.abs(want).max()))
        np.testing.assert_array_equal(power[d], np.maximum(film[d], 0))
    cell = page.locator("#ufm-dec tbody tr").nth(0).locator("td").nth(0).text_content()
    assert abs(float(cell.replace("−", "-")) - float(gamma[0])) <= 1e-4 * max(1.0, abs(float(gamma[0])))
    assert "sparse CNN" in page.locator("#ufm-dec").text_content()  # kettle: its output is the sparse CNN's


def test_deep_links_set_the_new_pages_state(nb, page_at, upstream_site):
    """A link with the page's state in its fragment opens the Attention page on that layer and head (the last ones,
    from the model's config) and the Forward page on that stage."""
    site, _, name = upstream_site
    cfg = _model(name).cfg
    l, h = cfg.n_encoder_layers - 1, cfg.n_head - 1
    page = page_at((site / "attention.html").as_uri() + f"#sample=1&layer={l}&head={h}", viewport=(1400, 900))
    nb.wait_ready(page)
    assert page.evaluate("[nilmbuild.test.state.layer, nilmbuild.test.state.head, nilmbuild.test.state.sample]") == [
        l,
        h,
        1,
    ]
    assert (page.input_value("#uat-layer"), page.input_value("#uat-head")) == (str(l), str(h))
    page = page_at((site / "forward.html").as_uri() + "#stage=5", viewport=(1400, 900))
    nb.wait_ready(page)
    assert page.evaluate("nilmbuild.test.state.stage") == 5
    assert page.locator("#uf-zoom-title").text_content().startswith("Stage 5: ")


RUN_WHATIF = """() => nilmbuild.test.whatIf.run().then(r => {
  const plain = o => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Array.from(v)]));
  return { x: r.x, base: plain(r.base), alt: plain(r.alt) };
})"""


def _watts(name: str, model, x: np.ndarray) -> np.ndarray:
    """What the live graph should give: the PyTorch model's output in watts (the fixture's NILMscaler, CondiNILM's
    evaluation clamp at 0)."""
    import torch
    from test_upstream_models import _build

    from nilmbuild.infer.postprocess import denormalise
    from nilmbuild.model.upstream import scalers_from_nilmscaler

    apps = scalers_from_nilmscaler(_build(name)[2])["appliances"]
    with torch.no_grad():
        p = model.eval()(torch.from_numpy(x)).power[0].numpy()
    w = np.stack([denormalise(p[i], apps[d]) for i, d in enumerate(model.cfg.devices)])
    return np.maximum(w, 0) if model.cfg.arch == "condinilm" else w


def _switched(page, name, model, switched, bound=0.05):
    """The page's live what-if against the PyTorch model as it is and `switched` (the same weights, switch applied),
    on the input the page built; the switch must change the answer."""
    res = page.evaluate(RUN_WHATIF)
    x = np.asarray(res["x"], np.float32).reshape(1, model.cfg.n_channels, model.cfg.window)
    base, alt = (np.stack([np.asarray(r[d]) for d in model.cfg.devices]) for r in (res["base"], res["alt"]))
    assert np.abs(base - _watts(name, model, x)).max() <= bound
    assert np.abs(alt - _watts(name, switched, x)).max() <= bound
    assert np.abs(alt - base).max() > bound


def test_live_what_if_diagonal_mask_off(nb, page_at, upstream_site):
    import copy
    import dataclasses

    site, _, name = upstream_site
    page = nb.open_page(page_at, site, "attention", viewport=(1400, 900))
    model = _model(name)
    unmasked = copy.deepcopy(model)
    unmasked.cfg = dataclasses.replace(unmasked.cfg, mask_diagonal=False)
    _switched(page, name, model, unmasked)
    page.check("#uwi-switch")  # the switch itself runs it and says what changed
    page.wait_for_selector("#uwi-status[data-done='true']", timeout=30000)
    assert "largest change" in page.locator("#uwi-status").text_content()
    start = page.evaluate("nilmbuild.test.page().data.whatif.starts[0]")  # the chart's x: that window's clock
    shown = [t for t in _plot_ticks(page, "nilmbuild.test.whatIf.plot()") if not t[2]]
    assert len(shown) >= 2 and all(text == _hhmm(start, round(x) * model.cfg.step_s) for x, text, _ in shown), shown


@pytest.mark.parametrize("upstream_site", ["condinilm_small"], indirect=True)  # the original has no FiLM
def test_live_what_if_film_off(nb, page_at, upstream_site):
    import copy

    import torch

    site, _, name = upstream_site
    page = nb.open_page(page_at, site, "film", viewport=(1400, 900))
    model = _model(name)
    identity = copy.deepcopy(model)  # gamma = beta = 0.5 tanh(0) = 0: both FiLMs the identity
    with torch.no_grad():
        for gen in (identity.encoder_film.gen, identity.decoder_film.gen):
            gen.fc2.weight.zero_()
            gen.fc2.bias.zero_()
    _switched(page, name, model, identity)


# ---- clock time on the upstream pages (issue 35 item 5): ticks read the capture's t0 + steps, in UTC ----------------


def _hhmm(t0, seconds: float) -> str:
    """What a clock tick reads (plot2d's clockText: HH:MM, the date MM-DD at midnight), from the capture's t0."""
    from datetime import datetime, timedelta

    t = datetime.fromisoformat(str(t0).replace("Z", "")) + timedelta(seconds=float(seconds))
    return t.strftime("%m-%d") if t.strftime("%H:%M") == "00:00" else t.strftime("%H:%M")


def _plot_ticks(page, plot_js: str) -> list:
    """A plot2d chart's x tick labels under its last lane: [(data x under the label's centre, text, nudged)]."""
    return page.evaluate(
        f"""(() => {{ const p = {plot_js}, L = p.layout, last = L.lanes[L.lanes.length - 1], yb = last.y + last.height;
        return p.labels.filter(a => a.y0 > yb && a.y1 < yb + 22)
          .map(a => [p.pxToX((a.x0 + a.x1) / 2), a.text, a.x0 < 2 || a.x1 > L.W - 2]); }})()"""
    )


def test_attention_and_forward_axes_read_clock_time(nb, page_at, upstream_site):
    """The attention map's ticks, the query row's and the stats-token chart's x ticks, the Forward page's time
    columns: a tick at step s of window i reads t0[i] + s steps (UTC); the stats token keeps its own label."""
    site, _, name = upstream_site
    cfg, reader = _model(name).cfg, _capture(site, "attention")
    T, i = cfg.window + 1, 1
    t0 = reader.meta["t0"][i]
    page = nb.open_page(page_at, site, "attention", viewport=(1400, 900))
    page.select_option("#uat-sample", str(i))
    lay = page.evaluate("nilmbuild.test.layout()")
    b, ticks = lay["big"], lay["ticks"]
    assert len(ticks) >= 2
    for tk in ticks:  # the label's position on the map gives its step; its text the clock time of that step
        step = (tk["x"] - b["x"]) / b["width"] * T - 0.5
        assert abs(step - round(step)) < 1e-6 and tk["label"] == _hhmm(t0, round(step) * cfg.step_s), tk
    for plot in ("nilmbuild.test.state.rowPlot", "nilmbuild.test.state.statsPlot"):
        shown = [t for t in _plot_ticks(page, plot) if not t[2]]
        assert len(shown) >= 2, (plot, shown)
        for x, text, _ in shown:
            assert abs(x - round(x)) < 0.6 and text == _hhmm(t0, round(x) * cfg.step_s), (plot, x, text)
    X, Y, r, c = nb.client_point(page, "#uat-main", b, T - 1, 5, T, T)  # the stats token's row, key step 5
    page.mouse.move(X, Y)
    tip = page.locator("#nb-tooltip").text_content()
    assert f"query stats token (token {T})" in tip and f"key {_hhmm(t0, 5 * cfg.step_s)} UTC (step 5)" in tip, tip
    t0 = _capture(site, "forward").meta["t0"][i]  # the Forward page's own windows
    page = nb.open_page(page_at, site, "forward", viewport=(1400, 900))
    page.locator("#nb-controls select").first.select_option(str(i))  # the Window control
    tokens = page.evaluate("nilmbuild.test.page().data.stages.findIndex(s => s.title === 'Tokens')")
    page.evaluate(f"nilmbuild.test.select({tokens})")
    z = page.evaluate("nilmbuild.test.zooms().map(z => ({box: z.box, cols: z.cols, ticks: z.ticks}))")[0]
    assert z["cols"] == T and len(z["ticks"]) >= 2
    for tk in z["ticks"]:
        step = (tk["x"] - z["box"]["x"]) / z["box"]["width"] * T - 0.5
        assert abs(step - round(step)) < 1e-6 and tk["label"] == _hhmm(t0, round(step) * cfg.step_s), tk


# ---- computed findings and presets on the upstream pages (nilmbuild/site/upstream_story.py) -------------------------


@pytest.mark.parametrize("slug", ["attention", "embedding", "film", "forward", "gate"])
def test_findings_sit_on_their_figures_and_presets_set_the_state(nb, page_at, upstream_site, slug):
    """Each finding is placed just above its figure; its "Show me" link (and each "Try this" preset) puts the page
    in the state the preset names (page state keys: sample, window, layer, head, stage)."""
    site, _, _ = upstream_site
    page = nb.open_page(page_at, site, slug, viewport=(1400, 900))
    story = page.evaluate("nilmbuild.test.page().data.story") or {"findings": [], "presets": []}
    if not story["findings"]:
        assert page.locator("#nb-absent").count() == 1  # only a model without the component has none
        return
    assert page.locator(".nb-finding").count() == len(story["findings"])
    for f in story["findings"]:
        anchor = page.locator(f".nb-finding-anchor[data-target='{f['target']}']")
        assert f["text"] in anchor.text_content()
        above = page.evaluate(f"document.querySelector({f['target']!r}).previousElementSibling.dataset.target")
        assert above == f["target"]  # the callout sits right above its figure
    for i, p in enumerate(story["presets"]):
        page.locator(".nb-preset").nth(i).click()
        want = {k: int(v) for k, v in (kv.split("=") for kv in p["hash"].split("&"))}
        page.wait_for_function(
            "want => Object.entries(want).every(([k, v]) => nilmbuild.test.state[k] === v)", arg=want, timeout=5000
        )


def test_head_ablation_matrix_is_the_models_knock_outs(nb, page_at, upstream_site):
    """Which heads serve which device: each cell against the PyTorch model with that head's columns of W_o zeroed
    (the same as zeroing its context), on the windows the capture names, in watts clamped at 0; a click opens the
    head on the window where the change is largest."""
    import copy

    import torch
    from test_upstream_models import _build

    from nilmbuild.infer.postprocess import denormalise
    from nilmbuild.model.names import INPUT
    from nilmbuild.model.upstream import scalers_from_nilmscaler

    site, _, name = upstream_site
    page = nb.open_page(page_at, site, "attention", viewport=(1400, 900))
    data, reader = page.evaluate("nilmbuild.test.page().data"), _capture(site, "attention")
    windows = data["head_ablation"]["samples"]
    x = torch.from_numpy(np.stack([reader.get(INPUT)[data["samples"].index(s)] for s in windows]))
    model, apps = _model(name), scalers_from_nilmscaler(_build(name)[2])["appliances"]

    def watts(m):
        with torch.no_grad():
            p = m(x).power.numpy()
        return np.stack([np.clip(denormalise(p[:, i], apps[d]), 0, None) for i, d in enumerate(m.cfg.devices)], 1)

    base, cfg = watts(model), model.cfg
    m = page.evaluate(
        "(() => { const m = nilmbuild.test.headMatrix.matrix; return {...m, data: Array.from(m.data)}; })()"
    )
    got = np.array(m["data"]).reshape(cfg.n_encoder_layers, cfg.n_head, len(cfg.devices))
    E = cfg.head_dim
    for l in range(cfg.n_encoder_layers):
        for h in range(cfg.n_head):
            knocked = copy.deepcopy(model)
            with torch.no_grad():
                knocked.encoder_layers[l].attn.wo.weight[:, h * E : (h + 1) * E] = 0
            want = np.abs(watts(knocked) - base).mean(axis=(0, 2))  # over the windows and the steps: (devices,)
            np.testing.assert_allclose(got[l, h], want, rtol=1e-3, atol=1e-3, err_msg=f"layer {l}, head {h}")
    l, h, d = np.unravel_index(int(np.argmax(got)), got.shape)
    page.evaluate(f"nilmbuild.test.headMatrix.cell({l * cfg.n_head + h}, {d})")  # the cell exists
    page.locator("#uat-heads").scroll_into_view_if_needed()
    box = page.evaluate("nilmbuild.test.headMatrix.box()")
    X, Y, r, c = nb.client_point(page, "#uat-heads", box, l * cfg.n_head + h, d, cfg.n_encoder_layers * cfg.n_head,
                                 len(cfg.devices))  # fmt: skip
    page.mouse.click(X, Y)
    sample = page.evaluate(f"nilmbuild.test.headMatrix.cell({r}, {c}).sample")
    state = page.evaluate("nilmbuild.test.state")
    assert (state["layer"], state["head"], data["samples"][state["sample"]]) == (
        r // cfg.n_head,
        r % cfg.n_head,
        sample,
    )
    assert "zeroing it changes" in page.locator("#uat-heads-readout").text_content()


def test_embedding_maps_read_clock_time(nb, page_at, upstream_site):
    """The DilatedBlock, time-projection and token maps: a tick at step s of window i reads that window's start (the
    view's label, from the capture's t0) + s steps, in UTC, at the centre of column s; the tokens map names its last
    column, the stats token."""
    from datetime import datetime

    site, _, name = upstream_site
    cfg, i = _model(name).cfg, 1
    page = nb.open_page(page_at, site, "embedding", viewport=(1400, 900))
    page.select_option("#ue-window", str(i))
    t0 = datetime.strptime(page.evaluate(f"nilmbuild.test.page().data.labels[{i}]"), "%Y-%m-%d %H:%M UTC").isoformat()
    for key, cols in (("stem", cfg.window), ("time", cfg.window), ("tokens", cfg.window + 1)):
        hm = page.evaluate(f"(() => {{ const m = nilmbuild.test.state.maps.{key}; return {{box: m.box, cols: m.cols, "
                           "ticks: m.ticks}; })()")  # fmt: skip
        assert hm["cols"] == cols and len(hm["ticks"]) >= 2, (key, hm)
        for tk in hm["ticks"]:
            step = (tk["x"] - hm["box"]["x"]) / hm["box"]["width"] * cols - 0.5
            assert abs(step - round(step)) < 1e-6 and tk["label"] == _hhmm(t0, round(step) * cfg.step_s), (key, tk)
            assert round(step) < cfg.window  # never under the stats token's column
