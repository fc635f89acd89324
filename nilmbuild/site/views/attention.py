"""Attention page (attention.md, architecture.md 7): Q/K head split, 480 x 480 weights per head and layer,
rebuilt on the GPU from the captured q, k and lse, the masked model run vs the unmasked ablation run."""

from __future__ import annotations

from nilmbuild.site.build import PageSpec

from ._common import aggregate_watts_affine, pick_varied_samples, window_starts

SLUG = "attention"
TITLE = "Attention"
N_SAMPLES = 2          # q, k, v (+ the unmasked run's q, k, lse) cost about 1.4 MB per sample


def records(n_layers: int) -> list[str]:
    names = ["input"]
    for l in range(n_layers):
        names += [f"encoder.{l}.attn.q", f"encoder.{l}.attn.k", f"encoder.{l}.attn.v", f"encoder.{l}.attn.lse",
                  f"encoder.{l}.attn.weights",
                  f"ablation.no_mask.encoder.{l}.attn.weights"]
    return names


def build(ctx) -> PageSpec:
    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    samples = pick_varied_samples(ctx, N_SAMPLES)
    blob = ctx.blob(records(n_layers), samples)
    return PageSpec(
        slug=SLUG,
        title=TITLE,
        template="attention.html",
        entry="page_attention.js",
        data={"samples": samples, "sample_labels": window_starts(ctx, samples), "n_layers": n_layers,
              "aggregate_affine": aggregate_watts_affine(ctx)},
        blobs={"capture": blob},
        context={
            "n_layers": n_layers,
            "samples": samples,
            "sample_labels": window_starts(ctx, samples),
            "aggregate_affine": aggregate_watts_affine(ctx),
            "notes": ctx.notes_for(SLUG),
        },
        summary="Q/K/V and the 8-head split, every head's 480 x 480 attention weights, masked vs unmasked.",
        section="7",
    )
