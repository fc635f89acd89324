"""The guided path in the browser (issue 35 item 2-3): the previous/next chain from the overview visits every page
in reading order, and a page's computed findings sit on their figures with links that apply their presets."""

from __future__ import annotations

from nilmbuild.site.pages import NAV_ORDER


def test_next_links_from_the_overview_visit_every_page(nb, page_at, built_site):
    pages = sorted(p.stem for p in built_site.glob("*.html"))
    page = nb.open_page(page_at, built_site, "index")
    assert page.locator("a.nb-start").get_attribute("href") == f"{NAV_ORDER[1]}.html"  # "start here"
    seen = [page.locator("main").get_attribute("data-slug")]
    while page.locator("a[rel=next]").count():
        page.locator("a[rel=next]").click()
        nb.wait_ready(page, timeout=60_000)
        seen.append(page.locator("main").get_attribute("data-slug"))
    assert seen == list(NAV_ORDER)
    assert sorted(seen) == pages  # every page of the site, each once
    while page.locator("a[rel=prev]").count():  # and back again
        page.locator("a[rel=prev]").click()
        nb.wait_ready(page, timeout=60_000)
        seen.pop()
        assert page.locator("main").get_attribute("data-slug") == seen[-1]
    assert seen == ["index"]


def test_findings_are_placed_on_their_figures(nb, page_at, built_site):
    page = nb.open_page(page_at, built_site, "attention")
    story = page.evaluate("nilmbuild.test.page().data.story")
    placed = page.evaluate(
        """findings => findings.map(f => {
             const t = document.querySelector(f.target).getBoundingClientRect();
             const a = Array.from(document.querySelectorAll('.nb-finding-anchor')).find(a => a.dataset.target === f.target);
             if (!a) return null;
             const b = a.querySelector('.nb-finding').getBoundingClientRect();
             return { text: a.textContent, href: (a.querySelector('a') || {}).hash || null,
                      gap: t.top - b.bottom, overlap: Math.min(t.right, b.right) - Math.max(t.left, b.left) }; })""",
        story["findings"],
    )
    assert page.locator(".nb-finding").count() == len(story["findings"]) >= 1
    for p, f in zip(placed, story["findings"]):
        assert p is not None, f"no finding placed for {f['target']}"
        assert p["text"] == "Notice: " + f["text"] + ("Show me" if f["preset"] else "")
        assert p["href"] == ("#" + f["preset"]["hash"] if f["preset"] else None)
        assert 0 <= p["gap"] <= 60 and p["overlap"] > 0, (
            f"{f['target']}: the callout is not at its figure's top edge {p}"
        )


def test_show_me_applies_the_findings_preset(nb, page_at, built_site):
    page = nb.open_page(page_at, built_site, "attention")
    f = page.evaluate("nilmbuild.test.page().data.story.findings[0]")
    want = dict(kv.split("=") for kv in f["preset"]["hash"].split("&"))
    page.locator(".nb-finding-anchor", has=page.locator(f"a[href='#{f['preset']['hash']}']")).locator("a").click()
    page.wait_for_function(
        "([l, h]) => document.getElementById('att-layer').value === l && document.getElementById('att-head').value === h",
        arg=[want["layer"], want["head"]],
    )
    assert page.evaluate("document.getElementById('att-sample').value") == want["sample"]


def test_disaggregation_controls_sit_above_the_chart(nb, page_at, built_site):
    page = nb.open_page(page_at, built_site, "disaggregation")
    controls = page.locator("#nb-controls").bounding_box()
    chart = page.locator("#lanes").bounding_box()
    assert controls["y"] + controls["height"] <= chart["y"]
