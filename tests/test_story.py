"""The guided path and the computed findings (issue 35 items 2-3), read back from built sites.

The findings must come from the loaded checkpoint: a second, different checkpoint (a tiny model trained here for two
epochs, with PCGrad from its second epoch) gives every page other findings, other words and numbers, not the
shipped model's. The reading order is the one list in nilmbuild/site/pages.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nilmbuild.site.pages import NAV_ORDER, READING_ORDER

PAYLOAD = re.compile(r'<script type="application/json" id="nb-page">(.*?)</script>', re.S)
TINY = {"d_model": 16, "n_head": 2, "head_dim": 8, "n_encoder_layers": 3, "window": 96, "film_hidden_dim": 8}


def payload(site: Path, slug: str) -> dict:
    html = (site / f"{slug}.html").read_text(encoding="utf-8")
    return json.loads(PAYLOAD.search(html).group(1))


def findings(site: Path, slug: str) -> list[str]:
    return [f["text"] for f in payload(site, slug)["data"]["story"]["findings"]]


@pytest.fixture(scope="module")
def tiny_site(tmp_path_factory) -> Path:
    """A site built from a tiny checkpoint trained for 2 epochs on 4 simulated days (about 20 s)."""
    from nilmbuild.site.context import make_context
    from nilmbuild.site.pages import build_all
    from nilmbuild.train.trainer import TrainConfig, train

    tmp = tmp_path_factory.mktemp("tiny")
    tc = TrainConfig(
        days=4,
        epochs=2,
        batch_size=8,
        lr=1e-2,
        model=TINY,
        out=str(tmp / "tiny.pt"),
        progress=False,
        threads=1,
        warmup_epochs=1,
        pcgrad_from_epoch=1,
        prep={"stride": 96},
    )
    train(tc, log=lambda *a: None)
    build_all(make_context(tc.out, batch=4), tmp / "site")
    return tmp / "site"


def test_reading_order_is_the_one_list_of_pages():
    from nilmbuild.site.pages import view_module

    assert NAV_ORDER == tuple(s.slug for s in READING_ORDER)
    assert NAV_ORDER[0] == "index" and len(set(NAV_ORDER)) == len(NAV_ORDER)
    for stop in READING_ORDER:
        assert view_module(stop.slug).SLUG == stop.slug
        assert stop.menu and (stop.lead or stop.slug == "index")
        assert len(re.findall(r"[.!?](\s|$)", stop.lead)) <= 2, f"{stop.slug}: a lead is one or two sentences"


def test_every_page_links_its_neighbours_in_reading_order(built_site):
    for i, slug in enumerate(NAV_ORDER):
        html = (built_site / f"{slug}.html").read_text(encoding="utf-8")
        prev = re.search(r'rel="prev" href="([^"]+)"', html)
        nxt = re.search(r'rel="next" href="([^"]+)"', html)
        assert (prev.group(1) if prev else None) == (f"{NAV_ORDER[i - 1]}.html" if i else None), slug
        assert (nxt.group(1) if nxt else None) == (f"{NAV_ORDER[i + 1]}.html" if i + 1 < len(NAV_ORDER) else None)
        assert html.index('id="nb-page-notes"') > html.index('id="nb-visual"'), f"{slug}: spec notes after the figures"


def test_every_page_has_findings_and_presets(built_site):
    for slug in NAV_ORDER:
        story = payload(built_site, slug)["data"]["story"]
        assert 1 <= len(story["findings"]) <= 2, slug
        for f in story["findings"]:
            assert f["target"] and f["text"], slug
        if slug not in ("index", "data"):  # the overview and the data page have no model state to preset
            assert story["presets"], slug
        for p in story["presets"]:
            assert re.fullmatch(r"[a-z]+=[\w.-]+(&[a-z]+=[\w.-]+)*", p["hash"]), (slug, p)


def test_findings_change_with_the_checkpoint(built_site, tiny_site):
    for slug in NAV_ORDER:
        shipped, other = findings(built_site, slug), findings(tiny_site, slug)
        assert other, f"{slug}: no findings from the second checkpoint"
        assert set(shipped).isdisjoint(other), f"{slug}: the same sentence for two checkpoints: {shipped} / {other}"
    # the choices follow each checkpoint's own log: the first epoch PCGrad ran (the tiny run: its second)
    from nilmbuild.model.checkpoint import load_checkpoint

    shipped_first = next(e["epoch"] for e in load_checkpoint(None).train_log["epochs"] if e["pcgrad"]["enabled"])
    first = re.compile(r"from epoch (\d+)\b")
    assert int(first.search(findings(built_site, "training")[0]).group(1)) == shipped_first
    assert int(first.search(findings(tiny_site, "training")[0]).group(1)) == 2
