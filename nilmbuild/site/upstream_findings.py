"""What a reader should notice on an upstream model's pages (CondiNILM, the original NILMFormer), computed from the
loaded model's captured tensors: the numbers of each finding and which case it is about, so that another checkpoint
gives other numbers and other choices. Plain arrays in, plain dicts out; nilmbuild/site/upstream_story.py reads the
capture and writes the sentences. (findings.py holds the ones every architecture shares.)
"""

from __future__ import annotations

import numpy as np


def _argmax2(a: np.ndarray) -> tuple[int, int]:
    i, j = np.unravel_index(int(np.argmax(a)), a.shape)
    return int(i), int(j)


def _r(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson r of two series (0 when either is constant)."""
    x, y = np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()
    sx, sy = x.std(), y.std()
    return float(((x - x.mean()) * (y - y.mean())).mean() / (sx * sy)) if sx > 0 and sy > 0 else 0.0


def stats_token_share(weights: list) -> dict:
    """weights: per layer, (S, H, T, T) attention weights over T = L + 1 tokens, the stats token last. The share of
    a time-step query's weight that goes to the stats token, averaged over samples and time-step queries, per
    (layer, head); the heads that give it the most and the least, and what a uniform head would give (1 / T)."""
    share = np.stack([np.asarray(w, np.float64)[:, :, :-1, -1].mean(axis=(0, 2)) for w in weights])  # (layers, H)
    top, low = _argmax2(share), _argmax2(-share)
    return {
        "share": share,
        "top": {"layer": top[0], "head": top[1], "share": float(share[top])},
        "low": {"layer": low[0], "head": low[1], "share": float(share[low])},
        "uniform": 1.0 / np.shape(weights[0])[-1],
    }


def local_time_head(weights: list) -> dict:
    """weights: per layer, (S, H, T, T) over the L time steps and the stats token (last). Over the time-step keys
    only (each row renormalised), how far from its query a head's weight sits, in steps, averaged over samples and
    time-step queries: the most local (layer, head) and its distance, and the furthest-looking one."""
    dist = []
    for w in weights:
        t = np.asarray(w, np.float64)[:, :, :-1, :-1]
        t = t / np.maximum(t.sum(axis=-1, keepdims=True), 1e-30)
        L = t.shape[-1]
        gap = np.abs(np.arange(L)[:, None] - np.arange(L)[None, :])
        dist.append((t * gap).sum(axis=-1).mean(axis=(0, -1)))
    d = np.stack(dist)  # (layers, H)
    near, far = _argmax2(-d), _argmax2(d)
    return {"local": (*near, float(d[near])), "global": (*far, float(d[far]))}


def soft_gate_removed(ungated_w: np.ndarray, gated_w: np.ndarray, step_h: float) -> dict:
    """ungated_w, gated_w: (S, D, L) power in W before and after the soft gate (before the evaluation's clamp at
    0 W). The (sample, device) where the gate removes the most energy once both are clamped at 0 as the evaluation
    clamps them, in kWh, and that energy's share of the ungated energy there."""
    before = np.clip(np.asarray(ungated_w, np.float64), 0, None).sum(axis=-1)
    after = np.clip(np.asarray(gated_w, np.float64), 0, None).sum(axis=-1)
    removed = (before - after) * float(step_h) / 1000.0
    s, d = _argmax2(removed)
    total = before[s, d] * float(step_h) / 1000.0
    return {
        "sample": s,
        "device": d,
        "kwh": float(removed[s, d]),
        "share": float(removed[s, d] / total) if total else 0.0,
    }


def output_film_change(raw_w: np.ndarray, film_w: np.ndarray, skip=()) -> dict:
    """raw_w, film_w: (S, D, L) the power head's output in W before and after CondiNILM's output FiLM (both before
    the ReLU). What the ReLU would pass without the FiLM against what it passes with it: the (sample, device) whose
    mean |change| is largest, that change in W, and the change of the mean power (signed). skip: device indices
    left out (the sparse CNN's devices, whose output does not come from this head)."""
    raw, film = (np.clip(np.asarray(a, np.float64), 0, None) for a in (raw_w, film_w))
    mad = np.abs(film - raw).mean(axis=-1)
    mad[:, list(skip)] = -np.inf
    s, d = _argmax2(mad)
    return {"sample": s, "device": d, "mean_abs_w": float(mad[s, d]), "delta_w": float((film - raw)[s, d].mean())}


def strongest_film_layer(gamma_mean: np.ndarray, beta_mean: np.ndarray) -> dict:
    """gamma_mean, beta_mean: (S, layers, d) the encoder FiLM each layer applies, (1 + gamma) FFN + beta. The layer
    whose gamma departs most from 0 (mean |gamma| over samples and features), with it and the largest |gamma|."""
    g, b = np.abs(np.asarray(gamma_mean, np.float64)), np.abs(np.asarray(beta_mean, np.float64))
    per_layer = g.mean(axis=(0, 2))
    l = int(np.argmax(per_layer))
    return {
        "layer": l,
        "mean_abs_gamma": float(per_layer[l]),
        "max_abs_gamma": float(g[:, l].max()),
        "mean_abs_beta": float(b[:, l].mean()),
    }


def learned_denorm(mean_p: np.ndarray, std_p: np.ndarray, mean_in: np.ndarray, std_in: np.ndarray) -> dict:
    """The original NILMFormer's de-normalisation: mean_p, std_p (S,) the mean' and std' the stats token's projection
    gives (in the device's watts: what a conv-head output of 0 and of 1 adds), mean_in, std_in (S,) each window's own
    mean and std (aggregate watts). The windows with the smallest and the largest std', and how closely mean' and
    std' follow the window's own statistics (Pearson r over the windows)."""
    sp = np.asarray(std_p, np.float64)
    lo, hi = int(np.argmin(sp)), int(np.argmax(sp))
    return {
        "low": {"sample": lo, "std_w": float(sp[lo]), "mean_w": float(np.asarray(mean_p)[lo])},
        "high": {"sample": hi, "std_w": float(sp[hi]), "mean_w": float(np.asarray(mean_p)[hi])},
        "r_std": _r(sp, std_in),
        "r_mean": _r(mean_p, mean_in),
    }
