"""The Why page of an imported upstream checkpoint (CondiNILM, the original NILMFormer; the site of conftest's
session fixture `upstream_site`) against Python: it becomes ready with no console error (page_at asserts that at
teardown), an attribution value at a known step equals nilmbuild explain's (explain_window, Captum on the
PyTorch model) for the same window, method, device and target, attention is compared over the L time steps with
the stats token's share stated (equal to explain/attention.py's), and the page says what its output is: CondiNILM's
soft gate with the parameters the model stores, or that the original NILMFormer has no gate.

Bounds as test_page_why.py: stored values are float16 (half an ulp, 2^-11 relative) of the build's float32 batch;
occlusion of a target that is not stored is derived in the page from the float16 watts of every pass. Attention
rows are rebuilt from the captured q, k and lse (capture bound 2e-3 absolute on a weight).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import nilmbuild
from nilmbuild.explain import Interval, explain_window
from nilmbuild.explain.attention import attention_rows, attention_vs_attribution
from nilmbuild.explain.served import SITE
from tests.browser.why_checks import assert_matches_stored, assert_occlusion_from_passes, click_step


@pytest.fixture(scope="module")
def why(upstream_site):
    """The built site, the checkpoint it was built from (beside it, as conftest's upstream_site writes it) and the
    page's data as the HTML carries it."""
    site, slugs, name = upstream_site
    assert "why" in slugs
    html = (site / "why.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="nb-page">(.*?)</script>', html, re.S).group(1))
    return {"site": site, "model": nilmbuild.load_model(site.parent / f"{name}.pt"), "P": data["data"]}


def open_why(nb, page_at, why, fragment=""):
    """The page, ready, and its window: aggregate watts (the explained input, float32 as stored) and start."""
    page = page_at((why["site"] / "why.html").resolve().as_uri() + (f"#{fragment}" if fragment else ""), (1400, 900))
    nb.wait_ready(page)
    agg = np.asarray(page.evaluate("Array.from(nilmbuild.test.why.W.agg)"), np.float32)
    return page, why["P"], agg, np.datetime64(why["P"]["t0"].rstrip("Z"), "s")


def values(page, d: int) -> np.ndarray:
    return np.asarray(page.evaluate(f"Array.from(nilmbuild.test.why.explanation({d}).values || [])"), np.float64)


def test_the_window_and_step_are_the_models(nb, page_at, why):
    m = why["model"]
    page, P, agg, t0 = open_why(nb, page_at, why)
    assert P["devices"] == list(m.devices) and agg.shape == (m.window,)
    assert P["step_s"] == m.step_s == m.loaded.cfg.step_s  # Wh per step and the clock axis use the model's rate
    L = m.window
    assert P["tokens"] == {"steps": L, "stats_index": L, "stats_label": f"stats token (token {L + 1})",
                           "step_minutes": m.step_s / 60}  # fmt: skip
    assert P["gap_columns"] == [["completeness_hard", "gap (Wh)"]]  # one output: one completeness gap
    head = page.locator("#why-quality-table thead").text_content()
    assert "gap (Wh)" in head and "gap soft" not in head
    assert page.locator("#why-quality-table tbody tr").count() == 3 * len(m.devices)


def test_ig_whole_window_value_at_its_largest_step_equals_python(nb, page_at, why):
    m, dev = why["model"], why["P"]["default_device"]
    assert why["P"]["active"][m.devices.index(dev)]  # a device the model predicts in the window
    page, _, agg, t0 = open_why(nb, page_at, why, f"method=ig&device={dev}&target=window")
    got = values(page, m.devices.index(dev))
    e = explain_window(m.loaded, agg, t0, dev, method="ig", settings=SITE.methods)
    assert_matches_stored(got, e.attribution)


def test_occlusion_at_a_clicked_step_and_the_stats_tokens_share_equal_python(nb, page_at, why):
    m = why["model"]
    page, P, agg, t0 = open_why(nb, page_at, why)
    dev = P["default_device"]
    d, L = m.devices.index(dev), m.window
    peak = page.evaluate(f"nilmbuild.test.why.W.targets.filter(t => t.point)[{d}].lo")
    step = (peak + 11) % L  # not a stored target: derived from the passes in the page
    t = click_step(page, step)
    assert t["point"] and t["lo"] == step, t
    got = values(page, d)
    e = explain_window(m.loaded, agg, t0, dev, Interval(step, step + 1, point=True), method="occlusion")
    assert_occlusion_from_passes(page, got, e.attribution, d, step)
    # attention over the L time steps, the stats token's share apart: the page's against explain/attention.py's
    rows = attention_rows(m.loaded, agg, t0, step)
    assert rows.shape == (m.loaded.cfg.n_encoder_layers, m.loaded.cfg.n_head, L + 1)
    want = attention_vs_attribution(rows, got, stats=L)
    cmp = page.evaluate("nilmbuild.test.why.S.attention")
    np.testing.assert_allclose([c["mean"] for c in cmp], want["layers"], atol=0.02)
    share = rows[:, :, L].mean(axis=1)  # the model's own weight on its last token, head mean per layer
    np.testing.assert_allclose([c["stats"] for c in cmp], share, atol=2e-3)
    np.testing.assert_allclose(want["stats_share"]["layers"], share, rtol=1e-6)
    note = page.locator("#why-attn-note").text_content()
    assert f"stats token (token {L + 1})" in note, note
    said = [float(v) for v in re.findall(r"layer \d+ ([0-9.]+) %", note)]  # 3 significant digits, in %
    np.testing.assert_allclose(said, 100 * share, rtol=5e-3, atol=0.2)
    cells = page.locator("#why-attn-table tbody tr").first.locator("td").all_text_contents()
    assert abs(float(cells[-1]) - share[0]) <= 2e-3 + 5e-4, cells  # shown with 3 decimals


def test_the_page_says_what_its_output_is(nb, page_at, why):
    m = why["model"]
    page, _, _, _ = open_why(nb, page_at, why)
    text = page.locator("#why-output").text_content()
    if m.architecture == "nilmformer":
        assert "has no gate" in text and page.locator("#why-output a").get_attribute("href") == "disaggregation.html"
        return
    gate = m.loaded.model.criterion  # the stored gate parameters, clamped as CondiNILM's evaluation clamps them
    s, f, b = (v.reshape(-1).tolist() for v in gate.parameters_used())
    for i, dev in enumerate(m.devices):
        want = f"{dev.replace('_', ' ')}: scale {s[i]:.3g}, floor {f[i]:.3g}, bias {b[i]:.3g}"
        assert want in text, (want, text)
    assert page.locator("#why-output a").get_attribute("href") == "gate.html"
