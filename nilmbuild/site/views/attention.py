"""Attention page (attention.md, architecture.md 7): Q/K head split, 480 x 480 weights per head and layer,
rebuilt on the GPU from the captured q, k and lse, the masked model run vs the unmasked ablation run."""

from __future__ import annotations

import numpy as np

from nilmbuild.model.names import HEAD_ABLATION_DELTA, HEAD_ABLATION_SAMPLE, INPUT, OUTPUT_POWER, ablation, attn
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from ._common import view_page, window_starts
from .live_parts import whatif_page

SLUG = "attention"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Attention"


def records(n_layers: int) -> list[str]:
    names = [INPUT]
    for l in range(n_layers):
        names += [attn(l, p) for p in ("q", "k", "v", "lse", "weights")]
        names.append(ablation("no_mask", attn(l, "weights")))
    names += [OUTPUT_POWER, ablation("no_mask", OUTPUT_POWER)]  # the what-if panel's captured final watts
    return names + [HEAD_ABLATION_DELTA, HEAD_ABLATION_SAMPLE]


def js_names(n_layers: int) -> dict:
    """The record names page_attention.js reads (page().data.names), per layer where they have one."""
    layers = range(n_layers)
    return {
        "input": INPUT,
        "q": [attn(l, "q") for l in layers],
        "v": [attn(l, "v") for l in layers],
        "weights": [attn(l, "weights") for l in layers],
        "weights_unmasked": [ablation("no_mask", attn(l, "weights")) for l in layers],
        "head_delta": HEAD_ABLATION_DELTA,
        "head_sample": HEAD_ABLATION_SAMPLE,
    }


def page_samples(ctx) -> list[int]:
    """The samples the capture made its attention ablations on (capture.head_ablation.focus_samples, the most varied
    windows): the unmasked run's records hold these only, and each head's largest effect is on one of them."""
    samples = ctx.capture.records[ablation("no_mask", OUTPUT_POWER)].rows()
    rec = ctx.capture.records.get(HEAD_ABLATION_SAMPLE)
    outside = set() if rec is None else {int(v) for v in np.unique(rec.tensor)} - set(samples)
    if outside:
        raise RuntimeError(f"attention page: head ablation samples {sorted(outside)} outside the unmasked run's")
    return samples


def build(ctx) -> PageSpec:
    cfg = ctx.loaded.cfg
    if hasattr(cfg, "arch"):  # an upstream model: L + 1 tokens with the stats token, no ablation runs
        from . import upstream_attention

        return upstream_attention.build(ctx, __name__)
    n_layers = int(cfg.n_encoder_layers)
    samples = page_samples(ctx)
    blob = ctx.blob(records(n_layers), samples)
    whatif, wblobs, files = whatif_page(ctx, samples)  # the live what-if panel (static/js/whatif_attention.js)
    return view_page(
        __name__,
        data={
            "samples": samples,
            "sample_labels": window_starts(ctx, samples),
            "n_layers": n_layers,
            "head_ablation": ctx.capture.meta.get("head_ablation"),
            "names": js_names(n_layers),
            "whatif": whatif,
            "story": story.attention_story(ctx, samples),
        },
        blobs={"capture": blob, **wblobs},
        files=files,
        context={
            "n_layers": n_layers,
            "samples": samples,
            "sample_labels": window_starts(ctx, samples),
            "notes": ctx.notes_for(SLUG),
            "head_ablation": ctx.capture.meta.get("head_ablation"),
        },
        summary=f"Q/K/V and the {cfg.n_head}-head split, every head's {cfg.window} x {cfg.window} attention weights, "
        "masked vs unmasked.",
        section="7",
    )
