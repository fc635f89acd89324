"""The site's pages: one view module per page in nilmbuild/site/views/, built from one SiteContext.

Each view module exposes SLUG, TITLE and build(ctx: SiteContext) -> PageSpec. NAV_ORDER is the navigation
order; every slug in it must have its module (a test checks that every page is built).
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

from nilmbuild.memory import release_freed_memory
from nilmbuild.site import assets
from nilmbuild.site.build import BuildResult, PageSpec, build_site
from nilmbuild.threads import one_blas_thread, usable_threads

NAV_ORDER = (
    "index",
    "data",
    "forward",
    "embedding",
    "encoder",
    "attention",
    "film",
    "gate",
    "playground",
    "disaggregation",
    "training",
)


def view_module(slug: str):
    return importlib.import_module(f"nilmbuild.site.views.{slug}")


PAGE_THREADS = 2  # at most, and no more than the CPUs this process may use


def page_specs(ctx, progress: bool = False, only=None) -> list[PageSpec]:
    """Build every page's PageSpec (blobs included) from the context, in navigation order. With `only` (slugs),
    a page outside it whose view has `nav_spec()` (a costly page, e.g. the playground's model export) gets just
    that: what the navigation and the index need. Pages are built in up to PAGE_THREADS threads: their costly
    steps (numpy derivations, zlib, torch) release the GIL, and each page's bytes depend only on ctx."""
    from concurrent.futures import ThreadPoolExecutor

    def one(slug: str) -> PageSpec:
        mod = view_module(slug)
        light = only is not None and slug not in only and hasattr(mod, "nav_spec")
        spec = mod.nav_spec() if light else mod.build(ctx)
        for name, payload in spec.blobs.items():  # deflated now, in this thread (render reads assets.blob_html's cache)
            assets.blob_html(name, payload)
        release_freed_memory()  # a page's decoded and derived tensors
        return spec

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(NAV_ORDER), desc="serialising pages", unit="page", file=sys.stderr)
    threads = usable_threads(PAGE_THREADS)
    with one_blas_thread(), ThreadPoolExecutor(threads) as pool:
        futures = {slug: pool.submit(one, slug) for slug in _costliest_first(NAV_ORDER)}
        if bar is not None:
            for f in futures.values():
                f.add_done_callback(lambda _: bar.update())
        specs = [futures[slug].result() for slug in NAV_ORDER]
    if bar is not None:
        bar.close()
    return specs


def _costliest_first(slugs) -> list[str]:
    """The forward page (its animation derives every sample's FFN) first, so the others fill the second thread."""
    return sorted(slugs, key=lambda s: s != "forward")


def site_context_vars(ctx) -> dict:
    """Site-wide template variables (footer provenance, spec notes) and what every page's JS receives too: the
    model's sizes (``model``) and scaled units -> watts per channel (``watts``, ``{a, b}``)."""
    from nilmbuild.data.preprocess import scaler_affines
    from nilmbuild.site.views._common import model_sizes

    return {
        **ctx.meta,
        "spec_notes": [f"{n['topic']}: {n['choice']} ({n['why']})" for n in ctx.notes],
        "model": model_sizes(ctx.loaded.cfg, int(ctx.prepared.resample_s)),
        "watts": scaler_affines(ctx.prepared.scalers),
    }


def build_all(
    ctx, out_dir: str | Path, *, build_only=None, progress: bool = False, timings: dict | None = None
) -> BuildResult:
    """Serialise every page's blobs from ctx and render the site into out_dir (atomically, manifest-safe)."""
    t = time.perf_counter()
    pages = page_specs(ctx, progress, only=None if build_only is None else set(build_only))
    t_ser = time.perf_counter()
    result = build_site(out_dir, pages, site_context_vars(ctx), build_only=build_only, progress=progress)
    if timings is not None:
        timings["serialize"] = t_ser - t
        timings["render"] = time.perf_counter() - t_ser
    return result
