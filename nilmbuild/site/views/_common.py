"""Helpers shared by the page views (model sizes, sample choice, window labels, blob packing)."""

from __future__ import annotations

import math
import sys

import msgpack
import numpy as np

from nilmbuild.model.names import INPUT, OUTPUT_POWER, TARGET_POWER

# ---- the model's sizes ------------------------------------------------------------------------------------------


def model_sizes(cfg, resample_s: int = 60) -> dict:
    """The checkpoint's sizes as templates (``site.model.*``) and page JS (``page().model``) use them: the one
    source for every size a page writes in its text (window, d_model, heads, FFN width, ...)."""
    window_min = cfg.window * int(resample_s) / 60
    sizes = {
        "window": int(cfg.window),
        "centre": int(cfg.window) // 2,
        "margin": (int(cfg.window) - int(cfg.window) // 2) // 2,
        "window_minutes": _num(window_min),
        "window_hours": _num(round(window_min / 60, 2)),  # 128 one-minute steps: 2.13 hours
        "step_minutes": _num(resample_s / 60),
        "d_model": int(cfg.d_model),
        "n_head": int(cfg.n_head),
        "head_dim": int(cfg.head_dim),
        "d_ff": int(cfg.d_ff),
        "n_layers": int(cfg.n_encoder_layers),
        "c_embedding": int(cfg.c_embedding),
        "n_channels": int(cfg.n_channels),
        "n_exo": int(getattr(cfg, "n_exo", 0)),
        "kernel_size": int(cfg.kernel_size),
        "dilations": [int(d) for d in cfg.dilations],
        "receptive_fields": receptive_fields(cfg.kernel_size, cfg.dilations),
        "n_cond": int(cfg.n_cond),
        "n_elec": int(cfg.n_cond) - _freq_bands(cfg) * bool(cfg.use_freq_features),
        "n_freq_bands": _freq_bands(cfg),
        "film_hidden": int(cfg.film_hidden_dim),
        "film_in": int(cfg.n_cond) + int(cfg.film_hidden_dim),
        "film_enc_out": 2 * int(cfg.n_encoder_layers) * int(cfg.d_model),
        "n_devices": int(cfg.c_out),
    }
    sizes.update(architecture_sizes(cfg))
    return sizes


def architecture_sizes(cfg) -> dict:
    """The sizes that differ by architecture. The spec: c_embedding DilatedBlock channels, tokens = window. An
    upstream model (model/upstream): its stem is a DilatedBlock 1 -> d_stem beside a 1x1 conv of the E time
    features -> d_time, concatenated; a stats token makes L + 1 tokens."""
    arch = getattr(cfg, "arch", "spec")
    if arch == "spec":
        return {"architecture": arch, "n_tokens": int(cfg.window), "stats_token": False}
    return {
        "architecture": arch,
        "c_embedding": int(cfg.d_stem),
        "d_stem": int(cfg.d_stem),
        "d_time": int(cfg.d_time),
        "n_exo": int(cfg.c_embedding),  # model/upstream: c_embedding counts the time-feature channels
        "n_tokens": int(cfg.window) + 1,
        "stats_token": True,
        "has_film": bool(arch == "condinilm" and cfg.use_film),
        "has_gate": arch == "condinilm",
    }


def _freq_bands(cfg) -> int:
    """Frequency bands of the FiLM condition: the spec's n_freq_bands; the upstream's fixed 8 (F // 8 bins each)."""
    return int(getattr(cfg, "n_freq_bands", 8))


def receptive_fields(kernel_size: int, dilations) -> list[int]:
    """Input steps each dilated ResUnit's output sees, unit by unit: 1 + sum of (k - 1) * d so far (3, 7, 15, 31)."""
    out, rf = [], 1
    for d in dilations:
        rf += (int(kernel_size) - 1) * int(d)
        out.append(rf)
    return out


def _num(x: float):
    """An int when whole (480.0 -> 480), else the float: how sizes read in text."""
    return int(x) if float(x).is_integer() else float(x)


# ---- record names handed to page JS ------------------------------------------------------------------------------


def io_names() -> dict:
    """The model's input, its final power and the target, as page JS receives them (page().data.names)."""
    return {"input": INPUT, "output": OUTPUT_POWER, "target": TARGET_POWER}


# ---- samples and labels -----------------------------------------------------------------------------------------


def pick_varied_samples(ctx, n: int) -> list[int]:
    """n batch samples with the most varied aggregate (std of input channel 0), in batch order.

    Busy windows show more structure than flat night-time ones; the choice is deterministic (the head
    ablation in the capture uses the same rule, so its samples are among the attention page's).
    """
    from nilmbuild.capture.head_ablation import varied_samples

    return varied_samples(ctx.x, n)


def window_starts(ctx, samples) -> list[str]:
    """Each sample's window start as "YYYY-MM-DD HH:MM UTC" (the attention, encoder and forward pages' labels)."""
    t0 = np.asarray(ctx.t0)
    out = []
    for i in samples:
        try:
            out.append(str(np.datetime64(t0[i], "m")).replace("T", " ") + " UTC")
        except Exception:  # noqa: BLE001
            out.append(str(t0[i]))
    return out


# ---- msgpack payloads -------------------------------------------------------------------------------------------


def f32(a) -> bytes:
    """float32 little-endian bytes (how arrays travel in the pages' msgpack blobs)."""
    return np.ascontiguousarray(np.asarray(a, dtype="<f4")).tobytes()


def u8(a) -> bytes:
    return np.ascontiguousarray(np.asarray(a, dtype=np.uint8)).tobytes()


def clean(d):
    """Make nested dicts/lists msgpack-safe: str keys, numpy scalars as Python ones, non-finite floats as None."""
    if isinstance(d, dict):
        return {str(k): clean(v) for k, v in d.items()}
    if isinstance(d, (list, tuple)):
        return [clean(v) for v in d]
    if isinstance(d, (bool, np.bool_)):
        return bool(d)
    if isinstance(d, (np.integer,)):
        return int(d)
    if isinstance(d, (float, np.floating)):
        v = float(d)
        return v if math.isfinite(v) else None
    return d


# ---- film_kit.js pages (embedding, FiLM, gate) ------------------------------------------------------------------


def pick_device_samples(ctx, n: int) -> list[int]:
    """Batch indices that together show every device ON (round-robin over devices), then the earliest others."""
    state = np.asarray(ctx.y)[:, :, 1, :]  # (B, M, L)
    active = state.any(axis=-1)  # (B, M)
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
    """JSON-able facts a film_kit page needs besides the capture: device names, window starts, thresholds (watts
    conversions come with every page's payload, page().watts)."""
    prep = ctx.prepared
    t0 = [str(np.datetime64(t, "s")) + "Z" for t in np.asarray(ctx.t0)[samples]]
    return {
        "samples": [int(s) for s in samples],
        "t0": t0,
        "devices": list(ctx.loaded.devices or prep.devices),
        "thresholds_w": {k: float(v) for k, v in (prep.thresholds_w or {}).items()},
        "resample_s": int(prep.resample_s),
    }


def kit_blobs(ctx, records: list[str], samples: list[int], extra: dict) -> dict[str, bytes]:
    """A film_kit page's blobs: ``capture`` (the records for the samples) and ``extra`` (msgpack of page_extra + more)."""
    return {"capture": ctx.blob(records, samples), "extra": msgpack.packb(extra, use_bin_type=True)}


def view_page(view: str, **kw):
    """The PageSpec of view module `view` (pass __name__): slug, title, section and summary from its SLUG, TITLE,
    SECTION and SUMMARY, template SLUG.html and entry page_SLUG.js by the views' convention; kw sets the rest
    (data, blobs, context, files) and overrides any of those."""
    from nilmbuild.site.build import PageSpec

    m = sys.modules[view]
    slug = m.SLUG
    base = {
        "slug": slug,
        "title": m.TITLE,
        "template": f"{slug}.html",
        "entry": f"page_{slug}.js",
        "section": getattr(m, "SECTION", ""),
        "summary": getattr(m, "SUMMARY", ""),
    }
    return PageSpec(**{**base, **kw})
