"""The bench's "upstream" section: the site of an imported CondiNILM checkpoint, cold, and its pages in Chromium.

The committed fixture tests/fixtures/upstream/condinilm_small (a seeded checkpoint of CondiNILM's own code:
kettle, fridge, washing machine; window 64) is imported into a temporary folder with `nilmbuild import` in a
fresh process, then built as a user builds it, `nilmbuild site --no-cache -c OUT.pt` in a fresh process with an
empty cache folder (bench/build_runs.py run_site: wall time from start to exit, peak RSS), on the built-in
simulator (no ../shared/data needed). Every page that site has is then timed as bench/pages.py times the default
site's. Each figure is printed beside the default site's: measured in the same run when the "site" and "build"
sections ran (the two sites' pages loaded alternately, page by page), else bench/baseline.json's.
Alone: `python -m nilmbuild.bench --skip model,train,infer,explain,disaggregate,site,build,pages,animation,live`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from nilmbuild.bench.build_runs import BASELINE, run_site, site_bytes

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "upstream" / "condinilm_small"
GROUP = "imported CondiNILM checkpoint (tests/fixtures/upstream/condinilm_small)"


def import_fixture(work: Path, fixture: Path = FIXTURE) -> Path:
    """`nilmbuild import` of the fixture's Lightning checkpoint, config and scaler JSON, in a fresh process."""
    if not fixture.is_dir():
        raise RuntimeError(f"{fixture} is missing: run the bench from a nilmbuild checkout")
    out = work / "condinilm.pt"
    args = [str(fixture / "last.ckpt"), "--config", str(fixture / "experiment_config.json")]
    args += ["--scaler", str(fixture / "scaler.json"), "--out", str(out)]
    subprocess.run([sys.executable, "-m", "nilmbuild", "import", *args], check=True, stdout=subprocess.DEVNULL)
    return out


def cold_build(checkpoint: Path, work: Path) -> tuple[dict, Path]:
    """`nilmbuild site --no-cache -c CHECKPOINT` in a fresh process with an empty cache folder -> (figures, site)."""
    site = work / "site"
    r = run_site(site, work / "cache", extra=("--no-cache", "-c", str(checkpoint)))
    figures = {"build_s": r["seconds"], "peak_rss_mb": r["peak_rss_mb"], "site_mb": site_bytes(site) / 1e6}
    return figures, site


def build_rows(figures: dict, default: dict, source: str) -> list[dict]:
    """One row per build figure: the imported checkpoint's, the default site's, and their ratio."""
    rows = []
    for k, v in figures.items():
        d = default.get(k)
        row = {"group": f"{GROUP}: nilmbuild site --no-cache, cold", "name": k, "now": v}
        rows.append(row | {"default_site": d, "ratio": (v / d) if d else None, "default_from": source})
    return rows


def default_build(site_rows: list[dict] | None) -> tuple[dict, str]:
    """The default site's cold-build figures: this run's "site" section when it ran, else bench/baseline.json's."""
    if site_rows:
        return {r["name"]: r["now"] for r in site_rows}, "this run"
    base = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    return base.get("figures", {}), str(BASELINE)


def page_rows(site: Path, default_site: Path | None, repeats: int) -> list[dict]:
    """Every page of the imported checkpoint's site: data-ready, longest task, fps, beside the default site's."""
    from nilmbuild.bench.pages import compare_rows, measure

    if default_site is not None:
        figures, ref = measure(site, repeats=repeats, against=default_site)
        return compare_rows(figures, {"pages": {"figures": ref}}, group=f"{GROUP} vs the default site, same run")
    base = json.loads(BASELINE.read_text()) if BASELINE.is_file() else None
    figures = measure(site, repeats=repeats)
    return compare_rows(figures, base, group=f"{GROUP} vs the default site in {BASELINE}")


def bench_upstream(
    repeats: int = 5, site_rows: list[dict] | None = None, default_site: Path | None = None
) -> list[dict]:
    """Import the fixture, build its site cold, time its pages; rows beside the default site's figures."""
    work = Path(tempfile.mkdtemp(prefix="nilmbuild-bench-upstream-"))
    figures, site = cold_build(import_fixture(work), work)
    default, source = default_build(site_rows)
    return build_rows(figures, default, source) + page_rows(site, default_site, repeats)
