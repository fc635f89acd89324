"""FiLM page (architecture.md 8, encoder-film.md 6.6): condition features, the two FiLM generators with their
real activations, gamma/beta per device and layer, a live re-computation of the encoder FiLM from the captured
FFN output, and the FiLM on/off ablation."""

from __future__ import annotations

from nilmbuild.model.names import (
    COND_PARTS,
    FILM_GENERATORS,
    FILM_PARTS,
    INPUT,
    OUTPUT_POWER,
    TARGET_POWER,
    ablation,
    cond,
    encoder,
    film,
    param,
)
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from ._common import kit_blobs, page_extra, pick_device_samples, view_page
from .live_parts import whatif_page

SLUG = "film"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "FiLM conditioning"
SECTION = "8"
N_SAMPLES = 4  # the live FiLM view carries encoder.L.ffn.out (480 x 96 per layer): a few samples only


def js_names(n_layers: int) -> dict:
    """The record names page_film.js reads (page().data.names): condition features, both FiLM generators, the
    encoder's FFN output and FiLM per layer, the final power with and without FiLM, and the target."""
    gens = {
        g: {p: film(g, p) for p in FILM_PARTS} | {"device_embed": param(f"{g}.device_embed")} for g in FILM_GENERATORS
    }
    gens["film_enc"] |= {"gamma_mean": film("film_enc", "gamma_mean"), "beta_mean": film("film_enc", "beta_mean")}
    return {
        "cond": {p: cond(p) for p in COND_PARTS},
        **gens,
        "ffn_out": [encoder(l, "ffn.out") for l in range(n_layers)],
        "film": [encoder(l, "film") for l in range(n_layers)],
        "output": OUTPUT_POWER,
        "output_no_film": ablation("no_film", OUTPUT_POWER),
        "target": TARGET_POWER,
    }


def records(n_layers: int) -> list[str]:
    """What the page's capture blob holds: the input and every name the JS reads."""
    names = js_names(n_layers)
    out = [INPUT, *names["cond"].values()]
    for g in FILM_GENERATORS:
        out += list(names[g].values())
    return out + names["ffn_out"] + names["film"] + [names["output"], names["output_no_film"], names["target"]]


def build(ctx) -> PageSpec:
    from .upstream_absent import page_if_absent

    none = page_if_absent(ctx, __name__, "FiLM")  # the original NILMFormer: "this model has no FiLM"
    if none is not None:
        return none
    if hasattr(ctx.loaded.cfg, "arch"):  # CondiNILM with FiLM: its generators, the output FiLM before the ReLU
        from . import upstream_film

        return upstream_film.build(ctx, __name__)
    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    samples = pick_device_samples(ctx, N_SAMPLES)
    extra = page_extra(ctx, samples)
    from nilmbuild.model.film import ELEC_FEATURES, band_edges

    spec = ctx.capture.records[cond("spectrum")].shape[-1]
    n_bands = ctx.capture.records[cond("bands")].shape[-1]
    extra["band_edges"] = band_edges(spec, n_bands)  # the model's own edges (Python rounding)
    extra["elec_features"] = list(ELEC_FEATURES)
    whatif, wblobs, files = whatif_page(ctx, samples)  # the live what-if panel (static/js/whatif_film.js)
    return view_page(
        __name__,
        data={"names": js_names(n_layers), "whatif": whatif, "story": story.film_story(ctx, samples)},
        blobs={**kit_blobs(ctx, records(n_layers), samples, extra), **wblobs},
        files=files,
        context={"notes": ctx.notes_for(SLUG)},
        summary="Condition features, the FiLM generators' real activations, gamma and beta per device and layer, "
        "a live FiLM recomputation and FiLM on/off.",
    )
