"""FiLM page (architecture.md 8, encoder-film.md 6.6): condition features, the two FiLM generators with their
real activations, gamma/beta per device and layer, a live re-computation of the encoder FiLM from the captured
FFN output, and the FiLM on/off ablation."""

from __future__ import annotations

import msgpack
import numpy as np

from nilmbuild.site.build import PageSpec

SLUG = "film"
TITLE = "FiLM conditioning"
SECTION = "8"
N_SAMPLES = 4          # the live FiLM view carries encoder.L.ffn.out (480 x 96 per layer): a few samples only

RECORDS = [
    "input", "cond.elec", "cond.bands", "cond.spectrum", "cond.vector",
    "film_enc.input", "film_enc.hidden", "film_enc.gamma", "film_enc.beta", "film_enc.gamma_mean",
    "film_enc.beta_mean", "film_dec.input", "film_dec.hidden", "film_dec.gamma", "film_dec.beta",
    "weights.film_enc.device_embed", "weights.film_dec.device_embed",
    "encoder.*.ffn.out", "encoder.*.film",
    "output.power", "ablation.no_film.output.power", "target.power",
]


def pick_samples(ctx, n: int) -> list[int]:
    """Batch indices that together show every device ON (round-robin over devices), then the earliest others."""
    state = np.asarray(ctx.y)[:, :, 1, :]                      # (B, M, L)
    active = state.any(axis=-1)                                # (B, M)
    B, M = active.shape
    chosen: list[int] = []
    for m in range(M):
        # the window where device m is ON longest: a clear example of it
        order = np.argsort(-state[:, m].sum(axis=-1), kind="stable")
        for b in order:
            if active[b, m] and int(b) not in chosen:
                chosen.append(int(b))
                break
        if len(chosen) >= n:
            break
    for b in range(B):
        if len(chosen) >= n:
            break
        if b not in chosen:
            chosen.append(b)
    return sorted(chosen[:n])


def page_extra(ctx, samples: list[int]) -> dict:
    """JSON-able facts the page needs besides the capture: scalers, device names, window starts."""
    prep = ctx.prepared
    t0 = [str(np.datetime64(t, "s")) + "Z" for t in np.asarray(ctx.t0)[samples]]
    return {
        "samples": [int(s) for s in samples],
        "t0": t0,
        "devices": list(ctx.loaded.devices or prep.devices),
        "scalers": prep.scalers,
        "thresholds_w": {k: float(v) for k, v in (prep.thresholds_w or {}).items()},
        "resample_s": int(prep.resample_s),
    }


def build(ctx) -> PageSpec:
    samples = pick_samples(ctx, N_SAMPLES)
    extra = page_extra(ctx, samples)
    from nilmbuild.model.film import ELEC_FEATURES, band_edges

    spec = ctx.capture.records["cond.spectrum"].shape[-1]
    n_bands = ctx.capture.records["cond.bands"].shape[-1]
    extra["band_edges"] = band_edges(spec, n_bands)          # the model's own edges (Python rounding)
    extra["elec_features"] = list(ELEC_FEATURES)
    return PageSpec(
        slug=SLUG,
        title=TITLE,
        template="film.html",
        js_modules=("decode.js", "colormaps.js", "gl.js", "plot2d.js", "film_kit.js", "page_film.js"),
        shaders=("heatmap.vert", "heatmap.frag"),
        blobs={"capture": ctx.blob(RECORDS, samples), "extra": msgpack.packb(extra, use_bin_type=True)},
        context={"notes": ctx.notes_for(SLUG)},
        summary="Condition features, the FiLM generators' real activations, gamma and beta per device and layer, "
                "a live FiLM recomputation and FiLM on/off.",
        section=SECTION,
    )
