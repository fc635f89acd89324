"""A checkpoint with other sizes (window 96, d_model 32, 2 heads of 16; random weights, no training) builds every
page, and every page opens in the browser without errors and shows its own sizes, not the shipped model's
(issue 15 item 5: the sizes come from the blob's shapes and from site.model / page().model)."""

from __future__ import annotations

import pytest

SMALL = {"window": 96, "d_model": 32, "n_head": 2, "head_dim": 16}


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    import torch

    from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
    from nilmbuild.model.config import NILMFormerConfig
    from nilmbuild.model.nilmformer import NILMFormer
    from nilmbuild.site.context import make_context
    from nilmbuild.site.pages import build_all

    torch.manual_seed(0)
    base = load_checkpoint(None)  # its scalers, devices and data settings; not its weights
    model = NILMFormer(NILMFormerConfig(**SMALL, devices=base.cfg.devices)).eval()
    prov = {
        **base.provenance,
        "days": 21,
        "prep": {**base.provenance["prep"], "window": SMALL["window"], "stride": SMALL["window"] // 2},
    }
    tmp = tmp_path_factory.mktemp("small")
    save_checkpoint(
        tmp / "small.pt", model, scalers=base.scalers, train_log=base.train_log, provenance=prov, extra=base.extra
    )
    ctx = make_context(str(tmp / "small.pt"), batch=4)
    build_all(ctx, tmp / "site")
    return tmp / "site"


PAGES = [
    "index",
    "data",
    "why",
    "forward",
    "embedding",
    "encoder",
    "attention",
    "film",
    "gate",
    "disaggregation",
    "training",
]


@pytest.mark.parametrize("slug", PAGES)
def test_page_opens_without_errors(nb, page_at, small_site, slug):
    page = nb.open_page(page_at, small_site, slug)  # page_at asserts no console errors and no requests
    assert page.evaluate("nilmbuild.test.page().model.window") == SMALL["window"]
    text = page.locator(".nb-explanation").text_content()
    assert "480" not in text and "384" not in text


def test_attention_shows_two_heads_of_96_steps(nb, page_at, small_site):
    page = nb.open_page(page_at, small_site, "attention")
    assert page.evaluate("nilmbuild.test.heatmaps.length") == SMALL["n_head"] + 1  # the large head + one per head
    assert page.evaluate("nilmbuild.test.heatmaps[0].rows") == SMALL["window"]
    text = page.locator(".nb-explanation").text_content()
    assert "2 heads of 16 dimensions" in text and "96×96 weights" in text


def test_why_strips_span_the_small_window(nb, page_at, small_site):
    page = nb.open_page(page_at, small_site, "why")
    assert page.evaluate("nilmbuild.test.why.W.L") == SMALL["window"]
    assert page.evaluate("nilmbuild.test.why.geo().n") == SMALL["window"]
    assert (
        page.evaluate("nilmbuild.test.why.explanation(0).values.length") == SMALL["window"]
    )  # occlusion: every device


def test_encoder_text_follows_the_config(nb, page_at, small_site):
    page = nb.open_page(page_at, small_site, "encoder")
    assert "32 → 128 → 32" in page.locator("h2.enc-sub").first.text_content()
