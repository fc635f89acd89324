"""Sites of imported upstream checkpoints (CondiNILM, the original NILMFormer; the small reference fixtures of
tests/fixtures/upstream) build with `nilmbuild site -c OUT.pt` alone, and every page built for the architecture
opens in the browser, becomes ready and logs no console error (page_at asserts that at teardown). The overview
names the architecture and the upstream file by name and sha256."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
FIX = ROOT / "fixtures" / "upstream"
CASES = {"condinilm_small": "last.ckpt", "nilmformer_small": "NILMFormer_0.pt"}


def _checkpoint(name: str, out: Path) -> Path:
    """The fixture as nilmbuild import writes it: the upstream weights + scaler, provenance by file name + sha256."""
    sys.path.insert(0, str(ROOT))
    from test_upstream_models import _build

    from nilmbuild.model.checkpoint import save_checkpoint
    from nilmbuild.model.upstream import scalers_from_nilmscaler

    model, _, fields = _build(name)
    src = FIX / name / CASES[name]
    files = {"checkpoint": {"name": src.name, "sha256": hashlib.sha256(src.read_bytes()).hexdigest()}}
    cfg = model.cfg
    prov = {
        "upstream": {"architecture": cfg.arch, "files": files},
        "prep": {"resample_s": cfg.step_s, "window": cfg.window, "devices": list(cfg.devices)},
    }
    path = out / f"{name}.pt"
    save_checkpoint(path, model, scalers=scalers_from_nilmscaler(fields), provenance=prov)
    return path


@pytest.fixture(scope="module", params=sorted(CASES))
def upstream_site(request, tmp_path_factory):
    from click.testing import CliRunner

    from nilmbuild.cli import main
    from nilmbuild.site.pages import nav_order_for

    tmp = tmp_path_factory.mktemp(request.param)
    ckpt = _checkpoint(request.param, tmp)
    res = CliRunner().invoke(main, ["site", "-c", str(ckpt), "-o", str(tmp / "site"), "-q", "--no-cache"])
    assert res.exit_code == 0, res.output
    arch = request.param.split("_")[0]
    return tmp / "site", nav_order_for(arch), request.param


def test_every_page_is_ready_without_console_errors(nb, page_at, upstream_site):
    site, slugs, _ = upstream_site
    assert {"index", "data", "disaggregation"} <= set(slugs)
    for slug in slugs:
        nb.open_page(page_at, site, slug)  # page_at asserts no console errors and no requests at teardown


def test_overview_names_architecture_and_source_file(nb, page_at, upstream_site):
    site, _, name = upstream_site
    page = nb.open_page(page_at, site, "index")
    text = page.locator("body").text_content()
    src = FIX / name / CASES[name]
    assert ("CondiNILM" if name.startswith("condinilm") else "original NILMFormer") in text
    assert f"{src.name} (sha256 {hashlib.sha256(src.read_bytes()).hexdigest()})" in text
    assert str(FIX) not in text
