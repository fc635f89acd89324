"""Helpers shared by the page views (sample choice, window labels, watt scaling, blob packing)."""

from __future__ import annotations

import math

import msgpack
import numpy as np


# ---- scaling ----------------------------------------------------------------------------------------------------

def aggregate_watts_affine(ctx) -> dict | None:
    """watts = a * scaled + b for the aggregate channel, from the checkpoint's (or fitted) scaler.

    None when no scaler is available or it is not affine (the pages then say "scaled units").
    """
    try:
        from nilmbuild.data.preprocess import scaler_from_dict

        scalers = getattr(ctx.prepared, "scalers", None) or (ctx.loaded.scalers or {})
        sc = scaler_from_dict(scalers["aggregate"])
        z = np.array([0.0, 0.5, 1.0], dtype=np.float64)
        w = np.asarray(sc.inverse(z), dtype=np.float64)
        a, b = float(w[2] - w[0]), float(w[0])
        if not np.isfinite([a, b]).all() or abs(w[1] - (a * 0.5 + b)) > 1e-6 * max(1.0, abs(a)):
            return None
        return {"a": a, "b": b, "unit": "W"}
    except Exception:  # noqa: BLE001 - a missing scaler only changes the unit shown
        return None


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
    """JSON-able facts a film_kit page needs besides the capture: scalers, device names, window starts."""
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


def kit_blobs(ctx, records: list[str], samples: list[int], extra: dict) -> dict[str, bytes]:
    """A film_kit page's blobs: ``capture`` (the records for the samples) and ``extra`` (msgpack of page_extra + more)."""
    return {"capture": ctx.blob(records, samples), "extra": msgpack.packb(extra, use_bin_type=True)}
