"""Disaggregation metrics (definitions: docs/metrics.md, nilm-facts "Metric definitions").

All per device, on watts, over the samples where `mask` is True (valid bins):

    MAE  = mean |yhat - y|                          (W)
    RMSE = sqrt(mean (yhat - y)^2)                  (W)
    NDE  = sum (yhat - y)^2 / sum y^2               (NILMFormer / torch-nilm; NILMTK takes its sqrt)
    SAE  = |sum yhat - sum y| / sum y
    TECA = 1 - sum |yhat - y| / (2 sum y)
    MR   = sum min(yhat, y) / sum max(yhat, y)
    precision / recall / f1: ON state, NILMFormer convention: predicted ON = yhat > device threshold
         (nilm-facts thresholds), true ON = the duration-filtered ground-truth states from prepare()
    f1_10w: NILMTK convention, yhat > 10 W vs y > 10 W

A ratio whose denominator is 0 is NaN (JSON null). F1 = 2 TP / (2 TP + FP + FN), so it is 0 (not
NaN) when there are true ON samples and no predicted ones; NaN only when neither has any.
"""

from __future__ import annotations

import math

import numpy as np

METRICS = ("mae", "rmse", "nde", "sae", "teca", "mr", "precision", "recall", "f1", "f1_10w")
NILMTK_THRESHOLD_W = 10.0


def _ratio(a: float, b: float) -> float:
    return float(a / b) if b != 0 else float("nan")


def _select(x, mask):
    x = np.asarray(x, dtype=np.float64)
    return x if mask is None else x[np.asarray(mask, dtype=bool)]


def mae(y, yhat, mask=None) -> float:
    d = _select(yhat, mask) - _select(y, mask)
    return float(np.abs(d).mean()) if d.size else float("nan")


def rmse(y, yhat, mask=None) -> float:
    d = _select(yhat, mask) - _select(y, mask)
    return float(np.sqrt((d**2).mean())) if d.size else float("nan")


def nde(y, yhat, mask=None) -> float:
    y, yh = _select(y, mask), _select(yhat, mask)
    return _ratio(((yh - y) ** 2).sum(), (y**2).sum())


def sae(y, yhat, mask=None) -> float:
    y, yh = _select(y, mask), _select(yhat, mask)
    return _ratio(abs(yh.sum() - y.sum()), y.sum())


def teca(y, yhat, mask=None) -> float:
    y, yh = _select(y, mask), _select(yhat, mask)
    r = _ratio(np.abs(yh - y).sum(), 2 * y.sum())
    return 1.0 - r if not math.isnan(r) else r


def mr(y, yhat, mask=None) -> float:
    y, yh = _select(y, mask), _select(yhat, mask)
    return _ratio(np.minimum(yh, y).sum(), np.maximum(yh, y).sum())


def classification(true_on, pred_on, mask=None) -> dict[str, float]:
    """precision, recall, f1 of boolean ON arrays."""
    t, p = _select(true_on, mask) > 0.5, _select(pred_on, mask) > 0.5
    tp, fp, fn = int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum())
    return {"precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn), "f1": _ratio(2 * tp, 2 * tp + fp + fn)}


def device_metrics(y, yhat, states, threshold_w: float, mask=None) -> dict[str, float]:
    """Every metric for one device. y, yhat (T,) watts; states (T,) ground-truth ON (duration-filtered)."""
    out = {
        "mae": mae(y, yhat, mask),
        "rmse": rmse(y, yhat, mask),
        "nde": nde(y, yhat, mask),
        "sae": sae(y, yhat, mask),
        "teca": teca(y, yhat, mask),
        "mr": mr(y, yhat, mask),
    }
    out.update(classification(states, np.asarray(yhat) > threshold_w, mask))
    out["f1_10w"] = classification(np.asarray(y) > NILMTK_THRESHOLD_W, np.asarray(yhat) > NILMTK_THRESHOLD_W, mask)[
        "f1"
    ]
    return out


def all_metrics(devices, y, yhat, states, thresholds_w: dict, mask=None) -> dict[str, dict[str, float]]:
    """(D, T) arrays -> {device: metrics}."""
    return {d: device_metrics(y[i], yhat[i], states[i], float(thresholds_w[d]), mask) for i, d in enumerate(devices)}


def mean_baseline(
    devices, y, states, thresholds_w: dict, train_means_w: dict, mask=None
) -> dict[str, dict[str, float]]:
    """The mean predictor: each device predicted as its constant training-set mean power (W)."""
    yhat = np.stack([np.full(np.shape(y)[-1], float(train_means_w[d])) for d in devices]) if len(devices) else y
    return all_metrics(devices, y, yhat, states, thresholds_w, mask)


def zero_baseline(devices, y, states, thresholds_w: dict, mask=None) -> dict[str, dict[str, float]]:
    """The all-OFF predictor: 0 W for every device at every step (hard to beat on MAE for sparse devices)."""
    return all_metrics(devices, y, np.zeros_like(np.asarray(y, dtype=float)), states, thresholds_w, mask)


def baselines(devices, y, states, thresholds_w: dict, train_means_w: dict, mask=None) -> dict[str, dict]:
    """{"mean": {device: metrics}, "zero": {device: metrics}}: the two reference predictors."""
    return {
        "mean": mean_baseline(devices, y, states, thresholds_w, train_means_w, mask),
        "zero": zero_baseline(devices, y, states, thresholds_w, mask),
    }


def json_safe(obj):
    """NaN/inf -> None, numpy scalars -> Python, recursively (strict JSON)."""
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(float(obj)) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def format_table(result: dict) -> str:
    """Plain-text table: one row per device and one per device's baseline."""
    cols = METRICS
    head = f"{'device':<18}{'predictor':<12}" + "".join(f"{c:>10}" for c in cols)
    lines = [head, "-" * len(head)]

    def fmt(v):
        return f"{'-':>10}" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:>10.3f}"

    refs = result.get("baselines") or {"mean": result.get("baseline", {})}
    for d, m in result.get("devices", {}).items():
        lines.append(f"{d:<18}{'NILMFormer':<12}" + "".join(fmt(m.get(c)) for c in cols))
        for name, ref in refs.items():
            if ref.get(d) is not None:
                lines.append(f"{'':<18}{name:<12}" + "".join(fmt(ref[d].get(c)) for c in cols))
    return "\n".join(lines)
