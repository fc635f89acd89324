"""What a reader should notice, computed from the loaded model's tensors (issue 35 item 3).

Each function takes plain arrays (watts, probabilities, the training log) and returns the numbers of one finding
and which case it is about (the device, head, layer, sample or epoch with the largest effect), so another
checkpoint gives other words and numbers. They know nothing of pages: nilmbuild/site/story.py reads the capture,
calls them and writes the sentences each page places on its figure.
"""

from __future__ import annotations

import numpy as np


def _argmax_abs(a: np.ndarray) -> tuple[int, ...]:
    """Index of the entry with the largest |value| (the first one on ties)."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(a))), a.shape))


def film_off_change(on_w: np.ndarray, off_w: np.ndarray, true_w: np.ndarray) -> dict:
    """on_w, off_w, true_w: (S, D, L) watts with FiLM, without it (the no_film ablation) and the ground truth. The
    (sample, device) whose mean absolute error grows most when FiLM is switched off, with both errors and the
    change of its mean power, in W."""
    on, off, true = (np.asarray(a, np.float64) for a in (on_w, off_w, true_w))
    mae_on, mae_off = np.abs(on - true).mean(axis=-1), np.abs(off - true).mean(axis=-1)
    s, d = (int(i) for i in np.unravel_index(int(np.argmax(mae_off - mae_on)), mae_on.shape))
    return {
        "sample": s,
        "device": d,
        "mae_on_w": float(mae_on[s, d]),
        "mae_off_w": float(mae_off[s, d]),
        "delta_w": float(off[s, d].mean() - on[s, d].mean()),
    }


def gate_removed_energy(raw_w: np.ndarray, prob: np.ndarray, thresholds, step_h: float) -> dict:
    """raw_w: (S, D, L) raw head power in W before the gate; prob: (S, D, L) gate probabilities; thresholds: (D,)
    hard-gate thresholds (the gate is open where prob > threshold); step_h: hours per time step. The (sample,
    device) whose closed gate removes the most raw energy, in kWh, and how many steps the gate was closed there."""
    raw = np.asarray(raw_w, np.float64)
    closed = np.asarray(prob) <= np.asarray(thresholds, np.float64)[None, :, None]
    kwh = (raw * closed).sum(axis=-1) * float(step_h) / 1000.0
    s, d = (int(i) for i in np.unravel_index(int(np.argmax(kwh)), kwh.shape))
    return {"sample": s, "device": d, "kwh": float(kwh[s, d]), "closed_steps": int(closed[s, d].sum())}


def top_head(delta_w: np.ndarray, sample: np.ndarray | None = None) -> dict:
    """delta_w: (layers, heads, D) change in a device's watts when one head is knocked out (ablation.heads.delta_w);
    sample: the same shape, the batch sample where that change is largest. The (layer, head, device) cell with
    the largest change."""
    d = np.asarray(delta_w, np.float64)
    layer, head, dev = (int(i) for i in np.unravel_index(int(np.argmax(d)), d.shape))
    out = {"layer": layer, "head": head, "device": dev, "delta_w": float(d[layer, head, dev])}
    if sample is not None:
        out["sample"] = int(np.asarray(sample)[layer, head, dev])
    return out


def attention_distance(weights: np.ndarray) -> np.ndarray:
    """weights: (S, H, L, L) attention weights (query rows, key columns, each row summing to 1). How far from its
    query a head's weight sits, in steps: sum over keys of w[t, s] * |t - s|, averaged over samples and queries: (H,)."""
    w = np.asarray(weights, np.float64)
    L = w.shape[-1]
    dist = np.abs(np.arange(L)[:, None] - np.arange(L)[None, :])
    return (w * dist).sum(axis=-1).mean(axis=(0, -1))


def local_and_global(dist: np.ndarray) -> dict:
    """dist: (layers, heads) attention distances (attention_distance of each layer). The head whose weight sits
    closest to its query and the one whose weight sits furthest, with their distances."""
    a = np.asarray(dist, np.float64)
    near = [int(i) for i in np.unravel_index(int(np.argmin(a)), a.shape)]
    far = [int(i) for i in np.unravel_index(int(np.argmax(a)), a.shape)]
    return {"local": near + [float(a[tuple(near)])], "global": far + [float(a[tuple(far)])]}


def weight_moved(masked: np.ndarray, unmasked: np.ndarray) -> np.ndarray:
    """masked, unmasked: (S, H, L, L) weights of the same heads with and without the diagonal mask. The share of a
    query's weight that moves to other keys (half the L1 distance of the two rows), averaged over samples and
    queries: (H,)."""
    d = np.abs(np.asarray(unmasked, np.float64) - np.asarray(masked, np.float64))
    return 0.5 * d.sum(axis=-1).mean(axis=(0, -1))


def pcgrad_timeline(epochs: list[dict]) -> dict:
    """epochs: the training log's per-epoch records (``pcgrad``: ``enabled``, ``mean_cos`` {"a|b": cosine}).
    The first epoch PCGrad ran, the first with a conflict (a negative mean cosine), and the most conflicting pair
    over all epochs with its epoch and cosine (None where there is none)."""
    first_on = first_conflict = None
    worst = None  # (cosine, epoch, pair)
    for e in epochs:
        pc = e.get("pcgrad") or {}
        if not pc.get("enabled"):
            continue
        first_on = e["epoch"] if first_on is None else first_on
        for pair, cos in (pc.get("mean_cos") or {}).items():
            if cos is None:
                continue
            if cos < 0 and first_conflict is None:
                first_conflict = e["epoch"]
            if worst is None or cos < worst[0]:
                worst = (float(cos), int(e["epoch"]), pair)
    out = {"first_on": first_on, "first_conflict": first_conflict, "epochs": len(epochs)}
    if worst is not None:
        out.update(min_cos=worst[0], min_epoch=worst[1], pair=worst[2].split("|"))
    return out


def device_errors(pred_w: np.ndarray, true_w: np.ndarray, valid=None) -> dict:
    """pred_w, true_w: (..., D, L) watts. Each device's error relative to its energy, sum|pred - true| / sum true,
    over the valid steps (valid: broadcastable bool mask, None = all); the best and the worst device among those
    with energy in the data (None when no device has any)."""
    p = np.moveaxis(np.asarray(pred_w, np.float64), -2, 0).reshape(np.shape(pred_w)[-2], -1)
    t = np.moveaxis(np.asarray(true_w, np.float64), -2, 0).reshape(np.shape(true_w)[-2], -1)
    if valid is not None:
        m = np.broadcast_to(np.asarray(valid, bool), np.shape(pred_w))
        m = np.moveaxis(m, -2, 0).reshape(p.shape)
        p, t = np.where(m, p, 0.0), np.where(m, t, 0.0)
    energy = t.sum(axis=1)
    rel = np.abs(p - t).sum(axis=1) / np.where(energy > 0, energy, 1.0)
    has = np.flatnonzero(energy > 0)
    if not len(has):
        return {"relative": rel.tolist(), "best": None, "worst": None}
    best, worst = int(has[np.argmin(rel[has])]), int(has[np.argmax(rel[has])])
    return {"relative": rel.tolist(), "best": best, "worst": worst}


def appliance_share(aggregate_w: np.ndarray, devices_w: np.ndarray) -> float:
    """aggregate_w: (S, L); devices_w: (S, D, L) watts. The labelled devices' share of the metered energy."""
    total = float(np.asarray(aggregate_w, np.float64).sum())
    return float(np.asarray(devices_w, np.float64).sum()) / total if total > 0 else 0.0


def rarest_device(states: np.ndarray) -> dict:
    """states: (S, D, L) ON/OFF (1/0). The device ON for the smallest share of steps among those ever ON (or the
    least ON of all when none is), and that share."""
    share = np.asarray(states, np.float64).mean(axis=(0, 2))
    on = np.flatnonzero(share > 0)
    pool = on if len(on) else np.arange(len(share))
    d = int(pool[np.argmin(share[pool])])
    return {"device": d, "share": float(share[d])}


def tracking_feature(features: np.ndarray, signal: np.ndarray) -> dict:
    """features: (S, F, L); signal: (S, L). The feature whose values over all samples and steps correlate most
    (by |Pearson r|) with the signal, and r (signed)."""
    f = np.moveaxis(np.asarray(features, np.float64), 1, 0).reshape(np.shape(features)[1], -1)
    s = np.asarray(signal, np.float64).reshape(-1)
    f = f - f.mean(axis=1, keepdims=True)
    s = s - s.mean()
    den = np.sqrt((f * f).sum(axis=1) * (s * s).sum())
    r = np.where(den > 0, (f @ s) / np.where(den > 0, den, 1.0), 0.0)
    i = int(np.argmax(np.abs(r)))
    return {"feature": i, "r": float(r[i])}


def stream_updates(ins: list, adds: dict) -> dict:
    """ins: per layer, the residual stream entering it (any shape); adds: name -> per layer, what that sub-step adds
    to the stream (same shapes). Each addition's size relative to the stream entering its layer (Frobenius norms),
    and the (layer, name) with the largest."""
    size = {
        k: [
            float(
                np.linalg.norm(np.asarray(a[l], np.float64))
                / max(np.linalg.norm(np.asarray(ins[l], np.float64)), 1e-30)
            )
            for l in range(len(ins))
        ]
        for k, a in adds.items()
    }
    layer, name = max(((l, k) for k in size for l in range(len(ins))), key=lambda lk: size[lk[1]][lk[0]])
    return {"ratios": size, "layer": layer, "part": name, "ratio": size[name][layer]}


def peak_owner(aggregate_w: np.ndarray, out_w: np.ndarray) -> dict:
    """aggregate_w: (S, L); out_w: (S, D, L) predicted watts. The sample and step with the highest aggregate, and
    the device the model gives the most power there."""
    a = np.asarray(aggregate_w, np.float64)
    s, t = (int(i) for i in np.unravel_index(int(np.argmax(a)), a.shape))
    o = np.asarray(out_w, np.float64)[s, :, t]
    d = int(np.argmax(o))
    return {"sample": s, "t": t, "aggregate_w": float(a[s, t]), "device": d, "device_w": float(o[d])}


def top_energy(out_w: np.ndarray, step_h: float) -> dict:
    """out_w: (S, D, L) predicted watts. The (sample, device) with the most predicted energy in its window, in kWh."""
    kwh = np.clip(np.asarray(out_w, np.float64), 0, None).sum(axis=-1) * float(step_h) / 1000.0
    s, d = (int(i) for i in np.unravel_index(int(np.argmax(kwh)), kwh.shape))
    return {"sample": s, "device": d, "kwh": float(kwh[s, d])}


def best_epoch(epochs: list[dict]) -> dict | None:
    """The epoch with the lowest validation loss (``val.loss`` of the training log's per-epoch records)."""
    vals = [(float(e["val"]["loss"]), int(e["epoch"])) for e in epochs if (e.get("val") or {}).get("loss") is not None]
    if not vals:
        return None
    loss, epoch = min(vals)
    return {"epoch": epoch, "loss": loss}


def busiest_window(energy: np.ndarray) -> int:
    """energy: (S, D) each device's predicted energy per window. The window whose answer holds the most devices:
    the largest sum over devices of the window's energy as a share of that device's largest (a device predicted
    nowhere counts 0); the first such window on ties."""
    e = np.clip(np.asarray(energy, np.float64), 0, None)
    top = e.max(axis=0)
    share = np.divide(e, top, out=np.zeros_like(e), where=top > 0)
    return int(np.argmax(share.sum(axis=1)))


def removed_share(fractions, deletion, at: float) -> dict:
    """Deletion curve (normalised output after replacing the top `fractions` of steps by the baseline) -> the share
    of the explained output gone once the top `at` of the steps are replaced (1 - curve at the nearest fraction)."""
    fr = np.asarray(fractions, np.float64)
    i = int(np.argmin(np.abs(fr - at)))
    return {"fraction": float(fr[i]), "removed": float(1.0 - np.asarray(deletion, np.float64)[i])}


def most_faithful(rows: list[dict], device: str) -> dict | None:
    """Quality rows (explain.served) -> the method with the lowest deletion area for `device`, with its area and
    the random ranking's; None when no method has a finite area."""
    mine = [r for r in rows if r["device"] == device and r.get("deletion_area") is not None]
    mine = [r for r in mine if np.isfinite(r["deletion_area"])]
    if not mine:
        return None
    best = min(mine, key=lambda r: r["deletion_area"])
    return {
        "method": best["method"],
        "area": float(best["deletion_area"]),
        "random": float(best["random_deletion_area"]),
    }
