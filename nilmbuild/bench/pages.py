"""Pages in headless Chromium (SwiftShader WebGL), the issue-12 page targets: data-ready time, the longest
main-thread task while loading, frames/s while each control is driven, and "GPU stall due to ReadPixels"
console messages. Medians over several loads; printed beside bench/baseline.json's "pages" figures as ratios,
or, with --against OTHER_SITE, beside that site's figures measured page by page in the same run (a shared
machine's load moves absolute figures 2-3x between runs; same-run ratios do not move that much).

live-ready (the Playground, which shows build-time outputs first): performance.now() at its first live model run's
result ("nilmbuild:run"). data-ready: performance.now() when the page fires "nilmbuild:ready" (core.ready(): first frame drawn, the
same signal the browser tests wait for), i.e. ms since navigation start, measured inside the page.
Longest task: PerformanceObserver "longtask" entries (>= 50 ms) buffered from navigation to ready + 0.5 s.
fps: requestAnimationFrame callbacks per second while every frame sets the control to its next value and
dispatches input/change, as a dragged slider or a held arrow key on a <select> does; every <select> and
<input type=range> of the page's visual is driven for `drive_ms`, and the slowest one is reported. Each control
is first scrolled into view (as a user sees what they drag): pages draw off-screen views when they come into
view (core.onScreen), so a control inside a view far down the page is measured with that view on screen.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from nilmbuild.bench.build_runs import BASELINE

# The issue-12 targets (the fps one applies to the pages in FPS_PAGES).
TARGET_READY_S, TARGET_LONGEST_MS, TARGET_FPS = 0.6, 100.0, 30.0
FPS_PAGES = ("attention", "gate", "film", "encoder")

_INIT = """
window.__nb = {long: [], readyAt: null, stalls: 0};
try {
  new PerformanceObserver(function (l) { l.getEntries().forEach(function (e) { window.__nb.long.push(e.duration); }); })
    .observe({type: "longtask", buffered: true});
} catch (e) {}
window.addEventListener("nilmbuild:ready", function () { window.__nb.readyAt = performance.now(); });
window.addEventListener("nilmbuild:run", function () { window.__nb.runAt = window.__nb.runAt || performance.now(); });
"""
#: Pages that run the live model as they load: their first run's result ("nilmbuild:run") is timed as live-ready.
LIVE_PAGES = ("playground",)

# Every <select> / <input type=range> in the page, as [index, label] (the label names the fps row).
_CONTROLS = """
() => Array.from(document.querySelectorAll("select, input[type=range]")).map(function (el, i) {
  var l = el.id && document.querySelector("label[for='" + el.id + "']");
  return [i, (el.tagName === "SELECT" ? "select " : "range ") + (l ? l.textContent.trim() : el.name || el.id || i)];
})
"""

_DRIVE = """
([idx, ms]) => new Promise(function (resolve) {
  var el = document.querySelectorAll("select, input[type=range]")[idx];
  var frames = 0, t0 = null, i = 0, worst = 0, last = null;
  el.scrollIntoView({block: "nearest"});
  function tick(now) {
    if (t0 === null) t0 = now;
    if (last !== null) worst = Math.max(worst, now - last);
    last = now; frames++; i++;
    if (el.tagName === "SELECT") { el.selectedIndex = i % el.options.length; }
    else { var lo = +el.min || 0, hi = +el.max || 1, st = +el.step || 0, v = lo + (hi - lo) * ((i % 40) / 39);
           if (st > 0) v = lo + Math.round((v - lo) / st) * st; el.value = v;
           el.dispatchEvent(new Event("input", {bubbles: true})); }
    el.dispatchEvent(new Event("change", {bubbles: true}));
    if (now - t0 < ms) requestAnimationFrame(tick);
    else resolve([(frames - 1) * 1000 / (now - t0), worst]);
  }
  requestAnimationFrame(function () { requestAnimationFrame(tick); });  // after the scroll's visibility reports
})
"""


def load_once(browser, url: str) -> dict:
    """Open `url` in a fresh page; -> {ready_ms, longest_ms, stalls, page, live_ms (LIVE_PAGES: the first live
    model run's result, ms since navigation)} (page left open)."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    stalls = []
    page.on("console", lambda m: stalls.append(1) if "ReadPixels" in m.text else None)
    page.add_init_script(_INIT)
    page.goto(url)
    page.wait_for_function("document.documentElement.dataset.ready", timeout=120000)
    if page.evaluate("document.documentElement.dataset.ready") != "true":
        raise RuntimeError(f"{url}: page failed: {page.text_content('#nb-error')}")
    page.wait_for_timeout(500)
    if Path(url).stem in LIVE_PAGES:
        page.wait_for_function("window.__nb.runAt", timeout=120000)
    nb = page.evaluate("window.__nb")
    out = {"ready_ms": nb["readyAt"], "longest_ms": max(nb["long"], default=0.0), "stalls": stalls, "page": page}
    return out | ({"live_ms": nb["runAt"]} if nb.get("runAt") else {})


def drive_all(page, drive_ms: int) -> dict:
    """{control label: [fps, worst frame ms]} for every select / range input of an open page."""
    out = {}
    for idx, label in page.evaluate(_CONTROLS):
        out[f"{idx}:{label}"] = page.evaluate(_DRIVE, [idx, drive_ms])
    return out


def _one_load(browser, url: str, i: int, drive_ms: int, drive: bool, acc: dict) -> None:
    """Load `url` once into the lists of `acc` (ready, longest, stalls, fps per control)."""
    r = load_once(browser, url)
    acc.setdefault("ready", []).append(r["ready_ms"])
    acc.setdefault("longest", []).append(r["longest_ms"])
    if "live_ms" in r:
        acc.setdefault("live", []).append(r["live_ms"])
    acc["stalls"] = acc.get("stalls", 0) + len(r["stalls"])
    if drive and i < 2:  # fps: two loads, median per control is the mean of two; keeps the run short
        for k, (f, _worst) in drive_all(r["page"], drive_ms).items():
            acc.setdefault("fps", {}).setdefault(k, []).append(f)
    r["page"].close()


def _figures(acc: dict) -> dict:
    fig = {
        "ready_s": statistics.median(acc["ready"]) / 1000,
        "longest_task_ms": statistics.median(acc["longest"]),
        "readpixels_stalls": acc["stalls"],
    }
    if acc.get("live"):
        fig["live_ready_s"] = statistics.median(acc["live"]) / 1000
    if acc.get("fps"):
        per = {k: statistics.median(v) for k, v in acc["fps"].items()}
        worst = min(per, key=per.get)
        fig.update({"fps_min": per[worst], "fps_min_control": worst.split(":", 1)[1], "fps": per})
    return fig


def measure_page(browser, url: str, repeats: int, drive_ms: int, drive: bool) -> dict:
    acc: dict = {}
    for i in range(repeats):
        _one_load(browser, url, i, drive_ms, drive, acc)
    return _figures(acc)


def measure_pair(browser, urls: tuple[str, str], repeats: int, drive_ms: int, drive: bool) -> tuple[dict, dict]:
    """Two builds of one page, loads alternated A B, B A, ...: whichever loads second finds the shaders that
    both compile in the GPU process' program cache, so a fixed order would favour one."""
    accs: tuple[dict, dict] = ({}, {})
    for i in range(repeats):
        for k in (0, 1) if i % 2 == 0 else (1, 0):
            _one_load(browser, urls[k], i, drive_ms, drive, accs[k])
    return _figures(accs[0]), _figures(accs[1])


def build_site(out: Path) -> Path:
    """`nilmbuild site` into `out` in a fresh process (uses the capture cache when it is warm)."""
    subprocess.run([sys.executable, "-m", "nilmbuild", "site", "--out", str(out), "--quiet"], check=True)
    return out


def measure(site_dir: Path | None = None, repeats: int = 5, drive_ms: int = 1500, slugs=None, against=None):
    """{slug: figures} for every built page (site_dir built when None). With `against` (another built site),
    -> (figures, reference figures): each page is measured there right after, in the same browser, so that
    a ratio compares two builds under the same machine load."""
    from playwright.sync_api import sync_playwright

    from nilmbuild.site.browser import launch
    from nilmbuild.site.pages import NAV_ORDER

    site_dir = site_dir or build_site(Path(tempfile.mkdtemp(prefix="nilmbuild-bench-pages-")) / "site")
    out, ref = {}, {}
    with sync_playwright() as pw:
        browser = launch(pw)
        warm = next(site_dir.glob("*.html"), None)  # the first load of a browser also starts its GPU process
        if warm is not None:
            load_once(browser, warm.resolve().as_uri())["page"].close()
        for slug in slugs or NAV_ORDER:
            f, g = site_dir / f"{slug}.html", Path(against or "") / f"{slug}.html"
            if not f.is_file():
                continue
            if against and g.is_file():
                urls = (f.resolve().as_uri(), g.resolve().as_uri())
                out[slug], ref[slug] = measure_pair(browser, urls, repeats, drive_ms, slug in FPS_PAGES)
            else:
                out[slug] = measure_page(browser, f.resolve().as_uri(), repeats, drive_ms, slug in FPS_PAGES)
            print(f"[bench] page {slug}: {json.dumps(out[slug], default=str)}", file=sys.stderr, flush=True)
        browser.close()
    return (out, ref) if against else out


def compare_rows(figures: dict, baseline: dict | None, group: str = "vs bench/baseline.json") -> list[dict]:
    """One row per page: data-ready, longest task, slowest control's fps, stalls; each with baseline and ratio."""
    base = (baseline or {}).get("pages", {}).get("figures", {})
    rows = []
    for slug, f in figures.items():
        b = base.get(slug, {})
        row = {"group": f"pages in Chromium, SwiftShader ({group})", "name": slug}
        for k in ("ready_s", "live_ready_s", "longest_task_ms", "fps_min", "readpixels_stalls"):
            if k in f:
                row[k] = f[k]
                if b.get(k):
                    row[k + "_ratio"] = f[k] / b[k]
        if "fps_min_control" in f:
            row["slowest"] = f["fps_min_control"]
        rows.append(row)
    rows.append(targets_row(figures, group))
    return rows


def targets_row(figures: dict, group: str) -> dict:
    ready = max(f["ready_s"] for f in figures.values())
    longest = max(f["longest_task_ms"] for f in figures.values())
    fps = [f["fps_min"] for s, f in figures.items() if s in FPS_PAGES and "fps_min" in f]
    return {
        "group": f"pages in Chromium, SwiftShader ({group})",
        "name": "issue-12 targets met",
        "ready": ready <= TARGET_READY_S,
        "longest_task": longest <= TARGET_LONGEST_MS,
        "fps": bool(fps) and min(fps) >= TARGET_FPS,
        "stalls": all(f["readpixels_stalls"] == 0 for f in figures.values()),
    }


def write_baseline(figures: dict, repeats: int) -> None:
    """Record the figures under "pages" in bench/baseline.json, with the machine they were measured on."""
    from nilmbuild.bench.build_runs import machine

    base = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    base["pages"] = {"machine": machine(), "repeats": repeats, "figures": figures}
    BASELINE.parent.mkdir(parents=True, exist_ok=True)
    BASELINE.write_text(json.dumps(base, indent=1, sort_keys=True) + "\n")


def bench_pages(site_dir: Path | None = None, repeats: int = 5, write: bool = False, slugs=None) -> list[dict]:
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else None
    figures = measure(site_dir, repeats=repeats, slugs=slugs)
    if write:
        write_baseline(figures, repeats)
    return compare_rows(figures, baseline)


def main(argv=None) -> int:
    """`python -m nilmbuild.bench.pages [--site DIR] [--against DIR] [--pages a,b] [--repeats N] [--write-baseline]`."""
    import argparse

    from nilmbuild.bench.table import print_table

    ap = argparse.ArgumentParser(prog="python -m nilmbuild.bench.pages", description=__doc__)
    ap.add_argument("--site", type=Path, help="an already built site (default: build one)")
    ap.add_argument("--pages", default="", help="comma-separated slugs (default: all)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--write-baseline", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    ap.add_argument(
        "--against", type=Path, help="another built site (e.g. of main) measured page by page in the same run"
    )
    a = ap.parse_args(argv)
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else None
    slugs = [s for s in a.pages.split(",") if s] or None
    figures = measure(a.site, repeats=a.repeats, slugs=slugs, against=a.against)
    if a.against:
        figures, ref = figures
        baseline, group = {"pages": {"figures": ref}}, f"vs {a.against}, same run"
    if a.json:
        a.json.write_text(json.dumps({"figures": figures, "against": ref} if a.against else figures, indent=1))
    if a.write_baseline:
        write_baseline(figures, a.repeats)
    print_table(compare_rows(figures, baseline, **({"group": group} if a.against else {})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
