"""The FiLM page of CondiNILM (a model trained with use_film): what its FiLM really is, from model/film.py and
model/upstream/shared_head.py as its code computes it.

- The condition features of the raw scaled aggregate (electrical features and frequency bands of F // 8 bins).
- The encoder FiLM generator: per device and layer (gamma, beta) = 0.5 tanh(fc2(ReLU(fc1([cond | device embedding])))),
  averaged over the devices; each encoder layer applies its mean as (1 + gamma) FFN + beta.
- The output FiLM generator: one (gamma, beta) per device, applied to the power head's output before the ReLU and
  before the soft gate: (1 + gamma) power + beta, then ReLU.

A model without FiLM (the original NILMFormer, CondiNILM trained with use_film false) gets upstream_absent's page.
Every value is a capture record; sizes come from the records' shapes.
"""

from __future__ import annotations

from nilmbuild.model.film import ELEC_FEATURES, floor_band_edges
from nilmbuild.model.names import INPUT, cond, film
from nilmbuild.site import upstream_story
from nilmbuild.site.build import PageSpec

from . import upstream_prose
from ._common import model_sizes, pick_device_samples, view_page, window_starts
from .live_parts import whatif_page

N_SAMPLES = 4
#: The output FiLM's lanes per device: (record, series name), in the order the head computes them.
POWER_STEPS = (
    ("head.power_raw", "power head (before FiLM)"),
    ("head.power_film", "after the output FiLM (before ReLU)"),
    ("head.power", "after ReLU (before the gate)"),
)


def js_names() -> dict:
    """The record names page_upstream_film.js reads (page().data.names)."""
    return {
        "input": INPUT,
        "cond": cond("vector"),
        "gamma_mean": film("film_enc", "gamma_mean"),
        "beta_mean": film("film_enc", "beta_mean"),
        "gamma_dev": film("film_enc", "gamma"),
        "dec_gamma": film("film_dec", "gamma"),
        "dec_beta": film("film_dec", "beta"),
        "power": [{"record": r, "name": n} for r, n in POWER_STEPS],
    }


def records() -> list[str]:
    n = js_names()
    flat = [n["input"], n["cond"], n["gamma_mean"], n["beta_mean"], n["gamma_dev"], n["dec_gamma"], n["dec_beta"]]
    return flat + [p["record"] for p in n["power"]]


def cond_labels(cfg, n_bins: int) -> list[str]:
    """The condition vector's entries as the model builds it: the electrical features, then the frequency bands
    with their rFFT bins (CondiNILM's floor layout over n_bins bins)."""
    out = list(ELEC_FEATURES) if cfg.use_elec_features else []
    if cfg.use_freq_features:
        e = floor_band_edges(n_bins, 8)
        out += [f"band {i} (rFFT bins {e[i]}-{e[i + 1] - 1})" for i in range(len(e) - 1)]
    return out


def build(ctx, view: str) -> PageSpec:
    """CondiNILM's FiLM page (view: the film view module's __name__, for its slug)."""
    cfg = ctx.loaded.cfg
    missing = [r for r in records() if r not in ctx.capture.records]
    if missing:
        raise KeyError(f"FiLM page: the capture has no record {missing[0]}")
    samples = pick_device_samples(ctx, min(N_SAMPLES, int(ctx.x.shape[0])))
    spectrum = ctx.capture.records.get(cond("spectrum"))
    labels = cond_labels(cfg, 0 if spectrum is None else int(spectrum.shape[-1]))
    if len(labels) != ctx.capture.records[cond("vector")].shape[-1]:
        raise ValueError("FiLM page: the condition vector's length does not match its features")
    sparse = [cfg.devices[i] for i in cfg.sparse_indices]
    data = {"samples": samples, "sample_labels": window_starts(ctx, samples), "names": js_names(),
            "cond_labels": labels, "devices": list(cfg.devices), "sparse": sparse,
            "step_minutes": int(cfg.step_s) / 60}  # fmt: skip
    whatif, wblobs, files = whatif_page(ctx, samples)  # the live graph's film_on switch (whatif_upstream.js)
    data["whatif"] = whatif
    data["story"] = upstream_story.film_story(ctx, samples)
    context = {"m": model_sizes(cfg, cfg.step_s), "sparse": sparse, "notes": []}
    summary = "CondiNILM's FiLM: condition features, the encoder FiLM per layer and the output FiLM before the ReLU."
    return view_page(view, template="upstream_film.html", entry="page_upstream_film.js", data=data,
                     blobs={"capture": ctx.blob(records(), samples), **wblobs}, files=files, context=context,
                     summary=summary,
                     section="", title=upstream_prose.TITLES["film"], lead=upstream_prose.LEADS["film"])  # fmt: skip
