"""The site infrastructure in a real browser: a fixture page with a heatmap2d grid of a known 4x4 matrix."""

from __future__ import annotations

import io

import pytest

CELL = 80  # the 320x320 CSS-pixel canvas shows 4x4 cells


def _open(nb, page_at, infra_site, suffix=""):
    page = page_at((infra_site / "fixture.html").resolve().as_uri() + suffix)
    nb.wait_ready(page)
    return page


def test_loads_offline_ready_no_errors(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    assert page.evaluate("document.documentElement.dataset.ready") == "true"
    assert page.evaluate(
        "typeof nilmbuild.test.heatmap2d === 'function' && typeof nilmbuild.test.msgpack.decode === 'function'"
    )
    assert page.evaluate("nilmbuild.test.page().slug") == "fixture"
    assert page.evaluate("nilmbuild.test.shaders['blit.frag'].includes('texture2D')")
    # blobs and template context survive '</script' and markup, escaped
    assert page.locator("#note").text_content() == nb.NOTE_TEXT
    assert "Escaped: </script><i>not italic</i>" in page.locator(".nb-explanation").text_content()
    assert page.locator(".nb-explanation i").count() == 0
    assert page.locator(".nb-spec-section").first.text_content().strip() == "spec §0.1"
    assert page.nb_requests == [] and page.nb_errors == []  # (teardown checks again after everything)


def test_harness_records_network_requests(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    page.evaluate("fetch('https://example.invalid/x').catch(() => 0)")
    page.wait_for_timeout(200)
    assert any("example.invalid" in u for u in page.nb_requests)
    page.nb_requests.clear()
    page.nb_errors.clear()  # the aborted fetch logs a console error


def test_ready_event_fires_once(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    n = page.evaluate("""() => { let n = 0; window.addEventListener('nilmbuild:ready', () => n++);
                                nilmbuild.test.ready(); nilmbuild.test.ready(); return n; }""")
    assert n == 0  # already ready: no second event


def test_heatmap_cell_colours(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    m = nb.fixture_matrix()
    vmin, vmax = float(m.min()), float(m.max())
    for r, c in [(0, 0), (1, 2), (3, 3), (2, 1)]:
        t = (float(m[r, c]) - vmin) / (vmax - vmin)
        want = page.evaluate(f"nilmbuild.test.colormaps.map('viridis', {t})")
        got = nb.pixel(page, "#hm", c * CELL + CELL // 2, r * CELL + CELL // 2)
        assert all(abs(g - w) <= 2 for g, w in zip(got, want)), (r, c, got, want)
    # row 0 is at the top: the darkest viridis colour (vmin) is the top-left cell
    assert sum(nb.pixel(page, "#hm", 5, 5)) < sum(nb.pixel(page, "#hm", 315, 315))


def test_heatmap_golden(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    nb.screenshot_matches(page, "fixture-heatmap", tolerance=3, selector="#hm")


def test_hover_tooltip_exact_value(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    box = page.locator("#hm").bounding_box()
    page.mouse.move(box["x"] + 2 * CELL + 40, box["y"] + 1 * CELL + 40)
    tip = page.locator("#nb-tooltip")
    assert tip.is_visible()
    assert tip.text_content() == f"row 1, col 2: {float(nb.fixture_matrix()[1, 2]):g}"  # -0.5
    page.mouse.move(box["x"] + 3 * CELL + 10, box["y"] + 3 * CELL + 10)
    assert tip.text_content() == "row 3, col 3: 1.75"
    page.mouse.move(1, box["y"] + 400)
    assert not tip.is_visible()


def test_plot_hover(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    # a step series holds y[30] from x = 30 to 31 (that is what is drawn): mid-step reads sample 30
    x = page.evaluate("nilmbuild.test.plot.xToPx(30.5)")
    box = page.locator("#plot").bounding_box()
    lane = page.evaluate("nilmbuild.test.plot.layout.lanes[1]")
    page.mouse.move(box["x"] + x, box["y"] + lane["y"] + lane["height"] / 2)
    assert page.locator("#nb-tooltip").text_content() == "time = 30 min\nkettle: 60"


def test_embed_mode_hides_chrome(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site, "#embed")
    assert page.evaluate("nilmbuild.test.isEmbed()")
    for sel in [".nb-header", ".nb-nav", ".nb-intro", ".nb-footer"]:
        assert not page.locator(sel).is_visible(), sel
    box = page.locator("#hm").bounding_box()
    assert box["width"] > 450 and box["height"] > 300  # fills the frame, not the fixed 320 px
    # the heatmap was redrawn at the new size: the bottom-right cell has vmax's colour
    want = page.evaluate("nilmbuild.test.colormaps.map('viridis', 1)")
    got = nb.pixel(page, "#hm", box["width"] - 10, box["height"] - 10)
    assert all(abs(g - w) <= 2 for g, w in zip(got, want)), (got, want)


def test_iframe_embedding(nb, page_at, infra_site):
    page = page_at(infra_site / "parent.html")
    frame = page.frame_locator("#f")
    frame.locator("html[data-ready='true']").wait_for(timeout=15000)
    inner = next(f for f in page.frames if f.url.endswith("fixture.html#embed"))
    nb.wait_ready(inner)
    assert not frame.locator(".nb-header").is_visible()
    # top-left cell colour, seen through the iframe
    fbox = page.locator("#f").bounding_box()
    cbox = frame.locator("#hm").bounding_box()
    assert cbox["x"] >= fbox["x"] and cbox["width"] <= fbox["width"]
    want = inner.evaluate("nilmbuild.test.colormaps.map('viridis', 0)")
    got = nb.pixel(page, "#f", cbox["x"] - fbox["x"] + 5, cbox["y"] - fbox["y"] + 5)
    assert all(abs(g - w) <= 2 for g, w in zip(got, want)), (got, want)


def test_save_png_download(nb, page_at, infra_site):
    from PIL import Image

    page = _open(nb, page_at, infra_site)
    with page.expect_download() as dl:
        page.get_by_role("button", name="Save PNG").click()
    d = dl.value
    assert d.suggested_filename == "fixture-heatmap.png"
    data = open(d.path(), "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    img = Image.open(io.BytesIO(data)).convert("RGB")
    assert img.size == (320, 320)
    want = page.evaluate("nilmbuild.test.colormaps.map('viridis', 1)")
    assert all(abs(g - w) <= 2 for g, w in zip(img.getpixel((315, 315)), want))


def test_keyboard_reaches_controls_and_moves_cursor(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    reached = []
    for _ in range(40):
        page.keyboard.press("Tab")
        reached.append(
            page.evaluate(
                "(e => e.id || e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''))"
                "(document.activeElement)"
            )
        )
    assert "hm" in reached and "plot" in reached
    assert any(r.startswith("nb-ctl-") for r in reached), reached  # the colormap <select>
    assert any("nb-save-png" in r for r in reached), reached
    page.locator("#hm").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    assert page.locator("#nb-tooltip").text_content() == "row 1, col 1: -0.75"
    assert page.locator(".nb-cell-cursor").is_visible()
    # the colormap select is operable from the keyboard and redraws
    sel = page.get_by_label("Colormap")
    sel.select_option("cividis")
    want = page.evaluate("nilmbuild.test.colormaps.map('cividis', 0)")
    got = nb.pixel(page, "#hm", 5, 5)
    assert all(abs(g - w) <= 2 for g, w in zip(got, want)), (got, want)
    assert page.locator(".nb-legend").get_attribute("data-cmap") == "cividis"


def test_fail_shows_readable_error(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    page.evaluate(
        "document.documentElement.dataset.ready = ''; nilmbuild.test.fail(new Error('WebGL is not available in this browser: test'))"
    )
    assert page.evaluate("document.documentElement.dataset.ready") == "error"
    assert "WebGL is not available in this browser: test" in page.locator("#nb-error").text_content()
    assert page.locator("#nb-error").is_visible()
    page.nb_errors.clear()


def test_webgl_unavailable_fails_cleanly(nb, page_at, built_site):
    """A WebGL page (attention) in a browser without WebGL: one readable message, no crash."""
    page_ctx = page_at("about:blank")
    page_ctx.add_init_script(
        "const get = HTMLCanvasElement.prototype.getContext;"
        "HTMLCanvasElement.prototype.getContext = function (t, o) { return /webgl/.test(t) ? null : get.call(this, t, o); };"
    )
    page_ctx.goto((built_site / "attention.html").resolve().as_uri())
    with pytest.raises(AssertionError, match="WebGL is not available in this browser"):
        nb.wait_ready(page_ctx)
    page_ctx.nb_errors.clear()


def test_index_page(nb, page_at, infra_site):
    page = page_at(infra_site / "index.html")
    nb.wait_ready(page)
    links = page.eval_on_selector_all(".nb-toc a", "els => els.map(e => e.getAttribute('href'))")
    assert links == ["fixture.html"]
    page.get_by_role("link", name="Fixture heatmap").first.click()
    nb.wait_ready(page)
    assert page.url.endswith("fixture.html")


def test_small_multiples_in_one_canvas(nb, page_at, infra_site):
    """8 heatmaps in one 2D canvas, each in its own box (constant value k per panel), the gaps left white."""
    page = _open(nb, page_at, infra_site)
    page.evaluate("""() => {
      const c = document.createElement('canvas');
      c.id = 'multi'; c.className = 'nb-canvas'; c.style.width = '400px'; c.style.height = '200px';
      document.getElementById('nb-visual').prepend(c);
      nilmbuild.test.fitCanvas(c);
      const boxes = [...Array(8).keys()].map(k => ({x: (k % 4) * 106, y: Math.floor(k / 4) * 104, width: 94, height: 96}));
      const hms = boxes.map((b, k) => nilmbuild.test.heatmap2d(c, {data: new Float32Array(6).fill(k), rows: 2, cols: 3,
                                                                   vmin: 0, vmax: 7, cmap: 'cividis'}));
      nilmbuild.test.clear2d(c);
      hms.forEach((h, k) => h.draw(boxes[k]));
      window.MULTI = {boxes, hms};
    }""")
    boxes = page.evaluate("MULTI.boxes")
    for k, b in enumerate(boxes):
        want = page.evaluate(f"nilmbuild.test.colormaps.map('cividis', {k} / 7)")
        got = nb.pixel(page, "#multi", b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
        assert all(abs(g - w) <= 2 for g, w in zip(got, want)), (k, got, want)
    assert nb.pixel(page, "#multi", boxes[0]["width"] + 4, 10) == (255, 255, 255)  # the gap stays clear
    assert page.evaluate("MULTI.hms[5].cellAt(MULTI.boxes[5].x + 1, MULTI.boxes[5].y + 1)") == {
        "row": 0,
        "col": 0,
        "value": 5,
    }


def test_heatmap2d_pixel_rule(nb, page_at, infra_site):
    """Every backing-store pixel of a heatmap2d box is the colormap colour of the cell under the pixel's centre
    (NaN cells: nanColor), in three boxes (apart) where cells span fractional pixel counts both ways, on one canvas; the rule is computed here from colormaps.map, pixel by pixel. Fails on a shifted pixel centre."""
    page = _open(nb, page_at, infra_site)
    got = page.evaluate("""() => {
      const T = nilmbuild.test, rows = 7, cols = 13, data = new Float32Array(rows * cols), vmin = -2, vmax = 6;
      for (let i = 0; i < data.length; i++) data[i] = Math.sin(i * 1.7) * 3 + (i % 5);
      data[3] = NaN; data[40] = NaN;
      const boxes = [{x: 3, y: 2, width: 29, height: 61}, {x: 40, y: 5, width: 211, height: 17}, {x: 0, y: 70, width: 256, height: 50}];
      const c = document.createElement('canvas'); c.style.width = '260px'; c.style.height = '124px';
      document.getElementById('nb-visual').prepend(c); T.fitCanvas(c);
      const hm = T.heatmap2d(c, {data, rows, cols, vmin, vmax, cmap: 'viridis', nanColor: [0.8, 0.1, 0.1, 1]});
      T.clear2d(c);
      boxes.forEach(b => hm.draw(b));
      const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let differ = 0, checked = 0, nan = 0;
      boxes.forEach(b => {
        for (let y = 0; y < b.height; y++) for (let x = 0; x < b.width; x++) {
          const r = Math.min(rows - 1, Math.floor((y + 0.5) / b.height * rows)), k = Math.min(cols - 1, Math.floor((x + 0.5) / b.width * cols));
          const v = data[r * cols + k];
          const want = v !== v ? [204, 26, 26] : T.colormaps.map('viridis', (v - vmin) / (vmax - vmin));
          if (v !== v) nan++;
          const o = 4 * ((y + b.y) * c.width + x + b.x);
          if (px[o] !== want[0] || px[o + 1] !== want[1] || px[o + 2] !== want[2]) differ++;
          checked++;
        }
      });
      return {differ, checked, nan};
    }""")
    assert got["checked"] > 18000 and got["nan"] > 100, got
    assert got["differ"] == 0, got


def test_patch_html_rewrites_only_what_changed(nb, page_at, infra_site):
    """dom_patch.patchHTML: same-shaped nodes are kept (the pages' tables repaint only changed cells)."""
    page = _open(nb, page_at, infra_site)
    got = page.evaluate("""() => {
      const t = document.createElement("table"); document.body.appendChild(t);
      const P = nilmbuild.test.patchHTML;
      P(t, "<tbody><tr><td class=a>1</td><td>x</td></tr></tbody><caption>c1</caption>");
      const td = t.querySelector("td.a"), cap = t.querySelector("caption");
      P(t, "<tbody><tr><td data-v='2'>2</td><td>x</td></tr><tr><td>new</td></tr></tbody><caption>c2</caption>");
      const kept = t.querySelector("td") === td && t.querySelector("caption") === cap;
      const after = [td.textContent, td.className, td.dataset.v, t.rows.length, cap.textContent];
      P(t, "<tbody><tr><th>h</th></tr></tbody>");   // another element in that place: replaced; extra nodes removed
      return {kept, after, html: t.innerHTML, replaced: t.querySelector("td") === null};
    }""")
    assert got["kept"]
    assert got["after"] == ["2", "", "2", 2, "c2"]
    assert got["html"] == "<tbody><tr><th>h</th></tr></tbody>" and got["replaced"]


def test_set_legends_updates_the_legends_in_place(nb, page_at, infra_site):
    page = _open(nb, page_at, infra_site)
    got = page.evaluate("""() => {
      const el = document.createElement("div"); document.body.appendChild(el);
      const S = nilmbuild.test.setLegends;
      const first = S(el, [["viridis", 0, 1, "a"], ["burd", -2, 2, "b", 5]]);
      const src = first[0].querySelector("img").getAttribute("src");
      const again = S(el, [["cividis", 0, 4, "a2"]]);
      const fig = el.querySelector(".nb-legend");
      return {same: again[0] === first[0], n: el.querySelectorAll(".nb-legend").length, label: fig.querySelector("figcaption").textContent,
              cmap: fig.dataset.cmap, ticks: Array.from(fig.querySelectorAll(".nb-legend-ticks span")).map(s => s.textContent),
              ticks5: first[1].querySelectorAll(".nb-legend-ticks span").length,
              srcChanged: fig.querySelector("img").getAttribute("src") !== src, alt: fig.querySelector("img").alt};
    }""")
    assert got["same"] and got["n"] == 1 and got["label"] == "a2" and got["cmap"] == "cividis"
    assert got["ticks"] == ["0", "2", "4"] and got["ticks5"] == 5
    assert got["srcChanged"] and got["alt"] == "colour scale cividis from 0 to 4"
