"""The live model in the page (issue 11): onnxruntime-web in a Web Worker reproduces the PyTorch model stage by
stage, runWindow agrees with Python's run_window, the playground's edits reach the output, and everything works
from file:// and inside an iframe with zero network requests.

The site here is the playground page alone, built by its real view from the shipped checkpoint's example batch
(no capture: the page runs the model itself), so this file does not wait for the whole site.
"""

from __future__ import annotations

import numpy as np
import pytest

import nilmbuild
from nilmbuild.data.preprocess import scaler_affine
from nilmbuild.live.export import outputs, torch_reference
from nilmbuild.live.palette import palette

RUN_TIMEOUT = 180_000  # first run loads the runtime (~2-6 s) and the session; SwiftShader on 2 busy cores


@pytest.fixture(scope="module")
def model():
    return nilmbuild.load_model()


@pytest.fixture(scope="module")
def prepared(model):
    from nilmbuild.pipeline import load_household_for, prepare_for

    return prepare_for(model.loaded, load_household_for(model.loaded))


@pytest.fixture(scope="module")
def windows(prepared):
    from nilmbuild.data.preprocess import example_batch

    return example_batch(prepared, split="test", batch_size=32, seed=0)


@pytest.fixture(scope="module")
def site(tmp_path_factory, model, prepared, windows):
    from nilmbuild.capture.capture import capture_batch
    from nilmbuild.site.build import build_site
    from nilmbuild.site.context import SiteContext
    from nilmbuild.site.views import playground
    from nilmbuild.site.views._common import model_sizes

    x, y, t0 = windows
    cap = capture_batch(model.loaded, x, y, t0, ablations=False)  # the page's finding reads the captured output
    ctx = SiteContext(
        loaded=model.loaded, source="synthetic", household=None, prepared=prepared, x=x, y=y, t0=t0, capture=cap
    )
    out = tmp_path_factory.mktemp("live") / "site"
    meta = {
        "checkpoint": "default.pt",
        "data_source": "synthetic",
        "model": model_sizes(model.loaded.cfg, model.step_s),
    }
    build_site(out, [playground.build(ctx)], meta)  # "model": the sizes the templates spell (pages.site_context_vars)
    (out / "parent.html").write_text(
        "<!doctype html><html><body><h1>host</h1><iframe id='f' src='playground.html#embed' "
        "style='width:900px;height:700px;border:0'></iframe></body></html>"
    )
    return out


def test_the_graph_is_the_shared_sibling_file_not_in_the_page(site, model):
    """One copy of the graph per site: nilmbuild-model.js holds the exported bytes, the page only names it."""
    import base64
    import gzip
    import re

    from nilmbuild.live.export import onnx_bytes
    from nilmbuild.site.views.live_parts import MODEL_FILE

    onnx = onnx_bytes(model.loaded)
    script = (site / MODEL_FILE).read_text()
    assert gzip.decompress(base64.b64decode(re.search(r'gzipBase64: "([^"]+)"', script).group(1))) == onnx
    assert (site / "playground.html").stat().st_size < len(onnx) / 10


@pytest.fixture
def open_playground(page_at, site, nb):
    def open_():
        page = page_at(site / "playground.html", viewport=(1280, 1000))
        nb.wait_ready(page, timeout=RUN_TIMEOUT)
        return page

    return open_


def watts_bound(model, device):
    """max(2 W, 1 % of the device's peak): the peak is the top of its training scaler (watts at scaled 1)."""
    a, b = scaler_affine(model.loaded.scalers["appliances"][device])
    return max(2.0, 0.01 * (a + b))


def near_threshold(model, gate_prob):
    """(D, W) bool: steps whose gate probability is within 1e-4 of the hard-gate threshold (the gate may flip)."""
    return np.abs(gate_prob - model.loaded.model.gate_thresholds.numpy()[:, None]) < 1e-4


def run_in_page(page, x, head, fetch):
    return page.evaluate(
        """async ([x, head, fetch]) => {
        const r = await nilmbuild.live.run(Float32Array.from(x), head, fetch);
        const out = {};
        for (const k of fetch) out[k] = {data: Array.from(r.outputs[k].data), dims: r.outputs[k].dims};
        return out; }""",
        [x.reshape(-1).tolist(), head, list(fetch)],
    )


@pytest.mark.parametrize("sample,head", [(0, 0), (5, 3), (17, 7)])
def test_in_page_model_equals_pytorch_stage_by_stage(open_playground, model, windows, sample, head):
    page = open_playground()
    x = windows[0][sample : sample + 1].astype(np.float32)
    got = run_in_page(page, x, head, outputs(model.loaded.cfg))
    ref = torch_reference(model.loaded, x, head)
    near = near_threshold(model, ref["gate_prob"])
    assert near.sum() <= 2
    for name in outputs(model.loaded.cfg):
        g = np.asarray(got[name]["data"], np.float32).reshape(got[name]["dims"])
        assert g.shape == ref[name].shape, name
        err = np.abs(g - ref[name])
        if name == "watts":
            for i, d in enumerate(model.devices):
                assert np.where(near[i], 0, err[i]).max() <= watts_bound(model, d), (d, float(err[i].max()))
        else:
            bound = 1e-4 * max(1.0, float(np.abs(ref[name]).max()))
            assert err.max() <= bound, (name, float(err.max()), bound)


def test_run_window_agrees_with_python_on_a_signal_no_fixture_contains(open_playground, model):
    rng = np.random.default_rng(4242)  # a fresh random household minute series
    agg = (120 + 60 * rng.random(model.window) + 2400 * (rng.random(model.window) > 0.96)).astype(np.float32)
    start = "2025-02-17T19:23"
    page = open_playground()
    got = page.evaluate(
        """async ([a, s]) => { const o = await nilmbuild.runWindow(Float32Array.from(a), s);
        const r = {}; for (const k in o) r[k] = Array.from(o[k]); return r; }""",
        [agg.tolist(), start],
    )
    assert page.evaluate("nilmbuild.devices") == model.devices
    want = model.run_window(agg, start)
    ref = torch_reference(
        model.loaded,
        __import__("nilmbuild.pipeline", fromlist=["model_input"]).model_input(
            model.loaded, model.timestamps(start), agg
        )[None],
        0,
    )
    near = near_threshold(model, ref["gate_prob"])
    for i, d in enumerate(model.devices):
        err = np.where(near[i], 0, np.abs(np.asarray(got[d], np.float32) - want[d]))
        assert err.max() <= watts_bound(model, d), (d, float(err.max()))


def test_run_window_rejects_bad_input(open_playground):
    page = open_playground()
    msg = page.evaluate(
        "nilmbuild.runWindow(new Float32Array(10), '2024-01-01T00:00').then(() => 'ok', e => e.message)"
    )
    assert "needs" in msg and "got 10" in msg
    msg = page.evaluate(
        "nilmbuild.runWindow(new Float32Array(nilmbuild.live.window), 'soon').then(() => 'ok', e => e.message)"
    )
    assert "bad start time" in msg


def runs(page):
    return page.evaluate("nilmbuild.test.playground.runs")


def wait_run_after(page, n):
    page.wait_for_function(
        f"nilmbuild.test.playground.runs > {n} && !nilmbuild.test.playground.busy && !nilmbuild.test.playground.dirty",
        timeout=RUN_TIMEOUT,
    )


def test_kettle_event_raises_the_kettle_output_there_and_nowhere_else(open_playground, model):
    page = open_playground()
    flat = ", ".join(["300"] * model.window)
    n = runs(page)
    page.fill("#pg-paste", flat)
    page.click("#pg-apply")
    wait_run_after(page, n)
    before = np.asarray(page.evaluate("Array.from(nilmbuild.test.playground.result.watts.kettle)"))
    at = int(page.input_value("#pg-at"))
    kettle = palette(model.step_s)[0]
    assert kettle["name"] == "kettle"
    n = runs(page)
    page.click("button[data-event=kettle]")
    wait_run_after(page, n)
    sig = np.asarray(page.evaluate("Array.from(nilmbuild.test.playground.result.signal)"))
    np.testing.assert_allclose(sig[at : at + len(kettle["watts"])], 300 + np.asarray(kettle["watts"]), rtol=1e-6)
    after = np.asarray(page.evaluate("Array.from(nilmbuild.test.playground.result.watts.kettle)"))
    inside = slice(at, at + len(kettle["watts"]))
    assert after[inside].max() > 1000 and before[inside].max() < 50
    outside = np.ones(model.window, bool)
    outside[max(0, at - 2) : at + len(kettle["watts"]) + 2] = False
    assert np.abs(after - before)[outside].max() < 5


def test_undo_and_reset_restore_the_signal(open_playground):
    page = open_playground()
    first = page.evaluate("Array.from(nilmbuild.test.playground.signal.get())")
    n = runs(page)
    page.click("#pg-scale")
    wait_run_after(page, n)
    scaled = page.evaluate("Array.from(nilmbuild.test.playground.signal.get())")
    assert np.allclose(np.asarray(scaled), 1.5 * np.asarray(first), rtol=1e-6)
    page.click("#pg-undo")
    assert page.evaluate("Array.from(nilmbuild.test.playground.signal.get())") == first
    page.click("#pg-shift")
    page.click("#pg-reset")
    assert page.evaluate("Array.from(nilmbuild.test.playground.signal.get())") == first


def test_drawing_on_the_aggregate_edits_it(open_playground):
    page = open_playground()
    box = page.locator("#pg-canvas").bounding_box()
    geo = page.evaluate(
        "(() => { const g = nilmbuild.test.playground.geo; return {x0: g.layout.x0, x1: g.layout.x1,"
        " top: g.lanes[0].top, bot: g.lanes[0].bot, max: g.lanes[0].max, min: g.lanes[0].min}; })()"
    )
    y = box["y"] + geo["top"] + 0.1 * (geo["bot"] - geo["top"])
    x0, x1 = box["x"] + geo["x0"] + 100, box["x"] + geo["x0"] + 200
    n = runs(page)
    page.mouse.move(x0, y)
    page.mouse.down()
    page.mouse.move(x1, y, steps=5)
    page.mouse.up()
    wait_run_after(page, n)
    sig = np.asarray(page.evaluate("Array.from(nilmbuild.test.playground.result.signal)"))
    W = len(sig)
    lo = round(100 / (geo["x1"] - geo["x0"]) * (W - 1)) + 1
    hi = round(200 / (geo["x1"] - geo["x0"]) * (W - 1)) - 1
    want = geo["min"] + 0.9 * (geo["max"] - geo["min"])
    assert np.allclose(sig[lo:hi], want, rtol=0.02)


def test_works_inside_an_iframe_with_no_network(page_at, site, model):
    page = page_at(site / "parent.html", viewport=(1000, 800))
    frame = page.frame_locator("#f")
    frame.locator("html[data-ready=true]").wait_for(state="attached", timeout=RUN_TIMEOUT)
    inner = page.frames[1]
    out = inner.evaluate(
        "nilmbuild.runWindow(new Float32Array(nilmbuild.live.window).fill(250), "
        "'2024-05-01T07:00').then(o => Object.keys(o))"
    )
    assert out == model.devices
    assert page.nb_requests == []  # page_at also asserts this at teardown


def test_build_time_outputs_show_first_and_equal_the_live_models_first_run(open_playground, site, model):
    """The page is ready with each unedited window's outputs from PyTorch at build time (first_runs), before the
    runtime has started; the live model's first run then replaces them, and the two agree within the watts bound
    (gate probabilities and attention row within 1e-4)."""
    from nilmbuild.site.assets import read_blobs
    from nilmbuild.site.views.playground import FIRST_RUNS_BLOB

    page = open_playground()
    wait_run_after(page, 0)
    S = "nilmbuild.test.playground"
    shown = page.evaluate(f"{S}.shown")
    assert shown[0] == "build" and "live" in shown
    D, W, layers = len(model.devices), model.window, model.loaded.cfg.n_encoder_layers
    blob = read_blobs((site / "playground.html").read_text())[FIRST_RUNS_BLOB]
    first = np.frombuffer(blob, "<f4").reshape(-1, 2 * D + layers, W)[0]  # start window 0
    live = page.evaluate(
        f"""(() => {{ const r = {S}.result, q = {S}.query, W = nilmbuild.live.window;
        return {{watts: nilmbuild.devices.map(d => Array.from(r.watts[d])), gate: Array.from(r.gate),
                 rows: [...Array({layers}).keys()].map(l => Array.from(r.attention.subarray((l * W + q) * W, (l * W + q + 1) * W)))}}; }})()"""
    )
    assert page.evaluate(f"{S}.head") == 0 and page.evaluate(f"{S}.query") == W // 2
    near = near_threshold(model, np.asarray(live["gate"], np.float32).reshape(D, W))
    for i, d in enumerate(model.devices):
        err = np.abs(first[i] - np.asarray(live["watts"][i]))
        assert np.where(near[i], 0, err).max() <= watts_bound(model, d), d
    assert np.abs(first[D : 2 * D].reshape(-1) - np.asarray(live["gate"])).max() <= 1e-4
    assert np.abs(first[2 * D :] - np.asarray(live["rows"])).max() <= 1e-4
    assert first[:D].max() > 100  # a window where some device draws power: the comparison is not of zeros
