"""Encoder page (encoder-film.md 6): the 3 pre-norm layers, the residual stream at every sub-step,
FFN 96 -> 384 -> 96, the encoder FiLM gamma/beta per layer, and one position's 96-d vector across layers."""

from __future__ import annotations

from nilmbuild.model.names import ENCODER_STEPS, encoder, film
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from . import upstream_prose
from ._common import pick_varied_samples, view_page, window_starts

SLUG = "encoder"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Encoder layers"
N_SAMPLES = 3  # projection + per layer (attn context, ffn out) at f16: about 0.65 MB per sample

# sub-steps of one layer, in order (record suffix after "encoder.{l}." from model.names, short label)
LABELS = {
    "in": "in",
    "ln1": "LN1",
    "attn.out": "attn out",
    "resid1": "resid 1",
    "ln2": "LN2",
    "ffn.hidden": "FFN hidden",
    "ffn.gelu": "GELU",
    "ffn.out": "FFN out",
    "film": "FiLM",
    "out": "out",
}
STEPS = [(s, LABELS[s]) for s in ENCODER_STEPS]


def records(n_layers: int) -> list[str]:
    names = [film("film_enc", "gamma_mean"), film("film_enc", "beta_mean")]
    for l in range(n_layers):
        names += [encoder(l, s) for s, _ in STEPS]
    return names


def js_names(n_layers: int, has_film: bool = True) -> dict:
    """The record names page_encoder.js reads (page().data.names): each layer's sub-steps by suffix, and the
    encoder FiLM's gamma/beta averaged over devices (None for a model without FiLM)."""
    return {
        "layers": [{s: encoder(l, s) for s, _ in STEPS} for l in range(n_layers)],
        "gamma_mean": film("film_enc", "gamma_mean") if has_film else None,
        "beta_mean": film("film_enc", "beta_mean") if has_film else None,
    }


def build(ctx) -> PageSpec:
    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    samples = pick_varied_samples(ctx, N_SAMPLES)
    names = [n for n in records(n_layers) if n in ctx.capture.records]
    blob = ctx.blob(names, samples)
    has_film = film("film_enc", "gamma_mean") in ctx.capture.records
    steps = [{"suffix": s, "label": lab} for s, lab in STEPS if encoder(0, s) in ctx.capture.records]
    return view_page(
        __name__,
        data={
            "samples": samples,
            "sample_labels": window_starts(ctx, samples),
            "n_layers": n_layers,
            "steps": [{"suffix": s, "label": lab} for s, lab in STEPS],
            "names": js_names(n_layers, has_film),
            "story": story.encoder_story(ctx, samples),
        },
        blobs={"capture": blob},
        context={
            "n_layers": n_layers,
            "steps": steps,
            "samples": samples,
            "upstream": upstream_prose.encoder(ctx.loaded.cfg),
            "absent_film": None if has_film else upstream_prose.absent(ctx.loaded.cfg, "FiLM"),
            "sample_labels": window_starts(ctx, samples),
            "notes": ctx.notes_for(SLUG),
        },
        summary=f"The residual stream through the {ctx.loaded.cfg.n_encoder_layers} encoder layers, sub-step by sub-step, "
        "with FFN and FiLM.",
        section="6",
    )
