"""The notebook helper's <iframe srcdoc> renders the page in Chromium with its state in the URL fragment."""

from nilmbuild import notebook


def test_srcdoc_iframe_renders_in_embed_mode(browser, site_context, tmp_path):
    host = tmp_path / "notebook-output.html"
    host.write_text(
        "<!doctype html><meta charset=utf-8><body>"
        + notebook.show("gate", ctx=site_context, height=500, threshold=0.5)
        + "</body>",
        encoding="utf-8",
    )
    page = browser.new_page()
    try:
        page.goto(host.as_uri())
        frame = page.frame_locator("iframe")
        frame.locator("html[data-ready]").wait_for(state="attached", timeout=60_000)
        inner = next(f for f in page.frames if f != page.main_frame)
        inner.wait_for_function("document.documentElement.dataset.ready !== undefined", timeout=60_000)
        assert inner.evaluate("document.documentElement.dataset.ready") == "true"
        h = inner.evaluate("location.hash")  # the page rewrites it with its full state (docs/embedding.md)
        assert h.startswith("#embed&") and "threshold=0.5" in h.split("&")
        assert inner.evaluate("nilmbuild.test.state.threshold") == 0.5
        assert inner.evaluate("document.documentElement.classList.contains('nb-embed')")
    finally:
        page.close()
