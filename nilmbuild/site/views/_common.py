"""Helpers shared by the attention, encoder and forward views (issue 6; one owner, not a shared API)."""

from __future__ import annotations

import numpy as np


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


def pick_samples(ctx, n: int) -> list[int]:
    """n batch samples with the most varied aggregate (std of input channel 0), in batch order.

    Busy windows show more structure than flat night-time ones; the choice is deterministic.
    """
    x = np.asarray(ctx.x)
    B = x.shape[0]
    if B <= n:
        return list(range(B))
    order = np.argsort(-x[:, 0, :].std(axis=1), kind="stable")
    return sorted(int(i) for i in order[:n])


def window_starts(ctx, samples) -> list[str]:
    t0 = np.asarray(ctx.t0)
    out = []
    for i in samples:
        try:
            out.append(str(np.datetime64(t0[i], "m")).replace("T", " ") + " UTC")
        except Exception:  # noqa: BLE001
            out.append(str(t0[i]))
    return out
