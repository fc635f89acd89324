"""References written for the tests, sharing no code with nilmbuild (issue 36): each follows the documented
definition sample by sample. Used by tests/test_reference_values.py and the browser tests that judge page values.
"""

from __future__ import annotations

import math

import numpy as np


def ref_inverse(z: float, s: dict) -> float:
    """Scaled units -> watts, from the scaler's definition (docs: x / max, (x - mean) / std, ...)."""
    return {
        "max": lambda: z * s["max"],
        "standard": lambda: z * s["std"] + s["mean"],
        "minmax": lambda: z * (s["max"] - s["min"]) + s["min"],
        "mean": lambda: z * s["mean"],
    }[s["kind"]]()


def ref_metrics(y, yh, states, thr, mask):
    """Every metric by one loop over the valid samples."""
    n = se = ae = sy = sy2 = syh = smin = smax = 0.0
    cm = {"tp": 0, "fp": 0, "fn": 0, "tp10": 0, "fp10": 0, "fn10": 0}
    for i in range(len(y)):
        if not mask[i]:
            continue
        d = yh[i] - y[i]
        n, ae, se = n + 1, ae + abs(d), se + d * d
        sy, sy2, syh = sy + y[i], sy2 + y[i] ** 2, syh + yh[i]
        smin, smax = smin + min(y[i], yh[i]), smax + max(y[i], yh[i])
        for sfx, t, p in (("", states[i] > 0, yh[i] > thr), ("10", y[i] > 10, yh[i] > 10)):
            cm["tp" + sfx] += t and p
            cm["fp" + sfx] += p and not t
            cm["fn" + sfx] += t and not p
    tp, fp, fn = cm["tp"], cm["fp"], cm["fn"]
    return {
        "mae": ae / n,
        "rmse": math.sqrt(se / n),
        "nde": se / sy2,
        "sae": abs(syh - sy) / sy,
        "teca": 1 - ae / (2 * sy),
        "mr": smin / smax,
        "precision": tp / (tp + fp),
        "recall": tp / (tp + fn),
        "f1": 2 * tp / (2 * tp + fp + fn),
        "f1_10w": 2 * cm["tp10"] / (2 * cm["tp10"] + cm["fp10"] + cm["fn10"]),
    }


def runs(flags) -> list[tuple[int, int]]:
    """[start, end) of every run of True."""
    out, start = [], None
    for t, f in enumerate(list(flags) + [False]):
        if f and start is None:
            start = t
        elif not f and start is not None:
            out.append((start, t))
            start = None
    return out


def ref_device(z, gate, scaler, thr, min_on, min_off, k):
    """One device through the documented pipeline, sample by sample."""
    T = len(z)
    w = [ref_inverse(float(v), scaler) for v in z]
    on = [g > thr for g in gate]
    kept = list(on)
    for a, b in runs([not v for v in on]):  # bridge interior OFF gaps shorter than min_off
        if a > 0 and b < T and b - a < min_off:
            kept[a:b] = [True] * (b - a)
    for a, b in runs(kept):  # drop ON runs shorter than min_on
        if b - a < min_on:
            kept[a:b] = [False] * (b - a)
    w = [0.0 if on[t] and not kept[t] else w[t] for t in range(T)]
    left, right = (k - 1) // 2, k // 2
    for t in range(T):
        win = [float(g) for g in gate[max(0, t - left) : t + right + 1]]
        if sum(win) / len(win) < thr and max(win) < thr:
            w[t] = 0.0
    return [max(v, 0.0) for v in w]


def ref_postprocess(z, gate, scalers, thr, min_on, min_off, k, agg):
    """(D, T) final watts: every device through ref_device, then the devices' sum capped to the aggregate (a
    missing aggregate reading counts as 0 W)."""
    out = np.array([ref_device(z[i], gate[i], scalers[i], thr[i], min_on[i], min_off[i], k) for i in range(len(z))])
    for t in range(out.shape[1]):
        meter = max(float(agg[t]), 0.0) if math.isfinite(float(agg[t])) else 0.0  # no reading: nothing to share
        s = out[:, t].sum()
        if s > meter:
            out[:, t] *= meter / s
    return out
