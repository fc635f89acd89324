"""The site's pages: one view module per page in nilmbuild/site/views/, built from one SiteContext.

Each view module exposes SLUG, TITLE and build(ctx: SiteContext) -> PageSpec. READING_ORDER is the one list of the
pages in reading order (menu, previous/next links, the overview's "start here"); NAV_ORDER is its slugs, and every
slug in it must have its module (a test checks that every page is built).
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from nilmbuild.memory import release_freed_memory
from nilmbuild.site import assets
from nilmbuild.site.build import BuildResult, PageSpec, build_site
from nilmbuild.threads import one_blas_thread, usable_threads


@dataclass(frozen=True)
class Stop:
    """One page in the reading order: its slug, its menu label (plain words) and the one- or two-sentence lead it
    opens with, saying what to look at before its first figure (no model sizes here: they come from the config)."""

    slug: str
    menu: str
    lead: str


#: The reading order: the menu, every page's previous/next links and the overview's "start here" follow it.
READING_ORDER = (
    Stop("index", "Overview", ""),  # the overview opens with the question instead (templates/index.html)
    Stop(
        "data",
        "The data",
        "Start with the top chart: one line from the household's meter is all the model gets. The lanes below are "
        "what it has to find in that line, and most of the time each appliance is off.",
    ),
    Stop(
        "disaggregation",
        "The answer",
        "Compare each filled lane, the model's answer, with its dashed line, what the appliance really drew. Then "
        "switch the view to the full day to see the answer stitched together window by window.",
    ),
    Stop(
        "why",
        "Why this answer",
        "Each colour strip under the meter's line says which minutes made the model predict that device: red minutes "
        "raise its answer, blue ones lower it. Pick a method, then click a minute to explain the power there.",
    ),
    Stop(
        "forward",
        "Forward pass",
        "Each block is one stage's real tensor for the chosen window, from the meter's signal on the left to watts "
        "per device on the right. Click a block to see its values large below.",
    ),
    Stop(
        "embedding",
        "Signal to vectors",
        "Follow one output step down to the input steps it reads: each dilated convolution lets it see further. "
        "Then look at the feature maps: some rows already trace the power signal.",
    ),
    Stop(
        "encoder",
        "Encoder layers",
        "Each strip is the same window after one sub-step of a layer: watch which sub-steps change the colours "
        "most. Click a strip to follow one minute through the layers in the panels below.",
    ),
    Stop(
        "attention",
        "Attention",
        "Each square shows, for every minute of the window (a row), where one head looks (the columns); bright "
        "cells are strong weights. Compare the heads: some look close to the diagonal, some far away.",
    ),
    Stop(
        "film",
        "Conditioning (FiLM)",
        "FiLM lets a summary of the window scale and shift the network's features, per device. Look first at the "
        "last figure: the same model with FiLM switched off.",
    ),
    Stop(
        "gate",
        "On/off gate",
        "Each device's head proposes a power and a probability that the device is on; the gate keeps the power only "
        "where the probability passes a threshold. In the lower chart, compare the raw power with what is left.",
    ),
    Stop(
        "training",
        "Training",
        "How the weights got here, epoch by epoch: each device's loss, the conflicts between the devices' "
        "gradients, and the validation after every epoch.",
    ),
    Stop(
        "playground",
        "Try it",
        "Change the household's signal and watch the model's answer follow: drop a kettle boil into a quiet "
        "stretch and see which lane lights up.",
    ),
)

NAV_ORDER = tuple(stop.slug for stop in READING_ORDER)  # the slugs of READING_ORDER, in order
STOPS = {stop.slug: stop for stop in READING_ORDER}


def with_stop(spec: PageSpec) -> PageSpec:
    """The page's menu label and lead from its READING_ORDER stop (a lead the view wrote itself, for an upstream
    model's page that shows something else than the spec's, is kept)."""
    stop = STOPS.get(spec.slug)
    return spec if stop is None else dataclasses.replace(spec, menu=stop.menu, lead=spec.lead or stop.lead)


def view_module(slug: str):
    return importlib.import_module(f"nilmbuild.site.views.{slug}")


def architecture_of_ctx(ctx) -> str:
    """The loaded model's architecture: "spec", "condinilm" or "nilmformer"."""
    return getattr(ctx.loaded.cfg, "arch", "spec")


def nav_order_for(architecture: str) -> tuple[str, ...]:
    """The pages built for an architecture: every page for the spec; for an upstream model, the pages whose view
    lists it in ARCHITECTURES (the others explain spec-only stages and are not built: the overview lists them)."""
    if architecture == "spec":
        return NAV_ORDER
    return tuple(s for s in NAV_ORDER if architecture in getattr(view_module(s), "ARCHITECTURES", ("spec",)))


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
        spec = with_stop(mod.nav_spec() if light else mod.build(ctx))
        for name, payload in spec.blobs.items():  # deflated now, in this thread (render reads assets.blob_html's cache)
            assets.blob_html(name, payload)
        release_freed_memory()  # a page's decoded and derived tensors
        return spec

    order = nav_order_for(architecture_of_ctx(ctx))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(order), desc="serialising pages", unit="page", file=sys.stderr)
    threads = usable_threads(PAGE_THREADS)
    with one_blas_thread(), ThreadPoolExecutor(threads) as pool:
        futures = {slug: pool.submit(one, slug) for slug in _costliest_first(order)}
        if bar is not None:
            for f in futures.values():
                f.add_done_callback(lambda _: bar.update())
        specs = [futures[slug].result() for slug in order]
    if bar is not None:
        bar.close()
    return specs


#: The pages that take longest to build, longest first: the Why page (Captum on the model, when its explanations
#: are not cached) and the forward page (its animation derives every sample's FFN).
COSTLIEST = ("why", "forward")


def _costliest_first(slugs) -> list[str]:
    """The costliest pages first, one per thread, so the others fill the threads around them."""
    return sorted(slugs, key=lambda s: COSTLIEST.index(s) if s in COSTLIEST else len(COSTLIEST))


def site_context_vars(ctx) -> dict:
    """Site-wide template variables (footer provenance, spec notes) and what every page's JS receives too: the
    model's sizes (``model``) and scaled units -> watts per channel (``watts``, ``{a, b}``)."""
    from nilmbuild.data.preprocess import scaler_affines
    from nilmbuild.site.views._common import model_sizes
    from nilmbuild.site.views.upstream_prose import site_title

    title = site_title(ctx.loaded.cfg)  # an upstream model names its architecture; the spec's keeps the default
    return {
        **ctx.meta,
        **({"site_title": title} if title else {}),
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
