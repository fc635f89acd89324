"""The Embedding page of an upstream model (CondiNILM, the original NILMFormer): its stem as model/upstream/stem.py
computes it. The power channel is instance-normalised (mean, std; CondiNILM clamps the std), a DilatedBlock turns it
into d_stem channels, a 1x1 conv turns the E time-feature channels into d_time, the two are concatenated into d_model
features per step, and Linear(2, d_model) of the window's mean and std becomes the stats token, token L + 1. Every
size comes from the config, every value from the capture."""

from __future__ import annotations

import numpy as np

from nilmbuild.model.names import INPUT, INSTANCE_NORM, embed_unit
from nilmbuild.site import upstream_story
from nilmbuild.site.build import PageSpec

from . import upstream_prose
from ._common import model_sizes, pick_device_samples, view_page, window_starts

N_SAMPLES = 3


def _rows(a: np.ndarray) -> list:
    return np.round(np.asarray(a, np.float64), 5).tolist()


def _sample(ctx, s: int, last: str) -> dict:
    """One window's stem, from the capture: the aggregate in watts, the normalised power, mean and std (scaled
    units), the DilatedBlock's last output (d_stem, L), the time projection (d_time, L), the tokens (d, L + 1)."""
    from nilmbuild.data.preprocess import scaler_affine

    rec = ctx.capture.records
    a, b = scaler_affine(ctx.loaded.scalers["aggregate"])
    x = np.asarray(rec[INPUT].tensor[s, 0], np.float64)
    return {
        "aggregate_w": _rows(x * a + b),
        "normalised": _rows(rec[INSTANCE_NORM].tensor[s, 0]),
        "mean": float(rec["stats.mean"].tensor[s, 0]),
        "std": float(rec["stats.std"].tensor[s, 0]),
        "stem": _rows(rec[last].tensor[s]),
        "time": _rows(rec["time_proj"].tensor[s]),
        "tokens": _rows(np.asarray(rec["tokens"].tensor[s]).T),
    }


def build(ctx, view: str) -> PageSpec:
    cfg = ctx.loaded.cfg
    sizes = model_sizes(cfg, cfg.step_s)
    samples = pick_device_samples(ctx, min(N_SAMPLES, int(ctx.x.shape[0])))
    last = embed_unit(len(cfg.dilations) - 1, "out")
    data = {
        "samples": samples,
        "labels": window_starts(ctx, samples),
        "windows": [_sample(ctx, s, last) for s in samples],
        "step_minutes": int(cfg.step_s) / 60,
        "story": upstream_story.embedding_story(ctx, samples, last),
    }
    context = {
        "m": sizes,
        "arch": "CondiNILM" if cfg.arch == "condinilm" else "The original NILMFormer",
        "min_std": float(cfg.inst_norm_min_std),
        "exo": list(cfg.exo_variables),
        "notes": [],  # the spec notes are about the spec's embedding
    }
    summary = (
        f"Instance norm, the DilatedBlock 1 -> {sizes['d_stem']} beside the time features {sizes['n_exo']} -> "
        f"{sizes['d_time']}, and the stats token (token {cfg.window + 1})."
    )
    return view_page(view, template="upstream_embedding.html", entry="page_upstream_embedding.js", data=data,
                     context=context, summary=summary, section="", title=upstream_prose.TITLES["embedding"],
                     lead=upstream_prose.LEADS["embedding"])  # fmt: skip
