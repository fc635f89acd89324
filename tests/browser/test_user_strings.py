"""Strings a user's files bring into the pages stay text (issue 36): a checkpoint file name, a CSV's folder and file
name, and a CSV column name, each carrying markup that would run script (set `__pwned`) if a page let it through as
HTML. The site is built from them (a small random-weight model, window 96, so it builds in seconds); every page
opens without running any of it, and the index shows each string as the text it is.
(Device names are the DEVICE_NAMES today; the pages escape them too: tests/js/embed.test.mjs, escapeHTML.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

CHECKPOINT = "c<img src=y onerror=__pwned=4>.pt"
FOLDER = "d<img src=x onerror=__pwned=1>"
CSV = "h<svg onload=__pwned=2>.csv"
COLUMN = "Toaster</script><script>__pwned=3</script>"
PAGES = ["index", "data", "gate", "film"]


def write_csv(path, days=21):
    n = days * 1440
    ts = np.datetime64("2024-01-01T00:00") + np.arange(n) * np.timedelta64(60, "s")
    kettle = np.where(np.random.default_rng(0).random(n) < 0.01, 2000.0, 0.0)
    fridge = np.where((np.arange(n) // 30) % 2 == 0, 90.0, 0.0)
    rows = [f"Time,Aggregate,Kettle,Fridge,{COLUMN}"]
    rows += [f"{str(t).replace('T', ' ')},{150 + k + f:.1f},{k:.1f},{f:.1f},0" for t, k, f in zip(ts, kettle, fridge)]
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    import torch

    from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
    from nilmbuild.model.config import NILMFormerConfig
    from nilmbuild.model.nilmformer import NILMFormer
    from nilmbuild.site.context import make_context
    from nilmbuild.site.pages import build_all

    tmp = tmp_path_factory.mktemp("strings")
    (tmp / FOLDER).mkdir()
    write_csv(tmp / FOLDER / CSV)
    base = load_checkpoint(None)
    torch.manual_seed(0)
    model = NILMFormer(NILMFormerConfig(window=96, d_model=32, n_head=2, head_dim=16, devices=base.cfg.devices))
    prov = {**base.provenance, "days": 21, "prep": {**base.provenance["prep"], "window": 96, "stride": 48}}
    save_checkpoint(
        tmp / CHECKPOINT,
        model.eval(),
        scalers=base.scalers,
        train_log=base.train_log,
        provenance=prov,
        extra=base.extra,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the devices this CSV lacks are filled with zeros, with a warning
        ctx = make_context(str(tmp / CHECKPOINT), f"csv:{tmp / FOLDER / CSV}", batch=4)
    build_all(ctx, tmp / "site", build_only=set(PAGES))
    return tmp / "site"


def test_html_carries_no_raw_markup(site):
    for slug in PAGES:
        html = (site / f"{slug}.html").read_text(encoding="utf-8")
        for raw in ("<img src=x", "<img src=y", "<svg onload", "<script>__pwned"):
            assert raw not in html, (slug, raw)


@pytest.mark.parametrize("slug", PAGES)
def test_pages_run_none_of_it(nb, page_at, site, slug):
    page = nb.open_page(page_at, site, slug)  # page_at: no console error (an <img src=x> would log one)
    nb.flush(page)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('img[src=x], img[src=y], svg[onload], [onerror]').length") == 0
    if slug == "index":
        text = page.locator("body").inner_text()
        for s in (CHECKPOINT, CSV, COLUMN):
            assert s in text, s
