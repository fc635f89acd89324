"""Playwright (sync API) harness for the site pages, run in the system Chromium with SwiftShader WebGL.

Fixtures: ``browser`` (session), ``infra_site`` (the fixture site, session), ``upstream_site`` (the site of an
imported CondiNILM or original-NILMFormer checkpoint, session, one per fixture), ``page_at(path_or_url)`` (a fresh
page on a file:// URL: every non-file request is aborted and recorded in ``page.nb_requests``; console
errors and page errors are collected in ``page.nb_errors`` and asserted empty at teardown), and the helpers
``wait_ready(page)``, ``pixel(page, selector, x, y)`` and ``screenshot_matches(page, name, tolerance)``, plus
``open_page``, ``element_rgb``, ``canvas_rgb``, ``scrolled_pixel``, ``canvas_pixel`` and ``client_point`` for the site's pages,
all on the ``nb`` fixture.
Goldens live in tests/browser/goldens/; set NILMBUILD_UPDATE_GOLDENS=1 to (re)write them.
"""

from __future__ import annotations

import base64
import io
import os
import re
from pathlib import Path

import msgpack
import numpy as np
import pytest

from nilmbuild.site.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (one launch recipe for tests and bench)

HERE = Path(__file__).parent
GOLDENS = HERE / "goldens"
ARTIFACTS = HERE.parents[1] / "tests" / "artifacts"
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"missing dependency: Chromium at {CHROMIUM}: run `make setup`, or set NILMBUILD_CHROMIUM")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def fixture_matrix() -> np.ndarray:
    """The known 4x4 matrix: cell (r, c) = (4r + c) * 0.25 - 2 (exact in float32)."""
    return (np.arange(16, dtype=np.float32) * 0.25 - 2.0).reshape(4, 4)


NOTE_TEXT = "blob text with </script><!-- tricky --> & <b>markup</b>"


@pytest.fixture(scope="session")
def infra_site(tmp_path_factory) -> Path:
    """A small site built by build_site from tests/browser/fixtures/fixture_heatmap.html, plus parent.html
    (an iframe host). Returns the site folder."""
    from nilmbuild.site.build import PageSpec, build_site

    m = fixture_matrix()
    blob = msgpack.packb(
        {"rows": 4, "cols": 4, "vmin": float(m.min()), "vmax": float(m.max()), "data": m.astype("<f4").tobytes()}
    )
    pages = [
        PageSpec(slug="index", title="Overview", template="index.html"),
        PageSpec(
            slug="fixture",
            title="Fixture heatmap",
            template="fixture_heatmap.html",
            section="0.1",
            entry="tests/browser/fixtures/fixture_heatmap.js",
            blobs={"matrix": blob, "note": NOTE_TEXT.encode()},
            context={"explain": "Escaped: </script><i>not italic</i>"},
            summary="Test fixture.",
        ),
    ]
    out = tmp_path_factory.mktemp("site") / "site"
    build_site(out, pages, {"checkpoint": "test.pt", "data_source": "synthetic"}, template_dirs=[HERE / "fixtures"])
    (out / "parent.html").write_text(
        "<!doctype html><html><body style='margin:0'><h1 style='font-size:14px;margin:4px'>host</h1>"
        "<iframe id='f' src='fixture.html#embed' style='width:420px;height:380px;border:0'></iframe></body></html>"
    )
    return out


UPSTREAM = HERE.parent / "fixtures" / "upstream"
#: The upstream reference fixtures a site is built for, and the file `nilmbuild import` would read for each.
UPSTREAM_CASES = {"condinilm_small": "last.ckpt", "nilmformer_small": "NILMFormer_0.pt"}


def upstream_checkpoint(name: str, out: Path) -> Path:
    """The fixture as nilmbuild import writes it: the upstream weights + scaler, provenance by file name + sha256."""
    import hashlib
    import sys

    sys.path.insert(0, str(HERE.parent))
    from test_upstream_models import _build

    from nilmbuild.model.checkpoint import save_checkpoint
    from nilmbuild.model.upstream import scalers_from_nilmscaler

    model, _, fields = _build(name)
    src = UPSTREAM / name / UPSTREAM_CASES[name]
    files = {"checkpoint": {"name": src.name, "sha256": hashlib.sha256(src.read_bytes()).hexdigest()}}
    cfg = model.cfg
    prov = {
        "upstream": {"architecture": cfg.arch, "files": files},
        "prep": {"resample_s": cfg.step_s, "window": cfg.window, "devices": list(cfg.devices)},
    }
    path = out / f"{name}.pt"
    save_checkpoint(path, model, scalers=scalers_from_nilmscaler(fields), provenance=prov)
    return path


@pytest.fixture(scope="session", params=sorted(UPSTREAM_CASES))
def upstream_site(request, tmp_path_factory):
    """(site folder, the slugs built for its architecture, the fixture's name): `nilmbuild site -c OUT.pt` of an
    imported upstream checkpoint, built once per session for every browser test module that asks for it. The
    checkpoint lies beside the site folder: SITE.parent / NAME.pt."""
    from click.testing import CliRunner

    from nilmbuild.cli import main
    from nilmbuild.site.pages import nav_order_for

    tmp = tmp_path_factory.mktemp(request.param)
    ckpt = upstream_checkpoint(request.param, tmp)
    res = CliRunner().invoke(main, ["site", "-c", str(ckpt), "-o", str(tmp / "site"), "-q", "--no-cache"])
    assert res.exit_code == 0, res.output
    arch = request.param.split("_")[0]
    return tmp / "site", nav_order_for(arch), request.param


@pytest.fixture
def page_at(browser, request):
    """page_at(path_or_url) -> a Playwright page opened on it (file:// for paths)."""
    contexts = []

    def open_(target, viewport=(900, 800)):
        ctx = browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]}, device_scale_factor=1, accept_downloads=True
        )
        contexts.append(ctx)
        page = ctx.new_page()
        page.nb_requests = []
        page.nb_errors = []

        def route(r):
            if r.request.url.startswith(LOCAL_SCHEMES):
                r.continue_()
            else:
                page.nb_requests.append(r.request.url)
                r.abort()

        ctx.route("**/*", route)
        ctx.on(
            "request",
            lambda req: (
                None
                if req.url.startswith(LOCAL_SCHEMES) or req.url in page.nb_requests
                else page.nb_requests.append(req.url)
            ),
        )
        page.on(
            "console",
            lambda msg: page.nb_errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None,
        )
        page.on("pageerror", lambda exc: page.nb_errors.append(f"pageerror: {exc}"))
        url = str(target) if re.match(r"^[a-z]+:", str(target)) else Path(target).resolve().as_uri()
        page.goto(url)
        page.nb_url = url
        return page

    yield open_
    for ctx in contexts:
        for page in ctx.pages:
            assert page.nb_errors == [], f"console errors on {page.nb_url}: {page.nb_errors}"
            assert page.nb_requests == [], f"network requests attempted from {page.nb_url}: {page.nb_requests}"
        ctx.close()


def wait_ready(page_or_frame, timeout=15000):
    """Wait for <html data-ready="true">; raise with the page's error text if it says "error"."""
    page_or_frame.wait_for_function(
        "['true', 'error'].includes(document.documentElement.dataset.ready)", timeout=timeout
    )
    state = page_or_frame.evaluate("document.documentElement.dataset.ready")
    if state == "error":
        msg = page_or_frame.evaluate("(document.getElementById('nb-error') || {}).textContent || '(no message)'")
        raise AssertionError(f"page failed: {msg}")


def _png(data: bytes):
    from PIL import Image

    return Image.open(io.BytesIO(data)).convert("RGB")


def pixel(page, selector, x, y):
    """(r, g, b) at CSS pixel (x, y) of the element, read from a 1x1 screenshot clip (what the user sees)."""
    flush(page)
    box = page.locator(selector).bounding_box()
    assert box, f"{selector} not visible"
    img = _png(page.screenshot(clip={"x": box["x"] + x, "y": box["y"] + y, "width": 1, "height": 1}))
    return img.getpixel((0, 0))


def open_page(page_at, site, slug, viewport=(1280, 900)):
    """page_at(site/SLUG.html, viewport) once it is ready (wait_ready)."""
    page = page_at(Path(site) / f"{slug}.html", viewport=viewport)
    wait_ready(page)
    return page


def element_rgb(page, selector, dtype=np.int16):
    """A screenshot of the element as an (H, W, 3) array of `dtype`."""
    flush(page)
    return np.asarray(_png(page.locator(selector).screenshot()), dtype=dtype)


def canvas_rgb(page, selector, dtype=np.int16):
    """A canvas's own pixels (its backing store via toDataURL) as an (H, W, 3) array: independent of page
    scroll and sub-pixel compositing, unlike an element screenshot."""
    flush(page)
    url = page.evaluate("s => document.querySelector(s).toDataURL('image/png')", selector)
    return np.asarray(_png(base64.b64decode(url.split(",", 1)[1])), dtype=dtype)


def scrolled_pixel(page, selector, x, y):
    """pixel() after scrolling the point (CSS px inside `selector`) into the middle of the viewport."""
    page.evaluate(
        "([s, y]) => { const r = document.querySelector(s).getBoundingClientRect();"
        " window.scrollBy(0, r.top + y - window.innerHeight / 2); }",
        [selector, y],
    )
    return pixel(page, selector, x, y)


def flush(page):
    """Draw the views a page left for later while they were off screen (core.flushDeferred), if it has any."""
    page.evaluate("window.nilmbuild && nilmbuild.test && nilmbuild.test.flush && nilmbuild.test.flush()")


def canvas_pixel(page, selector, x, y):
    """(r, g, b) of the canvas' own pixel (x, y) (device pixel ratio 1: CSS px = canvas px), read back from the
    WebGL drawing buffer: exact even when the canvas sits at a fractional page position. Views left for later
    while off screen (core.onScreen) are drawn first."""
    return tuple(
        page.evaluate(
            """([sel, x, y]) => {
        if (window.nilmbuild && nilmbuild.test && nilmbuild.test.flush) nilmbuild.test.flush();
        const c = document.querySelector(sel), t = document.createElement("canvas");
        t.width = c.width; t.height = c.height;
        const g = t.getContext("2d"); g.drawImage(c, 0, 0);
        return Array.from(g.getImageData(x, y, 1, 1).data.slice(0, 3)); }""",
            [selector, int(x), int(y)],
        )
    )


def client_point(page, selector, box, r, c, rows, cols):
    """Whole page coordinates inside cell (r, c) of `box` (CSS px within the canvas) and the cell the page maps
    them to (the page reads clientX/Y minus the canvas' possibly fractional rectangle)."""
    cb = page.locator(selector).bounding_box()
    X = int(np.ceil(cb["x"] + box["x"] + (c + 0.3) * box["width"] / cols))
    Y = int(np.ceil(cb["y"] + box["y"] + (r + 0.3) * box["height"] / rows))
    return (
        X,
        Y,
        int((Y - cb["y"] - box["y"]) / box["height"] * rows),
        int((X - cb["x"] - box["x"]) / box["width"] * cols),
    )


HIDE_FINDINGS = """() => document.querySelectorAll('.nb-finding-anchor').forEach(a => { a.style.display = 'none'; })"""
SHOW_FINDINGS = """() => document.querySelectorAll('.nb-finding-anchor').forEach(a => { a.style.display = ''; })"""


def screenshot_matches(page, name, tolerance=3, selector=None):
    """Compare a screenshot (of `selector`, else the viewport) with goldens/NAME.png: every channel of every
    pixel within `tolerance`. NILMBUILD_UPDATE_GOLDENS=1 rewrites the golden. On mismatch the actual image
    is written to tests/artifacts/NAME.actual.png. The computed-finding callouts (story.js, checked by
    test_page_guided_path.py) are left out while the shot is taken: a golden holds a figure's drawing."""
    flush(page)
    page.evaluate(HIDE_FINDINGS)
    try:
        shot = page.locator(selector).screenshot() if selector else page.screenshot()
    finally:
        page.evaluate(SHOW_FINDINGS)
    golden = GOLDENS / f"{name}.png"
    if os.environ.get("NILMBUILD_UPDATE_GOLDENS") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(shot)
        return True
    if not golden.exists():
        raise AssertionError(f"no golden {golden}; create it with NILMBUILD_UPDATE_GOLDENS=1")
    a = np.asarray(_png(shot), dtype=np.int16)
    b = np.asarray(_png(golden.read_bytes()), dtype=np.int16)
    if a.shape != b.shape or np.abs(a - b).max() > tolerance:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / f"{name}.actual.png").write_bytes(shot)
        detail = (
            f"shape {a.shape} vs {b.shape}"
            if a.shape != b.shape
            else f"max diff {np.abs(a - b).max()}, {int((np.abs(a - b).max(axis=2) > tolerance).sum())} pixels over"
        )
        raise AssertionError(f"screenshot {name} differs from golden ({detail}); see {ARTIFACTS}/{name}.actual.png")
    return True


class _Helpers:
    """The helpers as one fixture, so tests need not import conftest: ``def test_x(nb): nb.wait_ready(page)``."""

    wait_ready = staticmethod(wait_ready)
    pixel = staticmethod(pixel)
    screenshot_matches = staticmethod(screenshot_matches)
    open_page = staticmethod(open_page)
    element_rgb = staticmethod(element_rgb)
    canvas_rgb = staticmethod(canvas_rgb)
    scrolled_pixel = staticmethod(scrolled_pixel)
    canvas_pixel = staticmethod(canvas_pixel)
    flush = staticmethod(flush)
    client_point = staticmethod(client_point)
    fixture_matrix = staticmethod(fixture_matrix)
    NOTE_TEXT = NOTE_TEXT


@pytest.fixture(scope="session")
def nb():
    return _Helpers
