"""The Forward page's animated forward pass (spec forward-pass.md 4.4) in Chromium: the attention particles fly to
the captured attention rows' argmax and quantile keys, FiLM colours the block with the real γ/β, Play measures
its frame rate and Pause stops it, and prefers-reduced-motion gives a step-through without motion."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from nilmbuild.capture.format import decode
from nilmbuild.model.names import attn


@pytest.fixture(scope="module")
def spec(site_context):
    from nilmbuild.site.views import forward

    return forward.build(site_context)


def _open(nb, page_at, built_site):
    page = nb.open_page(page_at, built_site, "forward", viewport=(1200, 1000))
    page.locator("#fwd-anim").scroll_into_view_if_needed()
    return page


def _quantile_keys(row, n):
    """Key of particle j: the first key whose running sum reaches (j + 0.5) / n of the row's total."""
    c = np.cumsum(row.astype(np.float64))
    return [int(np.argmax(c >= (j + 0.5) / n * c[-1])) for j in range(n)]


def test_particles_fly_to_the_captured_rows_keys(nb, page_at, built_site, site_context):
    page = _open(nb, page_at, built_site)
    m = page.evaluate("nilmbuild.test.page().model")
    sample, layer, head = 1, m["n_layers"] - 1, min(2, m["n_head"] - 1)
    page.locator("#fwd-sample").select_option(str(sample))
    page.locator("#fwd-anim-layer").select_option(str(layer))
    page.locator("#fwd-anim-head").select_option(str(head))
    parts = page.evaluate("nilmbuild.test.anim.seek('attention', 0.4)")
    st = page.evaluate("({n: nilmbuild.test.anim.state.perQuery, P: nilmbuild.test.anim.state.maxPerQuery})")
    assert st["n"] == st["P"] > 1  # a seek draws every particle the blob carries
    assert "layer " + str(layer) + ", head " + str(head) in page.locator("#fwd-anim-caption").text_content()
    name = attn(layer, "weights")
    w = decode(site_context.blob([name], [sample])).get(name)[0, head]  # (L, L), the captured weights
    leads = [p for p in parts if p["lead"]]
    assert len(leads) >= 2 and len(parts) == len(leads) * (1 + st["n"])
    for p in leads:  # the lead particle of each query flies to that attention row's argmax
        assert p["key"] == int(np.argmax(w[p["query"]])), p
    for q in {p["query"] for p in leads}:  # the others to the row's quantile keys, in order
        keys = [p["key"] for p in parts if p["query"] == q and not p["lead"]]
        assert keys == _quantile_keys(w[q], st["P"]), q
        assert all(w[q, k] > 0 for k in keys)
    # a particle is drawn where the page says it is: the last one (on top) is not the white background
    last = parts[-1]
    assert nb.canvas_pixel(page, "#fwd-anim", int(last["x"]), int(last["y"])) != (255, 255, 255)
    # another head samples other keys
    page.locator("#fwd-anim-head").select_option("0")
    other = page.evaluate("nilmbuild.test.anim.seek('attention', 0.4)")
    assert [p["key"] for p in other] != [p["key"] for p in parts] or head == 0


def test_film_colours_the_block_with_real_gamma_beta(nb, page_at, built_site, spec):
    page = _open(nb, page_at, built_site)
    page.evaluate("nilmbuild.test.anim.seek('film', 1)")
    blk = page.evaluate("nilmbuild.test.anim.state.blocks[0]")
    d = page.evaluate("nilmbuild.test.page().model.d_model")
    anim = msgpack.unpackb(spec.blobs["anim"], raw=False)
    f = anim["ffn"]["out"]
    out = np.frombuffer(f["data"], "<f2").reshape(f["shape"])[0, 0].astype(np.float32)
    r = decode(spec.blobs["capture"])
    g, b = r.get("film_enc.gamma_mean")[0, 0], r.get("film_enc.beta_mean")[0, 0]
    filmed = (1 + g) * out + b
    rng = max(np.abs(out).max(), np.abs(filmed).max())
    left, width = blk["centre"][0] - blk["size"][1] / 2, blk["size"][1]
    checked = 0
    for px in range(int(left) + 1, int(left + width) - 1):
        pos = (px + 0.5 - left) / width * d  # the feature this pixel's centre samples
        if abs(pos - round(pos)) < 0.15:
            continue  # too close to a texel edge to be sure
        feat = int(pos)
        t = float(np.clip(0.5 + 0.5 * filmed[feat] / rng, 0, 1))
        want = page.evaluate("t => nilmbuild.test.colormaps.map('burd', t)", t)
        got = nb.canvas_pixel(page, "#fwd-anim", px, int(blk["centre"][1]))
        assert max(abs(a - c) for a, c in zip(got, want, strict=True)) <= 2, (feat, got, want)
        checked += 1
    assert checked >= d // 2
    assert "γ" in page.locator("#fwd-anim-caption").text_content()


def test_play_measures_fps_pause_stops(nb, page_at, built_site):
    page = _open(nb, page_at, built_site)
    assert page.evaluate("nilmbuild.test.anim.state.playing") is False  # no auto-play
    page.locator("#fwd-anim-play").click()
    page.wait_for_function("nilmbuild.test.anim.state.frames >= 31", timeout=20000)
    assert page.evaluate("nilmbuild.test.anim.state.fps") > 0
    assert "fps over the last" in page.locator("#fwd-anim-status").text_content()
    page.locator("#fwd-anim-play").click()  # Pause
    n = page.evaluate("nilmbuild.test.anim.state.frames")
    page.wait_for_timeout(400)
    assert page.evaluate("nilmbuild.test.anim.state.frames") == n
    assert page.locator("#fwd-anim-play").text_content() == "Play"
    # Step shows the current scene's end state, then the next scene's
    page.evaluate("nilmbuild.test.anim.seek(0, 0.2)")
    page.locator("#fwd-anim-step").click()
    assert page.evaluate("[nilmbuild.test.anim.state.scene, nilmbuild.test.anim.state.t]") == [0, 1]
    page.locator("#fwd-anim-step").click()
    assert page.evaluate("[nilmbuild.test.anim.state.scene, nilmbuild.test.anim.state.t]") == [1, 1]
    assert page.evaluate("nilmbuild.test.state.stage") == page.evaluate(
        "nilmbuild.test.stages.findIndex(s => s.st.stage === nilmbuild.test.anim.scenes[1].stage)"
    )  # the 3D view follows the animation's stage


def test_reduced_motion_is_a_step_through(nb, page_at, built_site):
    page = _open(nb, page_at, built_site)
    page.emulate_media(reduced_motion="reduce")
    page.reload()
    nb.wait_ready(page)
    page.locator("#fwd-anim").scroll_into_view_if_needed()
    # the page's own steps after ready (core.afterReady: the animation's context, regl, first frame) are one-off and
    # schedule themselves with requestAnimationFrame: run them, let their last frames pass, then count
    nb.flush(page)
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0))))")
    page.evaluate(
        "window.__rafs = 0; const raf = window.requestAnimationFrame.bind(window);"
        "window.requestAnimationFrame = f => { window.__rafs++; return raf(f); }; 0"
    )
    play = page.locator("#fwd-anim-play")
    assert play.text_content() == "Next step"
    before = nb.canvas_rgb(page, "#fwd-anim")
    play.click()
    page.wait_for_timeout(500)
    st = page.evaluate("(a => ({s: a.scene, t: a.t, p: a.playing, f: a.frames}))(nilmbuild.test.anim.state)")
    assert st == {"s": 0, "t": 1, "p": False, "f": 0}  # the first scene's end state, nothing running
    assert (nb.canvas_rgb(page, "#fwd-anim") != before).any()  # drawn (the morph's end differs from its start)
    play.click()
    page.wait_for_timeout(500)
    assert page.evaluate("[nilmbuild.test.anim.state.scene, nilmbuild.test.anim.state.playing]") == [1, False]
    assert page.evaluate("window.__rafs") == 0
    assert "Step 2/" in page.locator("#fwd-anim-caption").text_content()
    assert "reduced motion" in page.locator("#fwd-anim-status").text_content()
