"""Embedding (issue 13.3, docs/embedding.md): controls in the URL fragment, #embed, the iframe height message.

The host page is a file:// HTML file made from the plain-HTML snippet of docs/embedding.md (its listener sizes
the iframe from the nilmbuild:height message), so the documented snippet is the one under test.
"""

import re
from pathlib import Path

import pytest

from nilmbuild.site.pages import NAV_ORDER

DOCS = Path(__file__).resolve().parents[2] / "docs" / "embedding.md"


def docs_html_snippet() -> str:
    """The first ```html block of docs/embedding.md (the plain-HTML snippet)."""
    return re.search(r"```html\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S).group(1)


def host_page(tmp_path, site, slug, fragment, height=150) -> Path:
    """A host HTML file in tmp: the docs snippet pointing at site/SLUG.html#FRAGMENT, recording every message."""
    snippet = docs_html_snippet()
    src = (Path(site) / f"{slug}.html").resolve().as_uri() + fragment
    snippet = re.sub(r'src="[^"]*"', f'src="{src.replace("&", "&amp;")}"', snippet, count=1)
    snippet = snippet.replace("height:480px", f"height:{height}px")
    host = tmp_path / f"host-{slug}.html"
    host.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>host</title>"
        "<script>window.msgs = []; addEventListener('message', function (e) { msgs.push(e.data); });</script>"
        "</head><body style='margin:0;width:900px'><h1>My docs</h1>\n" + snippet + "\n<p>after</p></body></html>",
        encoding="utf-8",
    )
    return host


def open_host(page_at, host):
    """The host page, without waiting for its iframe's load event (a slow machine can take longer than goto's 30 s)."""
    page = page_at("about:blank")
    page.goto(Path(host).resolve().as_uri(), wait_until="domcontentloaded")
    page.wait_for_function("window.frames.length > 0")
    return page


def inner_frame(page):
    return next(f for f in page.frames if f != page.main_frame)


def settled_messages(page, quiet_ms=1200, timeout_ms=60_000):
    """Wait for the first height message, then until no new one came for quiet_ms; return them all."""
    page.wait_for_function("msgs.some(m => m && m.type === 'nilmbuild:height')", timeout=timeout_ms)
    n = -1
    for _ in range(int(timeout_ms / quiet_ms)):
        msgs = page.evaluate("msgs")
        if len(msgs) == n:
            return msgs
        n = len(msgs)
        page.wait_for_timeout(quiet_ms)
    raise AssertionError(f"height messages never settled: {page.evaluate('msgs')}")


def test_host_receives_height_and_deep_linked_head(nb, page_at, built_site, tmp_path):
    page = open_host(page_at, host_page(tmp_path, built_site, "attention", "#embed&layer=1&head=3&sample=5"))
    msgs = settled_messages(page)
    frame = inner_frame(page)
    nb.wait_ready(frame, timeout=60_000)
    heights = [m for m in msgs if m.get("type") == "nilmbuild:height"]
    assert heights and all(set(m) == {"type", "page", "height", "version"} for m in heights)
    assert all(m["page"] == "attention" and isinstance(m["height"], int) and m["version"] == 1 for m in heights)
    last = heights[-1]["height"]
    # the documented listener sized the iframe from the message, and the page's content fits that height
    assert page.locator("iframe").evaluate("f => f.getBoundingClientRect().height") == pytest.approx(last, abs=0.5)
    assert last >= 150 and frame.evaluate("document.documentElement.scrollHeight") <= last
    # the deep-linked state rendered (test hook, the head menu, and the big heatmap draws head 3)
    n_samples = frame.locator("#att-sample option").count()  # sample 5 exists only in a large enough capture
    assert frame.evaluate("[nilmbuild.test.state.layer, nilmbuild.test.state.head, nilmbuild.test.state.sample]") == [
        1,
        3,
        min(5, n_samples - 1),
    ]
    assert frame.evaluate("nilmbuild.test.heatmaps[0].head") == 3
    assert frame.locator("#att-head").input_value() == "3"
    assert (
        frame.evaluate("document.documentElement.classList.contains('nb-embed')")
        and not frame.locator(".nb-header").is_visible()
    )
    assert not frame.locator(".nb-footer").is_visible()


@pytest.mark.parametrize("slug", NAV_ORDER)
def test_every_page_sizes_its_frame_in_a_few_messages(nb, page_at, built_site, tmp_path, slug):
    """No growth loop: the frame set to the reported height reports the same height (or none) again."""
    page = open_host(page_at, host_page(tmp_path, built_site, slug, "#embed"))
    msgs = settled_messages(page)
    nb.wait_ready(inner_frame(page), timeout=60_000)
    msgs = settled_messages(page)
    heights = [m["height"] for m in msgs if m.get("type") == "nilmbuild:height" and m.get("page") == slug]
    assert 1 <= len(heights) <= 4, heights
    assert page.locator("iframe").evaluate("f => f.getBoundingClientRect().height") == pytest.approx(
        heights[-1], abs=0.5
    )


def test_no_message_outside_embed_mode(page_at, nb, built_site, tmp_path):
    page = open_host(page_at, host_page(tmp_path, built_site, "gate", "#device=1", height=400))
    frame = inner_frame(page)
    nb.wait_ready(frame, timeout=60_000)
    page.wait_for_timeout(500)
    assert page.evaluate("msgs") == []
    assert frame.locator(".nb-header").is_visible()


#: slug -> (fragment, JS expression over the page's test hooks / DOM, expected value)
DEEP_LINKS = {
    "index": ("sample=1", "nilmbuild.test.state.sample", 1),
    "why": (
        "method=saliency&device=fridge&target=step&step=100",
        "[nilmbuild.test.why.S.method, nilmbuild.test.why.S.device, nilmbuild.test.why.targetOf().lo, "
        "nilmbuild.test.why.targetOf().point]",
        ["saliency", 2, 100, True],
    ),
    "playground": (
        "start=1&layer=1&head=2&t=100",
        "[nilmbuild.test.playground.startIdx, nilmbuild.test.playground.layer, nilmbuild.test.playground.head, "
        "nilmbuild.test.playground.query]",
        [1, 1, 2, 100],
    ),
    "data": (
        "zoom=3&window=1",
        "[document.getElementById('raw-zoom').value, nilmbuild.test.plots.raw.opts.x.min, "
        "document.getElementById('feature-sample').value]",
        ["3", 3, "1"],
    ),
    "forward": (
        "sample=1&stage=4&alayer=2&ahead=5",
        "[nilmbuild.test.state.sample, nilmbuild.test.state.stage, nilmbuild.test.anim.state.layer, "
        "nilmbuild.test.anim.state.head]",
        [1, 4, 2, 5],
    ),
    "embedding": (
        "sample=1&t=100&channel=2",
        "[nilmbuild.test.state.sample, nilmbuild.test.state.t, nilmbuild.test.state.ch]",
        [1, 100, 2],
    ),
    "encoder": (
        "layer=2&t=50&scale=shared",
        "[nilmbuild.test.state.layer, nilmbuild.test.state.pos, nilmbuild.test.state.scale, "
        "document.getElementById('enc-tab-2').getAttribute('aria-selected')]",
        [2, 50, "shared", "true"],
    ),
    "attention": (
        "layer=1&head=3&sample=1&mask=0&t=100",
        "[nilmbuild.test.state.layer, nilmbuild.test.state.head, "
        "nilmbuild.test.state.sample, nilmbuild.test.state.masked, nilmbuild.test.state.query]",
        [1, 3, 1, False, 100],
    ),
    "film": (
        "device=1&layer=1&gscale=1.5",
        "[nilmbuild.test.state.dev, nilmbuild.test.state.layer, nilmbuild.test.state.p.gs]",
        [1, 1, 1.5],
    ),
    "gate": (
        "device=2&mode=soft&threshold=0.37",
        "[nilmbuild.test.state.dev, nilmbuild.test.state.mode, nilmbuild.test.state.threshold]",
        [2, "soft", 0.37],
    ),
    "disaggregation": ("view=day&step=1", "[nilmbuild.test.state.mode, nilmbuild.test.state.step]", ["day", 1]),
    "training": (
        "component=total&epoch=2",
        "[document.getElementById('loss-component').value, document.getElementById('pc-epoch').value]",
        ["total", "2"],
    ),
}


def test_every_page_has_deep_links():
    assert set(DEEP_LINKS) == set(NAV_ORDER)


@pytest.mark.parametrize("slug", sorted(DEEP_LINKS))
def test_deep_link_opens_on_that_state(nb, page_at, built_site, slug):
    fragment, expr, want = DEEP_LINKS[slug]
    page = page_at((built_site / f"{slug}.html").resolve().as_uri() + "#" + fragment)
    nb.wait_ready(page, timeout=60_000)
    assert page.evaluate(expr) == want
    for part in fragment.split("&"):  # the page rewrote the fragment with every key; ours are kept
        assert part in page.evaluate("location.hash").lstrip("#").split("&"), part


def test_control_change_rewrites_hash_without_history(nb, page_at, built_site):
    page = page_at((built_site / "attention.html").resolve().as_uri() + "#layer=1")
    nb.wait_ready(page, timeout=60_000)
    n = page.evaluate("history.length")
    assert "layer=1" in page.evaluate("location.hash")
    for head in ("5", "2", "4"):
        page.select_option("#att-head", head)
        page.wait_for_function(f"location.hash.includes('head={head}')")
    page.fill("#att-query", "33")
    page.wait_for_function("location.hash.includes('t=33')")
    assert page.evaluate("history.length") == n
    h = page.evaluate("location.hash")
    assert h.startswith("#sample=") and "&layer=1&head=4&" in h and "&t=33&" in h
    # the rewritten fragment is a deep link to the same state
    page2 = page_at((built_site / "attention.html").resolve().as_uri() + h)
    nb.wait_ready(page2, timeout=60_000)
    assert page2.evaluate("[nilmbuild.test.state.layer, nilmbuild.test.state.head, nilmbuild.test.state.query]") == [
        1,
        4,
        33,
    ]


def test_embed_flag_is_kept_and_hashchange_applies(nb, page_at, built_site):
    page = page_at((built_site / "gate.html").resolve().as_uri() + "#embed&device=1")
    nb.wait_ready(page, timeout=60_000)
    page.select_option("#ctl-mode", "soft")
    page.wait_for_function("location.hash.includes('mode=soft')")
    assert page.evaluate("location.hash").startswith("#embed&") and page.evaluate(
        "document.documentElement.classList.contains('nb-embed')"
    )
    page.evaluate("location.hash = '#embed&device=3'")  # a host switching the view
    page.wait_for_function("nilmbuild.test.state.dev === 3")


GARBAGE = (
    "#layer=99&head=-1&sample=abc&t=1e9&mask=maybe&%E0%A4%A=1&&=&scale=%3Cscript%3E&cmap=&head=2"
    "&__proto__=1&constructor=x&embed=zzz"
)


def test_garbage_in_the_hash_is_clamped_or_ignored(nb, page_at, built_site):
    page = page_at((built_site / "attention.html").resolve().as_uri() + GARBAGE)
    nb.wait_ready(page, timeout=60_000)  # page_at asserts no page error / console error at teardown
    n_layers = page.locator("#att-layer option").count()
    n_t = int(page.get_attribute("#att-query", "max"))
    got = page.evaluate(
        "[nilmbuild.test.state.layer, nilmbuild.test.state.head, nilmbuild.test.state.sample, nilmbuild.test.state.query, "
        "nilmbuild.test.state.masked, nilmbuild.test.state.mode, nilmbuild.test.state.cmap]"
    )
    assert got == [n_layers - 1, 0, 0, n_t, True, "log", "viridis"]  # clamped, clamped, ignored, clamped, ignored...
    assert not page.evaluate(
        "document.documentElement.classList.contains('nb-embed')"
    )  # embed=zzz is not the embed flag


@pytest.mark.parametrize(
    "fragment", ["#layer", "#=", "#%", "#&&&", "#layer=1e400", "#head=0x3", "#t=NaN", "#" + "a=1&" * 500]
)
def test_odd_fragments_do_not_throw(nb, page_at, built_site, fragment):
    page = page_at((built_site / "attention.html").resolve().as_uri() + fragment)
    nb.wait_ready(page, timeout=60_000)
    assert page.evaluate("nilmbuild.test.state.head") == 0


def test_overview_generates_snippets_for_the_state(nb, page_at, built_site, tmp_path):
    page = page_at((built_site / "index.html").resolve().as_uri() + "#sample=1")
    nb.wait_ready(page, timeout=60_000)
    text = page.input_value("#docs-snippet")
    assert 'src="index.html#embed&amp;sample=1"' in text and "nilmbuild:height" in text
    page.select_option("#flow-sample", "2")
    assert 'src="index.html#embed&amp;sample=2"' in page.input_value("#docs-snippet")
    page.fill("#docs-link", "https://example.org/site/attention.html#layer=1&head=3&sample=1")
    assert page.input_value("#docs-page") == "attention.html"
    assert 'src="attention.html#embed&amp;layer=1&amp;head=3&amp;sample=1"' in page.input_value("#docs-snippet")
    page.select_option("#docs-format", "sphinx")
    rst = page.input_value("#docs-snippet")
    assert rst.startswith('.. raw:: html\n\n   <iframe data-nilmbuild src="attention.html#embed&amp;layer=1')
    page.select_option("#docs-format", "html")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("#docs-copy")
    page.wait_for_function("document.getElementById('docs-status').textContent === 'Copied.'")
    snippet = page.input_value("#docs-snippet")
    assert page.nb_errors == []
    page.close()  # the overview's animation would compete with the frame below
    # the generated snippet works: as a host page, it sizes the frame and opens on head 3
    host = tmp_path / "generated-host.html"
    host.write_text(
        "<!doctype html><meta charset=utf-8><body style='margin:0;width:900px'>"
        "<script>window.msgs = []; addEventListener('message', function (e) { msgs.push(e.data); });</script>"
        + snippet.replace('src="', 'src="' + built_site.resolve().as_uri() + "/"),
        encoding="utf-8",
    )
    hp = open_host(page_at, host)
    frame = inner_frame(hp)
    nb.wait_ready(frame, timeout=60_000)
    last = settled_messages(hp)[-1]
    assert last["page"] == "attention"
    assert hp.locator("iframe").evaluate("f => f.style.height") == f"{last['height']}px"
    assert frame.evaluate("nilmbuild.test.state.head") == 3
