"""Phones and narrow embeds (issue 35, item 4): no page scrolls sideways at 390x844 (a phone) nor at 640x480 (the
usual docs iframe); what is wider than the screen (tables, the menu) scrolls inside its own box."""

from __future__ import annotations

import pytest

from nilmbuild.site.pages import NAV_ORDER

SIZES = [(390, 844), (640, 480)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("slug", NAV_ORDER)
def test_no_sideways_scroll(nb, page_at, built_site, slug, size):
    page = nb.open_page(page_at, built_site, slug, viewport=size)
    nb.flush(page)
    sw, cw = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert sw <= cw, f"{slug} at {size}: content {sw} px wide in a {cw} px page"
    if size[0] < 500:  # the menu is one line (it scrolls inside itself), not a screenful of links
        nav = page.locator(".nb-nav").bounding_box()
        assert nav["height"] < 60, nav
