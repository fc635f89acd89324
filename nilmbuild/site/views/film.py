"""FiLM page (architecture.md 8, encoder-film.md 6.6): condition features, the two FiLM generators with their
real activations, gamma/beta per device and layer, a live re-computation of the encoder FiLM from the captured
FFN output, and the FiLM on/off ablation."""

from __future__ import annotations

from nilmbuild.live.page import whatif_page
from nilmbuild.site.build import PageSpec

from ._common import kit_blobs, page_extra, pick_device_samples

SLUG = "film"
TITLE = "FiLM conditioning"
SECTION = "8"
N_SAMPLES = 4  # the live FiLM view carries encoder.L.ffn.out (480 x 96 per layer): a few samples only

RECORDS = [
    "input",
    "cond.elec",
    "cond.bands",
    "cond.spectrum",
    "cond.vector",
    "film_enc.input",
    "film_enc.hidden",
    "film_enc.gamma",
    "film_enc.beta",
    "film_enc.gamma_mean",
    "film_enc.beta_mean",
    "film_dec.input",
    "film_dec.hidden",
    "film_dec.gamma",
    "film_dec.beta",
    "weights.film_enc.device_embed",
    "weights.film_dec.device_embed",
    "encoder.*.ffn.out",
    "encoder.*.film",
    "output.power",
    "ablation.no_film.output.power",
    "target.power",
]


def build(ctx) -> PageSpec:
    samples = pick_device_samples(ctx, N_SAMPLES)
    extra = page_extra(ctx, samples)
    from nilmbuild.model.film import ELEC_FEATURES, band_edges

    spec = ctx.capture.records["cond.spectrum"].shape[-1]
    n_bands = ctx.capture.records["cond.bands"].shape[-1]
    extra["band_edges"] = band_edges(spec, n_bands)  # the model's own edges (Python rounding)
    extra["elec_features"] = list(ELEC_FEATURES)
    whatif, wblobs, files = whatif_page(ctx, samples)  # the live what-if panel (static/js/whatif_film.js)
    return PageSpec(
        slug=SLUG,
        title=TITLE,
        template="film.html",
        entry="page_film.js",
        blobs={**kit_blobs(ctx, RECORDS, samples, extra), **wblobs},
        data={"whatif": whatif},
        files=files,
        context={"notes": ctx.notes_for(SLUG)},
        summary="Condition features, the FiLM generators' real activations, gamma and beta per device and layer, "
        "a live FiLM recomputation and FiLM on/off.",
        section=SECTION,
    )
