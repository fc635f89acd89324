"""Build and page benchmarks: `nilmbuild site` phases, bytes, and page load / interaction speed in Chromium."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from nilmbuild.capture import size_report
from nilmbuild.capture.format import decode

# Per page, the control the FPS benchmark drives continuously (CSS selector of an <input type=range> or <select>).
DRIVEN_CONTROLS = {"attention": "select", "film": "input[type=range]", "gate": "input[type=range]"}

_LONGTASKS = """
window.__nbLong = [];
try {
  new PerformanceObserver(function (l) { l.getEntries().forEach(function (e) { window.__nbLong.push(e.duration); }); })
    .observe({type: "longtask", buffered: true});
} catch (e) {}
"""

_DRIVE = """
([sel, ms]) => new Promise(function (resolve) {
  var el = document.querySelector(sel); if (!el) { resolve(-1); return; }
  var frames = 0, t0 = performance.now(), i = 0;
  function tick(now) {
    frames++; i++;
    if (el.tagName === "SELECT") { el.selectedIndex = i % el.options.length; el.dispatchEvent(new Event("change", {bubbles: true})); }
    else { var lo = +el.min || 0, hi = +el.max || 1; el.value = lo + (hi - lo) * ((i % 40) / 39);
           el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); }
    if (now - t0 < ms) requestAnimationFrame(tick); else resolve(frames * 1000 / (now - t0));
  }
  requestAnimationFrame(tick);
})
"""


def bench_build() -> tuple[list[dict], list[dict], Path]:
    """Time `nilmbuild site` by phase on the shipped checkpoint; return (rows, size rows, site dir)."""
    from nilmbuild.site.context import make_context
    from nilmbuild.site.pages import build_all

    timings: dict = {}
    t = time.perf_counter()
    ctx = make_context(timings=timings)
    out = Path(tempfile.mkdtemp(prefix="nilmbuild-bench-site-"))
    build_all(ctx, out, timings=timings)
    total = time.perf_counter() - t
    rows = [
        {"group": "nilmbuild site (wall time)", "name": k, "seconds": timings[k], "share": timings[k] / total}
        for k in ("load", "capture", "serialize", "render")
    ]
    rows.append({"group": "nilmbuild site (wall time)", "name": "total", "seconds": total, "share": 1.0})
    return rows, size_rows(ctx, out), out


def size_rows(ctx, site_dir: Path) -> list[dict]:
    rows = []
    for f in sorted(site_dir.glob("*.html")):
        rows.append({"group": "bytes per page", "name": f.name, "bytes": f.stat().st_size})
    rows.append(
        {
            "group": "bytes per page",
            "name": "total site",
            "bytes": sum(f.stat().st_size for f in site_dir.rglob("*") if f.is_file()),
        }
    )
    rep = size_report(ctx.capture, samples=(0,))
    for g, b in sorted(rep["groups"].items(), key=lambda kv: -kv[1]):
        rows.append({"group": "capture bytes, one sample, per record group", "name": g, "bytes": b})
    rows.append(
        {
            "group": "capture bytes, one sample, per record group",
            "name": "total blob (budget 3 MB)",
            "bytes": rep["blob_bytes"],
        }
    )
    # attention: q, k (f16) + row lse (f32) per layer vs the weights matrix as plain float16
    reader = decode(ctx.blob(["encoder.*.attn.*"], samples=[0]))
    L, H = ctx.x.shape[-1], ctx.loaded.cfg.n_head
    plain = ctx.loaded.cfg.n_encoder_layers * H * L * L * 2
    stored = sum(reader.nbytes(n) for n in reader.names() if n.split(".")[-1] in ("q", "k", "lse"))
    rows.append({"group": "attention store, one sample, 3 layers", "name": "plain float16 weights", "bytes": plain})
    rows.append(
        {
            "group": "attention store, one sample, 3 layers",
            "name": "q + k (f16) + lse (f32)",
            "bytes": stored,
            "ratio": plain / stored,
        }
    )
    return rows


def bench_pages(site_dir: Path, repeats: int = 5) -> list[dict]:
    from playwright.sync_api import sync_playwright

    from nilmbuild.site.browser import launch
    from nilmbuild.site.pages import NAV_ORDER

    rows = []
    with sync_playwright() as pw:
        browser = launch(pw)
        for slug in NAV_ORDER:
            url = (site_dir / f"{slug}.html").resolve().as_uri()
            times, longest, fps = [], [], None
            for _ in range(repeats):
                page = browser.new_page(viewport={"width": 1200, "height": 900})
                page.add_init_script(_LONGTASKS)
                t = time.perf_counter()
                page.goto(url)
                page.wait_for_function("document.documentElement.dataset.ready === 'true'", timeout=60000)
                times.append(time.perf_counter() - t)
                longest.append(page.evaluate("window.__nbLong"))
                if slug in DRIVEN_CONTROLS and fps is None:
                    fps = page.evaluate(_DRIVE, [DRIVEN_CONTROLS[slug], 2000])
                page.close()
            lt = longest[0] or []
            rows.append(
                {
                    "group": "pages in Chromium (SwiftShader)",
                    "name": slug,
                    "ready_s_median": statistics.median(times),
                    "long_tasks": len(lt),
                    "longest_task_ms": max(lt) if lt else 0.0,
                    "fps_driving_control": fps,
                }
            )
        browser.close()
    return rows
