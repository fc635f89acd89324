"""The Forward page's animated forward pass in Chromium (SwiftShader): frames per second of each scene at full
quality (every particle, full resolution), driven by requestAnimationFrame through the page's test hook
(`nilmbuild.test.anim.renderAt(t)`), beside an empty requestAnimationFrame loop measured in the same page as the
reference (the display's and the machine's ceiling). The page itself lowers its cost below 30 fps (forward_anim_quality.js);
this measures what it costs before it does."""

from __future__ import annotations

from pathlib import Path

_SCENE = """([scene, ms]) => new Promise(function (resolve) {
  var a = nilmbuild.test.anim, dts = [], last = null, t0 = performance.now();
  a.seek(scene, 0);
  function f(now) {
    if (last !== null) dts.push(now - last);
    last = now; a.renderAt(((now - t0) / ms) % 1);
    if (now - t0 < ms) { requestAnimationFrame(f); return; }
    dts.sort(function (x, y) { return x - y; });
    resolve({fps: 1000 * dts.length / dts.reduce(function (x, y) { return x + y; }, 0),
             p90_ms: dts[Math.floor(0.9 * (dts.length - 1))], particles: a.state.particles.length, js_ms: a.state.drawMs});
  }
  requestAnimationFrame(f);
})"""

_IDLE = """ms => new Promise(function (resolve) {
  var n = 0, t0 = performance.now();
  function f(now) { n++; if (now - t0 < ms) requestAnimationFrame(f); else resolve(n * 1000 / (now - t0)); }
  requestAnimationFrame(f);
})"""


def bench_forward_anim(site_dir: Path, ms: int = 3000) -> list[dict]:
    from playwright.sync_api import sync_playwright

    from nilmbuild.site.browser import launch

    rows = []
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto((site_dir / "forward.html").resolve().as_uri())
        page.wait_for_function("document.documentElement.dataset.ready === 'true'", timeout=60000)
        page.locator("#fwd-anim").scroll_into_view_if_needed()
        idle = page.evaluate(_IDLE, ms)
        group = "Forward page animation in Chromium (SwiftShader), full quality"
        rows.append({"group": group, "name": "empty rAF loop (reference)", "fps": idle})
        for scene in page.evaluate("nilmbuild.test.anim.scenes.map(s => s.key)"):
            r = page.evaluate(_SCENE, [scene, ms])
            rows.append({"group": group, "name": scene, **r, "fps_vs_reference": r["fps"] / idle})
        browser.close()
    return rows
