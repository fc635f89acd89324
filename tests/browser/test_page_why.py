"""The Why page (issue 32 item 3) against Python: an attribution value at a known step equals nilmbuild explain's
(explain_window, Captum on the PyTorch model) for the same window, method, device and target, and the page's
attention-against-attribution rank correlation equals explain/attention.py's.

Bounds. The page stores float16: a stored attribution (ig, saliency, occlusion of a stored target) is within
half a float16 ulp (2^-11 relative) of the build's float32 value; the build explains every device in one batch,
whose float32 rounding differs from explain_window's single window by ~1e-5 relative. Occlusion of another target
is derived in the page from the stored float16 watts of every pass: a mean of differences f(x) - f(copy), so within
2 x 2^-11 x the largest watts of that step over the passes of Python's.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from nilmbuild.explain import Interval, explain_window
from nilmbuild.explain.attention import attention_rows, attention_vs_attribution
from nilmbuild.explain.served import SITE
from nilmbuild.site import story
from tests.browser.why_checks import assert_matches_stored, assert_occlusion_from_passes, click_step


@pytest.fixture(scope="module")
def why(built_site, site_context):
    from nilmbuild.site.views.why import window_sample

    ctx = site_context
    b = window_sample(ctx)
    agg = story.aggregate_watts(ctx, np.asarray(ctx.x)[b, 0]).astype(np.float32)
    html = (built_site / "why.html").read_text(encoding="utf-8")
    payload = json.loads(re.search(r'<script type="application/json" id="nb-page">(.*?)</script>', html, re.S).group(1))
    device = payload["data"]["default_device"]  # a device the model predicts in the window
    assert payload["data"]["active"][ctx.loaded.devices.index(device)]
    return {
        "site": built_site,
        "ctx": ctx,
        "agg": agg,
        "t0": np.datetime64(ctx.t0[b], "s"),
        "device": device,
        "active": payload["data"]["active"],
    }


def page_values(nb, page_at, why, fragment, device):
    page = page_at((why["site"] / "why.html").resolve().as_uri() + f"#{fragment}", viewport=(1400, 900))
    nb.wait_ready(page)
    d = why["ctx"].loaded.devices.index(device or why["device"])
    vals = page.evaluate(f"Array.from(nilmbuild.test.why.explanation({d}).values || [])")
    return page, np.asarray(vals, np.float64)


def test_ig_whole_window_value_at_its_largest_step_equals_python(nb, page_at, why):
    ctx, dev = why["ctx"], why["device"]
    _, got = page_values(nb, page_at, why, f"method=ig&device={dev}&target=window", dev)
    e = explain_window(ctx.loaded, why["agg"], why["t0"], dev, method="ig", settings=SITE.methods)
    assert_matches_stored(got, e.attribution)


def test_occlusion_at_a_clicked_step_equals_python_and_attention_rho_too(nb, page_at, why):
    ctx, dev = why["ctx"], why["device"]
    d = ctx.loaded.devices.index(dev)
    page, _ = page_values(nb, page_at, why, f"method=occlusion&device={dev}&target=window", dev)
    peak = page.evaluate(f"nilmbuild.test.why.W.targets.filter(t => t.point)[{d}].lo")
    step = (peak + 37) % len(why["agg"])  # not a stored target: derived from the passes in the page
    t = click_step(page, step)
    assert t["point"] and t["lo"] == step, t
    got = np.asarray(page.evaluate(f"Array.from(nilmbuild.test.why.explanation({d}).values)"), np.float64)
    e = explain_window(ctx.loaded, why["agg"], why["t0"], dev, Interval(step, step + 1, point=True), method="occlusion")
    assert_occlusion_from_passes(page, got, e.attribution, d, step)
    # attention against attribution at the same query step: the page's rho against explain/attention.py's
    rho_page = page.evaluate("nilmbuild.test.why.S.attention.map(l => l.mean)")
    want = attention_vs_attribution(attention_rows(ctx.loaded, why["agg"], why["t0"], step), got)["layers"]
    np.testing.assert_allclose(rho_page, want, atol=0.02)


def test_every_control_redraws_and_keeps_its_state_in_the_url(nb, page_at, why):
    ctx = why["ctx"]
    page, _ = page_values(nb, page_at, why, "", None)
    for method in ("ig", "saliency", "occlusion"):
        page.select_option("#why-method", method)
        for dev in ctx.loaded.devices:
            page.select_option("#why-device", dev)
            has, message = page.evaluate(
                "(() => { const w = nilmbuild.test.why, e = w.explanation(w.S.device); return [!!e.values, e.message || '']; })()"
            )
            if method == "occlusion" or why["active"][ctx.loaded.devices.index(dev)]:
                assert has, (method, dev, message)
            else:  # a device the model does not predict here: the gradient methods say so instead of drawing
                assert not has and "does not predict" in message, (method, dev)
    page.select_option("#why-target", "interval")
    page.fill("#why-from", "10")
    page.fill("#why-to", "50")
    page.dispatch_event("#why-to", "change")
    assert page.evaluate("nilmbuild.test.why.targetOf()")["hi"] == 51
    page.focus("#why-lanes")
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    t = page.evaluate("nilmbuild.test.why.targetOf()")
    assert t["point"] and t["lo"] == len(why["agg"]) - 2
    page.wait_for_function("location.hash.includes('target=step')")
    assert f"step={t['lo']}" in page.evaluate("location.hash")
    assert page.locator("#why-quality-table tbody tr").count() == 3 * len(ctx.loaded.devices)
