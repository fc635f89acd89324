"""Hard-gate thresholds calibrated on the validation split, scored exactly as `nilmbuild evaluate` scores.

With a BCE pos_weight w the gate probability is inflated (optimum p = w q / (w q + 1 - q) for a true ON
probability q), so 0.5 is not the right cut, and the post-processing that follows the gate (short-activation
suppression, long-OFF suppression, clamp, cap to the aggregate) changes which cut is best. So the
calibration runs the model over the continuous validation series by seq2subseq twice, once with every gate
open and once with every gate closed; for a threshold t the hard-gated output is then "open where gate > t,
closed elsewhere" (the gate is the same in both runs), and it goes through the same post-processing and
metrics as evaluate. Per device: the threshold with the best F1 among those whose MAE is not above the
better of the two baselines (train-mean, all-OFF), else the one with the lowest MAE. `recalibrate` does it again
for a checkpoint file (`nilmbuild calibrate`).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import torch

THRESHOLD_GRID = tuple(round(0.05 * i, 2) for i in range(2, 20)) + (0.97, 0.99)  # 0.10 .. 0.99


def _series_outputs(model, prepared, batch_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(power with gates open, power with gates closed, gate) over the continuous val series, each (D, T)."""
    from nilmbuild.infer.seq2subseq import seq2subseq
    from nilmbuild.pipeline import model_input

    sp = prepared.val
    # (7, T): scaled with prepared's scalers, with the time features of the model's architecture (model.cfg)
    x = model_input(SimpleNamespace(scalers=prepared.scalers, cfg=model.cfg), sp.timestamps, sp.aggregate_w)
    old = model.gate_thresholds.clone()
    try:
        model.gate_thresholds.fill_(-1.0)
        opened = seq2subseq(model, x, batch_size=batch_size)
        model.gate_thresholds.fill_(2.0)
        closed = seq2subseq(model, x, batch_size=batch_size)
    finally:
        model.gate_thresholds.copy_(old)
    return opened.power, closed.power, opened.gate


def _score(prepared, devices, power, gate, thresholds: dict, step_s: int) -> dict:
    """Post-process a (D, T) scaled output with the given gate thresholds and score it like evaluate."""
    from nilmbuild.infer.metrics import all_metrics
    from nilmbuild.infer.postprocess import PostConfig, postprocess

    sp = prepared.val
    pc = PostConfig(
        step_s=step_s,
        gate_thresholds=thresholds,
        min_on_steps={d: int(v) for d, v in prepared.min_on_steps.items()},
        min_off_steps={d: int(v) for d, v in prepared.min_off_steps.items()},
    )
    post = postprocess(power, gate, devices, prepared.scalers, pc, aggregate_w=sp.aggregate_w)
    idx = [list(prepared.devices).index(d) for d in devices]
    return all_metrics(devices, sp.appliances_w[idx], post["final_w"], sp.states[idx], prepared.thresholds_w, sp.valid)


@torch.no_grad()
def calibrate_gates(model, prepared, batch_size: int = 32) -> dict:
    """-> {device: {"threshold", "f1", "mae_w", "baseline_mae_w", "default"}} (never looks at the test split)."""
    devs = model.cfg.device_names
    res = {
        d: {"threshold": float(t), "f1": None, "mae_w": None, "baseline_mae_w": None, "default": float(t)}
        for d, t in zip(devs, model.gate_thresholds.tolist())
    }
    sp = prepared.val
    if sp.timestamps.shape[0] == 0 or not sp.valid.any():
        return res
    was = model.training
    model.eval()
    try:
        p_open, p_closed, gate = _series_outputs(model, prepared, batch_size)
    finally:
        model.train(was)
    tr = prepared.train
    scored = {}  # threshold -> metrics of every device
    for t in THRESHOLD_GRID:
        power = np.where(gate > t, p_open, p_closed)
        scored[t] = _score(prepared, devs, power, gate, {d: t for d in devs}, prepared.resample_s)
    for d in devs:
        j = list(prepared.devices).index(d)
        if not sp.states[j][sp.valid].any():
            continue  # no activation to calibrate on
        y = sp.appliances_w[j][sp.valid]
        base = min(float(np.abs(y - tr.appliances_w[j][tr.valid].mean()).mean()), float(np.abs(y).mean()))
        rows = [(scored[t][d]["mae"], _finite(scored[t][d]["f1"]), t) for t in THRESHOLD_GRID]
        ok = [r for r in rows if r[0] <= base]
        m, f, t = max(ok, key=lambda r: (r[1], -r[0])) if ok else min(rows)
        res[d].update(threshold=float(t), f1=round(f, 6), mae_w=round(float(m), 6), baseline_mae_w=round(base, 6))
    return res


def apply_thresholds(model, thresholds: dict) -> None:
    """Write gate thresholds into the model's config (saved with the checkpoint) and its buffer."""
    from dataclasses import replace

    model.cfg.devices = tuple(
        replace(d, gate_threshold=float(thresholds.get(d.name, d.gate_threshold))) for d in model.cfg.devices
    )
    model.gate_thresholds.copy_(torch.tensor([d.gate_threshold for d in model.cfg.devices]))


def _finite(v) -> float:
    v = float(v)
    return v if math.isfinite(v) else 0.0


def recalibrate(path: str, batch_size: int = 32) -> dict:
    """Re-run the gate calibration on an existing checkpoint (same data and split as its provenance) and
    rewrite it in place (atomically). `nilmbuild calibrate` calls it."""
    from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
    from nilmbuild.pipeline import load_data_for

    ck = load_checkpoint(path)
    prepared = load_data_for(ck)
    cal = calibrate_gates(ck.model, prepared, batch_size)
    apply_thresholds(ck.model, {d: c["threshold"] for d, c in cal.items()})
    log = dict(ck.train_log)
    log["gate_calibration"] = cal
    save_checkpoint(path, ck.model, scalers=ck.scalers, train_log=log, provenance=ck.provenance, extra=ck.extra)
    return cal
