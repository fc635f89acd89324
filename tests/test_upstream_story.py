"""The findings and presets of the upstream models' own pages (nilmbuild/site/upstream_story.py), read back from
sites built from imported checkpoints: every page with a figure places one or two computed findings; two different
checkpoints of one architecture get other sentences, numbers and choices; the numbers are the tensors' (recomputed
here from the page's own capture blob); the presets are deep links into each page's URL state."""

from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner

from nilmbuild.cli import main
from tests.test_import_fixtures import FIXTURES, _files
from tests.test_story import payload

PAGES = ("attention", "embedding", "film", "forward", "gate")
PAIRS = {"condinilm": ("condinilm_small", "condinilm_tuned"), "nilmformer": ("nilmformer_small", "nilmformer_odd")}
#: The pages the original NILMFormer has no figure on (no FiLM, no gate: upstream_absent's one sentence).
ABSENT = {"nilmformer": ("film", "gate"), "condinilm": ()}


def _site(tmp_path_factory, name: str):
    tmp = tmp_path_factory.mktemp(name)
    ckpt, config, scaler = _files(name)
    args = ["import", str(ckpt), "--config", str(config), "--out", str(tmp / "m.pt")]
    assert CliRunner().invoke(main, args + (["--scaler", str(scaler)] if scaler else [])).exit_code == 0
    res = CliRunner().invoke(main, ["site", "-c", str(tmp / "m.pt"), "-o", str(tmp / "site"), "-q", "--no-cache",
                                    "--pages", ",".join(PAGES)])  # fmt: skip
    assert res.exit_code == 0, res.output
    return tmp / "site"


@pytest.fixture(scope="module", params=sorted(PAIRS))
def two_sites(request, tmp_path_factory):
    if not FIXTURES.is_dir():
        pytest.skip("tests/fixtures/upstream is absent")
    arch = request.param
    return arch, [_site(tmp_path_factory, n) for n in PAIRS[arch]]


def _story(site, slug) -> dict:
    return payload(site, slug)["data"].get("story") or {"findings": [], "presets": []}


def test_every_upstream_page_has_findings_and_presets(two_sites):
    arch, sites = two_sites
    for site in sites:
        for slug in PAGES:
            st = _story(site, slug)
            if slug in ABSENT[arch]:
                assert not st["findings"], slug  # "this model has no FiLM": no figure to notice anything on
                continue
            assert 1 <= len(st["findings"]) <= 2 and st["presets"], (site, slug, st)
            html = (site / f"{slug}.html").read_text()
            for f in st["findings"]:
                assert f'id="{f["target"].lstrip("#")}"' in html, (slug, f["target"])  # a figure of this page
            for p in st["presets"]:
                assert re.fullmatch(r"[a-z]+=\d+(&[a-z]+=\d+)*", p["hash"]), (slug, p)


def test_findings_change_with_the_checkpoint(two_sites):
    arch, (a, b) = two_sites
    for slug in PAGES:
        if slug in ABSENT[arch]:
            continue
        ta, tb = ([f["text"] for f in _story(s, slug)["findings"]] for s in (a, b))
        assert set(ta).isdisjoint(tb), f"{slug}: the same sentence for two checkpoints: {ta} / {tb}"
    heads = [re.search(r"token (\d+)\)", _stats_finding(s)["text"]).group(1) for s in (a, b)]
    assert heads[0] != heads[1]  # L + 1 of each checkpoint: the stats token's own number


def _stats_finding(site) -> dict:
    return next(f for f in _story(site, "attention")["findings"] if f["target"] == "#uat-stats")


def _capture(site, slug):
    from nilmbuild.capture.format import decode
    from nilmbuild.site.assets import read_blobs

    return decode(read_blobs((site / f"{slug}.html").read_text())["capture"])


def test_stats_token_finding_is_the_captured_share(two_sites):
    """The head named as reading the stats token most, and its share, recomputed from the page's own weights."""
    _, sites = two_sites
    for site in sites:
        cap, data = _capture(site, "attention"), payload(site, "attention")["data"]
        w = [np.asarray(cap.get(n), np.float64) for n in data["names"]["weights"]]
        share = np.array([[wl[:, h, :-1, -1].mean() for h in range(wl.shape[1])] for wl in w])  # (layers, heads)
        l, h = np.unravel_index(int(np.argmax(share)), share.shape)
        f = _stats_finding(site)
        assert f["text"].startswith(f"Head {h} of layer {l} reads the stats token (token {w[0].shape[-1]}) most")
        assert f"{100 * share[l, h]:.1f}%" in f["text"] or f"{100 * share[l, h]:.0f}%" in f["text"], f["text"]
        assert f["preset"]["hash"] == f"layer={l}&head={h}"


def test_one_device_error_sentence_names_it_once():
    """An original NILMFormer explains one appliance: the overview's error finding has nothing to compare it with."""
    from nilmbuild.site.story import _errors_text

    one = _errors_text(["kettle"], {"best": 0, "worst": 0, "relative": [3.47]}, "Over the 32 example windows")
    assert one == "Over the 32 example windows, the model's error for the kettle is 347% of its energy."
    two = _errors_text(["kettle", "fridge"], {"best": 1, "worst": 0, "relative": [3.47, 0.05]}, "Here")
    assert "closest for the fridge (error 5.0% of its energy)" in two and "furthest off for the kettle (347%)" in two


def test_a_negative_raw_output_is_said_where_it_is_quoted(two_sites):
    """issue 35 item 5: a raw output below 0 W is named as such, with what clamps it, wherever a finding quotes one."""
    _, sites = two_sites
    for site in sites:
        text = _story(site, "forward")["findings"][0]["text"]
        w = float(re.search(r"gives the [\w ]+? ([−-]?[\d.]+) W there", text).group(1).replace("−", "-"))
        assert ("raw output below 0 W" in text) == (w < 0), text
