"""What-ifs that reach the answer (issue 11 item 4): on the Gate, FiLM and Attention pages the what-if panel runs the
live model (onnxruntime-web in a worker, the graph from the shared nilmbuild-model.js) on the selected window with
the page's settings, down to the final per-device watts.

At rest the panel's live watts equal the captured output.power within max(2 W, 1 % of the device's peak) (steps
whose gate probability sits within 1e-4 of the threshold left out); moving a setting changes them exactly as the
PyTorch model with the same what-if does; the switches that have a captured ablation run (FiLM off, mask off, soft
gate) reproduce that run. No page makes a network request (page_at asserts it at teardown, and the tests here).

"Your signal" (item 5): the Playground keeps its current edit in localStorage; the Attention page's source switch and
the Disaggregation page's view select run the live model on it and draw that instead of the captured batch.

The site here is those pages alone, built by their real views.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nilmbuild.data.preprocess import scaler_affine
from nilmbuild.model.whatif import WhatIf
from nilmbuild.site.views.live_parts import watts_bounds

RUN_TIMEOUT = 180_000  # the first run loads the runtime and the model files and starts the session


@pytest.fixture(scope="module")
def site(tmp_path_factory, site_context):
    from nilmbuild.site.pages import build_all

    out = tmp_path_factory.mktemp("whatif") / "site"
    build_all(site_context, out, build_only={"film", "gate", "attention", "playground", "disaggregation"})
    return out


def open_panel(nb, page_at, site, slug):
    page = nb.open_page(page_at, site, slug)
    page.locator("#whatif-panel").scroll_into_view_if_needed()
    wait_runs(page, 1)
    return page


def wait_runs(page, n):
    page.wait_for_function(
        f"(() => {{ const p = document.getElementById('whatif-panel'); return p.dataset.state === 'error' || "
        f"(p.dataset.state === 'done' && Number(p.dataset.runs) >= {n}); }})()",
        timeout=RUN_TIMEOUT,
    )
    assert page.locator("#whatif-panel").get_attribute("data-state") == "done", page.locator(
        "#whatif-status"
    ).text_content()


def last(page) -> dict:
    """The panel's last run: live and captured watts per device, and the settings it ran with."""
    return page.evaluate(
        """(() => { const l = nilmbuild.test.whatif.state.last, o = {live: {}, captured: {}, sample: l.settings.sample};
        for (const d in l.watts) { o.live[d] = Array.from(l.watts[d]); o.captured[d] = Array.from(l.captured[d]); }
        o.rows = l.rows; o.reference = l.reference.record; return o; })()"""
    )


def torch_watts(ctx, batch_index, **what_if) -> tuple[np.ndarray, np.ndarray]:
    """The PyTorch model's final watts (D, W) and gate probabilities on the batch sample, with a what-if."""
    loaded = ctx.loaded
    wi = WhatIf.defaults(loaded.cfg).replace(**what_if)
    x = torch.from_numpy(np.asarray(ctx.x[batch_index : batch_index + 1], np.float32))
    with torch.no_grad():
        out = loaded.model.eval()(x, gate_mode="hard", what_if=wi)
    aff = [scaler_affine(loaded.scalers["appliances"][d]) for d in loaded.devices]
    w = np.stack([out.power[0, i].numpy() * a + b for i, (a, b) in enumerate(aff)])
    return w, out.gate[0].numpy()


def assert_close(ctx, live: dict, want: np.ndarray, gate: np.ndarray, thresholds):
    bounds = watts_bounds(ctx.loaded)
    for i, d in enumerate(ctx.loaded.devices):
        near = np.abs(gate[i] - thresholds[i]) < 1e-4
        assert near.sum() <= 2, d
        err = np.where(near, 0, np.abs(np.asarray(live[d], np.float32) - want[i]))
        assert err.max() <= bounds[d], (d, float(err.max()), bounds[d])


def captured_watts(ctx, record, batch_index) -> np.ndarray:
    rec = ctx.capture.records[record]
    z = rec.tensor[rec.rows().index(batch_index)]  # a partial record (a run on some samples) holds fewer rows
    return np.stack(
        [
            z[i] * a + b
            for i, (a, b) in enumerate(scaler_affine(ctx.loaded.scalers["appliances"][d]) for d in ctx.loaded.devices)
        ]
    )


def at_rest(ctx, page, samples_js: str):
    """The panel's first run, at the checkpoint's own settings, equals the captured output.power within the
    bound -> (run, batch index, thresholds). samples_js: where the page keeps its samples' batch indices."""
    r = last(page)
    b = page.evaluate(samples_js)[r["sample"]]
    thr = [d.gate_threshold for d in ctx.loaded.cfg.devices]
    _, gate = torch_watts(ctx, b)
    assert_close(ctx, r["live"], captured_watts(ctx, "output.power", b), gate, thr)
    return r, b, thr


def ablation_run(ctx, page, b, thr, runs: int, ablation: str, **switch):
    """After a switch that has a captured ablation run: the panel's run number `runs` compares with that run and
    equals it within the bound (gates from PyTorch with the same switch) -> the run."""
    wait_runs(page, runs)
    r = last(page)
    assert r["reference"] == f"ablation.{ablation}.output.power"
    _, gate = torch_watts(ctx, b, **switch)
    assert_close(ctx, r["live"], captured_watts(ctx, r["reference"], b), gate, thr)
    return r


def largest_change(live_a: dict, live_b: dict) -> float:
    """Largest |a - b| in watts over every device and step of two runs' live outputs."""
    return max(np.abs(np.asarray(live_a[d]) - np.asarray(live_b[d])).max() for d in live_a)


def test_gate_at_rest_equals_the_capture_and_the_threshold_moves_the_answer(nb, page_at, site, site_context):
    ctx = site_context
    page = open_panel(nb, page_at, site, "gate")
    r, b, thr = at_rest(ctx, page, "nilmbuild.test.extra.samples")
    assert all(row["within"] for row in r["rows"])
    assert page.locator("#whatif-panel").get_attribute("data-within") == "true"

    # the selected device's threshold to 0.05: its gate opens wherever p > 0.05
    dev = page.evaluate("nilmbuild.test.state.dev")
    page.evaluate(
        "v => { const s = document.getElementById('ctl-threshold'); s.value = v; s.dispatchEvent(new Event('input', {bubbles: true})); }",
        "0.05",
    )
    wait_runs(page, 2)
    r2 = last(page)
    thr2 = list(thr)
    thr2[dev] = 0.05
    want2, gate2 = torch_watts(ctx, b, thresholds=thr2)
    assert_close(ctx, r2["live"], want2, gate2, thr2)
    name = ctx.loaded.devices[dev]
    assert np.abs(np.asarray(r2["live"][name]) - np.asarray(r["live"][name])).max() > 1.0  # the answer moved
    row = page.locator(f"#whatif-table tr[data-device='{name}']")
    assert float(row.get_attribute("data-live-mean")) != pytest.approx(float(r["rows"][dev]["liveMean"]), abs=1e-3)
    for other in set(ctx.loaded.devices) - {name}:
        assert r2["live"][other] == r["live"][other]  # the others keep their thresholds
    assert page.nb_requests == []


def test_film_off_reproduces_the_captured_ablation_and_sliders_match_pytorch(nb, page_at, site, site_context):
    ctx = site_context
    page = open_panel(nb, page_at, site, "film")
    r, b, thr = at_rest(ctx, page, "nilmbuild.test.extra.samples")

    page.locator("#whatif-film-on").uncheck()
    r2 = ablation_run(ctx, page, b, thr, 2, "no_film", film_on=0.0)
    assert largest_change(r2["live"], r["live"]) > 1.0
    assert page.locator("#whatif-panel").get_attribute("data-within") == "true"

    page.locator("#whatif-film-on").check()
    page.evaluate(
        "v => { const s = document.getElementById('ctl-gscale'); s.value = v; s.dispatchEvent(new Event('input', {bubbles: true})); }",
        "2",
    )
    wait_runs(page, 3)
    r3 = last(page)
    layer = page.evaluate("nilmbuild.test.state.layer")
    affine = np.tile(np.array([1.0, 0.0, 1.0, 0.0], np.float32), (ctx.loaded.cfg.n_encoder_layers, 1))
    affine[layer, 0] = 2.0
    want3, gate3 = torch_watts(ctx, b, film_enc_affine=affine)
    assert_close(ctx, r3["live"], want3, gate3, thr)
    assert largest_change(r3["live"], r["live"]) > 1.0
    assert page.nb_requests == []


def test_mask_toggle_reproduces_the_captured_unmasked_run(nb, page_at, site, site_context):
    ctx = site_context
    page = open_panel(nb, page_at, site, "attention")
    r, b, thr = at_rest(ctx, page, "nilmbuild.test.page().data.samples")

    page.locator("#att-mask").uncheck()
    page.locator("#whatif-panel").scroll_into_view_if_needed()
    r2 = ablation_run(ctx, page, b, thr, 2, "no_mask", mask_diagonal=0.0)
    assert largest_change(r2["live"], r["live"]) > 1.0
    assert page.nb_requests == []


def test_your_signal_from_the_playground_reaches_attention_and_disaggregation(nb, page_at, site, site_context):
    from nilmbuild.live.export import torch_reference
    from nilmbuild.pipeline import model_input

    ctx = site_context
    pg = page_at(site / "playground.html", viewport=(1280, 1000))
    nb.wait_ready(pg, timeout=RUN_TIMEOUT)
    assert pg.evaluate("localStorage.getItem('nilmbuild:your-signal')") is None  # nothing until the reader edits
    pg.click("button[data-event=kettle]")
    stored = pg.evaluate("JSON.parse(localStorage.getItem('nilmbuild:your-signal'))")
    edit = np.asarray(pg.evaluate("Array.from(nilmbuild.test.playground.signal.get())"), np.float32)
    np.testing.assert_allclose(stored["aggregate"], edit, atol=1e-3)
    agg, start = np.asarray(stored["aggregate"], np.float32), stored["start"]
    x = model_input(ctx.loaded, nilmbuild_model(ctx).timestamps(start), agg)[None].astype(np.float32)

    att = sibling(pg, site / "attention.html")  # same browser context: same storage, as a reader moving on
    nb.wait_ready(att)
    att.select_option("#att-source", "signal")
    att.wait_for_function("document.getElementById('ys-attention').dataset.state === 'done'", timeout=RUN_TIMEOUT)
    assert att.locator("#att-main-wrap").is_hidden() and att.locator("#ys-att-map").is_visible()
    head = att.evaluate("nilmbuild.test.state.head")
    got = att.evaluate(
        "nilmbuild.test.whatif.signal.signal.run(nilmbuild.test.state.head, ['attention', 'watts'], {maskDiagonal: true})"
        ".then(r => Array.from(r.outputs.attention.data))"
    )
    ref = torch_reference(ctx.loaded, x, head)
    assert np.abs(np.asarray(got, np.float32).reshape(ref["attention"].shape) - ref["attention"]).max() <= 1e-4
    shot = nb.element_rgb(att, "#ys-att-map", dtype=float)
    assert shot.reshape(-1, 3).std(axis=0).max() > 10  # drawn, not blank
    att.select_option("#att-source", "capture")
    assert att.locator("#att-main-wrap").is_visible() and att.locator("#ys-attention").is_hidden()

    dis = sibling(pg, site / "disaggregation.html")
    nb.wait_ready(dis)
    dis.select_option("#mode", "signal")
    dis.wait_for_function("nilmbuild.test.yourSignal.last() !== null", timeout=RUN_TIMEOUT)
    drawn = dis.evaluate(
        "(() => { const o = nilmbuild.test.view().opts, r = {agg: Array.from(o.agg)};"
        " o.devices.forEach(d => r[d.name] = Array.from(d.pred)); return r; })()"
    )
    np.testing.assert_allclose(drawn["agg"], agg)
    want = nilmbuild_model(ctx).run_window(agg, start)
    near = np.abs(ref["gate_prob"] - ctx.loaded.model.gate_thresholds.numpy()[:, None]) < 1e-4
    bounds = watts_bounds(ctx.loaded)
    for i, d in enumerate(ctx.loaded.devices):
        err = np.where(near[i], 0, np.abs(np.asarray(drawn[d], np.float32) - want[d]))
        assert err.max() <= bounds[d], (d, float(err.max()))
    assert pg.nb_requests == []  # the context's requests, all three pages


def sibling(page, path):
    """Another page in `page`'s browser context (shared localStorage), watched for console errors like page_at's
    (the context's route records any network request on the first page)."""
    p = page.context.new_page()
    p.nb_errors, p.nb_requests, p.nb_url = [], [], path.resolve().as_uri()
    p.on("console", lambda msg: p.nb_errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
    p.on("pageerror", lambda exc: p.nb_errors.append(f"pageerror: {exc}"))
    p.set_viewport_size({"width": 1280, "height": 900})
    p.goto(p.nb_url)
    return p


def nilmbuild_model(ctx):
    from nilmbuild.api import Model

    return Model(ctx.loaded)


def test_your_signal_without_an_edit_replaces_the_attention_map(nb, page_at, site):
    """Source "your signal" with nothing stored: the message says what to do, in place of the map (issue 35: the
    empty state replaces the chart instead of sitting on empty canvases), and the captured map comes back."""
    att = page_at(site / "attention.html", viewport=(390, 844))
    nb.wait_ready(att)
    assert att.evaluate("localStorage.getItem('nilmbuild:your-signal')") is None
    att.select_option("#att-source", "signal")
    att.wait_for_function("document.getElementById('ys-attention').dataset.state === 'none'", timeout=RUN_TIMEOUT)
    assert att.locator("#ys-status").inner_text().startswith("No edit of yours is stored yet")
    for part in ("#ys-att-map", "#ys-att-legend", "#ys-att-row", "#att-main-wrap"):
        assert att.locator(part).is_hidden(), part
    att.select_option("#att-source", "capture")
    assert att.locator("#att-main-wrap").is_visible() and att.locator("#ys-attention").is_hidden()
