"""Validation after each epoch: the loss a run keeps its best weights by, per-device MAE / F1 of the hard-gated
output, and the mean-per-appliance baseline beside them. Scaled units become watts through the Prepared's own
scalers (`Prepared.appliance_scaler`)."""

from __future__ import annotations

import math

import numpy as np
import torch

from .losses import COMPONENTS, LossWeights, loss_components, weight_matrix

BASE_COMPONENTS = tuple(c for c in COMPONENTS if c not in ("anti_collapse", "out_stats"))


def appliance_watts(prepared, z: np.ndarray) -> np.ndarray:
    """(N, D, L) scaled appliance power -> (D, N * L) watts, each device through its scaler."""
    return np.stack([prepared.appliance_scaler(d).inverse(z[:, i]).ravel() for i, d in enumerate(prepared.devices)])


@torch.no_grad()
def validate(model, data, weights: list[LossWeights], prepared, pos_weight, batch_size: int = 32) -> dict:
    """Validation loss (the 8 base components with the type weights on the soft-gated output: no crops, no
    schedule terms, and no dependence on the hard-gate thresholds, which are only calibrated at the end) and
    per-device MAE (W) / F1 of the hard-gated output on the windows (no post-processing)."""
    from nilmbuild.infer.metrics import all_metrics

    N = data["x"].shape[0]
    if N == 0:
        return {}
    was = model.training
    model.eval()
    sums, preds = None, []
    wm = weight_matrix(weights, 0.0, 0.0)
    dev = next(model.parameters()).device
    for a in range(0, N, batch_size):
        sl = slice(a, a + batch_size)
        x = data["x"][sl].to(dev)
        soft = model(x, gate_mode="soft")  # the loss: threshold-free, as trained
        out = model(x)  # MAE / F1: the hard gate, as at inference
        c = loss_components(
            soft.power,
            soft.gate_logit,
            *(data[k][sl].to(dev) for k in ("y", "s")),
            None,
            data["lo"][sl].to(dev),
            pos_weight,
        )
        n = out.power.shape[0]
        sums = {k: (sums[k] if sums else 0) + v.cpu() * n for k, v in c.items() if k in BASE_COMPONENTS}
        preds.append(out.power.float().cpu())
    model.train(was)
    comps = {k: v / N for k, v in sums.items()}
    per_dev = sum(wm[k] * v for k, v in comps.items())
    devs = list(prepared.devices)
    P = torch.cat(preds).numpy()  # (N, D, L)
    yw = appliance_watts(prepared, data["y"].numpy())
    pw = np.clip(appliance_watts(prepared, P), 0, None)
    st = data["s"].numpy().transpose(1, 0, 2).reshape(len(devs), -1)
    m = all_metrics(devs, yw, pw, st, prepared.thresholds_w)
    return {
        "loss": float(per_dev.sum()),
        "loss_per_device": {d: float(per_dev[i]) for i, d in enumerate(devs)},
        "devices": {d: {"mae": rounded(m[d]["mae"]), "f1": rounded(m[d]["f1"])} for d in devs},
    }


def val_baseline(data, prepared) -> dict:
    """Mean-per-appliance baseline on the validation windows (train-split mean power)."""
    from nilmbuild.infer.metrics import mean_baseline

    devs = list(prepared.devices)
    if data["x"].shape[0] == 0:
        return {}
    tr = prepared.train
    means = {d: float(tr.appliances_w[i][tr.valid].mean()) for i, d in enumerate(devs)}
    yw = appliance_watts(prepared, data["y"].numpy())
    st = data["s"].numpy().transpose(1, 0, 2).reshape(len(devs), -1)
    m = mean_baseline(devs, yw, st, prepared.thresholds_w, means)
    return {d: {"mae": rounded(m[d]["mae"]), "f1": rounded(m[d]["f1"]), "mean_w": means[d]} for d in devs}


def rounded(v) -> float | None:
    v = float(v)
    return round(v, 6) if math.isfinite(v) else None
