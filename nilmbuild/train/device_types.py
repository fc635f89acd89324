"""Device-type classification (architecture.md 10.2): training-data statistics -> type -> loss weights + head.

Statistics, per device, over the valid bins of the *train* split only:
    duty_cycle        fraction of bins ON (the duration-filtered states from prepare())
    peak_w            max power (W)
    mean_on_min       mean length of an ON run (minutes)
    cv_on             std / mean of the ON-run lengths (0 with fewer than 2 runs)

The spec's tree, with two documented refinements (docs/training.md, "device types"):
    duty < 0.03 and mean_on_min <= 30 and peak_w > 2000    -> sparse_high_power   (kettle)
    duty < 0.03 and mean_on_min <= 30                       -> sparse_medium_power (microwave)
    duty < 0.10 and mean_on_min > 30                        -> long_cycle          (washing machine, dishwasher)
    duty < 0.25 and cv_on > 0.5, or 0.05 <= duty <= 0.8 and peak_w < 500
                                                            -> cycling_low_power   (fridge)
    duty > 0.8                                              -> always_on
    otherwise                                               -> regular
Refinement 1: the sparse classes also need short activations (<= 30 min): a washing machine has a
duty cycle below 3 % and peaks above 2000 W, and would otherwise be "sparse_high_power".
Refinement 2: a fridge's compressor cycles are regular (cv ~0.2) and run a third of the time, so the
spec's "duty < 0.25 and cv > 0.5" alone misses it; low peak power (< 500 W) with a mid duty cycle
catches it.
Heads: both sparse classes get the "sparse" head (SparseDeviceCNN): spec 9.2 names kettle *and*
microwave for the CNN bypass, and the simulator's microwave peaks below 2000 W (sparse_medium_power).
"""

from __future__ import annotations

import math

import numpy as np

from nilmbuild.model.config import DeviceSpec

from .losses import LossWeights

TYPES = ("sparse_high_power", "sparse_medium_power", "long_cycle", "cycling_low_power", "always_on", "regular")
SPARSE_TYPES = ("sparse_high_power", "sparse_medium_power")

# fmt: off
TYPE_WEIGHTS: dict[str, LossWeights] = {  # one row per type, as in the spec table
    "sparse_high_power": LossWeights(alpha_on=2.0, alpha_off=1.0, w_peak=0.2, w_grad=0.2, w_energy=0.5, lambda_zero=0.2, lambda_off=0.5, w_gate=1.0, long_off_steps=60),
    "sparse_medium_power": LossWeights(alpha_on=2.0, alpha_off=1.0, w_peak=0.2, w_grad=0.2, w_energy=0.5, lambda_zero=0.2, lambda_off=0.5, w_gate=1.0, long_off_steps=60),
    "long_cycle": LossWeights(alpha_on=1.5, alpha_off=1.0, w_peak=0.1, w_grad=0.2, w_energy=1.0, lambda_zero=0.1, lambda_off=0.3, w_gate=0.5, long_off_steps=240),
    "cycling_low_power": LossWeights(alpha_on=1.0, alpha_off=1.0, w_peak=0.1, w_grad=0.3, w_energy=0.5, lambda_zero=0.1, lambda_off=0.1, w_gate=0.5, long_off_steps=120),
    "always_on": LossWeights(alpha_on=1.0, alpha_off=1.0, w_peak=0.1, w_grad=0.2, w_energy=0.5, lambda_zero=0.0, lambda_off=0.0, w_gate=0.2, long_off_steps=480),
    "regular": LossWeights(),
}
# fmt: on
MAX_POS_WEIGHT = 10.0


def run_lengths(on: np.ndarray) -> np.ndarray:
    """Lengths of the runs of True in a 1-D bool array."""
    d = np.diff(np.concatenate([[0], np.asarray(on, dtype=np.int8), [0]]))
    return np.flatnonzero(d == -1) - np.flatnonzero(d == 1)


def device_stats(power_w: np.ndarray, states: np.ndarray, step_s: int, valid: np.ndarray | None = None) -> dict:
    """(T,) watts and (T,) ON states of one device -> {duty_cycle, peak_w, mean_on_min, cv_on, n_activations}."""
    p = np.asarray(power_w, dtype=np.float64)
    s = np.asarray(states) > 0.5
    if valid is not None:
        v = np.asarray(valid, dtype=bool)
        p, s = p[v], s[v]
    runs = run_lengths(s) * step_s / 60.0
    return {
        "duty_cycle": float(s.mean()) if s.size else 0.0,
        "peak_w": float(p.max()) if p.size else 0.0,
        "mean_on_min": float(runs.mean()) if runs.size else 0.0,
        "cv_on": float(runs.std() / runs.mean()) if runs.size > 1 and runs.mean() > 0 else 0.0,
        "n_activations": int(runs.size),
    }


def classify(stats: dict) -> str:
    """The tree in the module docstring."""
    duty, peak, dur, cv = stats["duty_cycle"], stats["peak_w"], stats["mean_on_min"], stats["cv_on"]
    if duty < 0.03 and dur <= 30:
        return "sparse_high_power" if peak > 2000 else "sparse_medium_power"
    if duty < 0.10 and dur > 30:
        return "long_cycle"
    if (duty < 0.25 and cv > 0.5) or (0.05 <= duty <= 0.8 and peak < 500):
        return "cycling_low_power"
    if duty > 0.8:
        return "always_on"
    return "regular"


def head_for(device_type: str) -> str:
    return "sparse" if device_type in SPARSE_TYPES else "regular"


def pos_weight_for(duty: float) -> float:
    """BCE weight of ON samples: sqrt(OFF/ON ratio), clipped to [1, 10]."""
    if duty <= 0:
        return 1.0
    return float(min(MAX_POS_WEIGHT, max(1.0, math.sqrt((1.0 - duty) / duty))))


def weights_for(device_type: str, stats: dict) -> LossWeights:
    w = TYPE_WEIGHTS[device_type]
    return LossWeights(**{**w.to_dict(), "pos_weight": pos_weight_for(stats["duty_cycle"])})


def classify_prepared(prepared) -> dict:
    """Prepared -> {device: {"stats": ..., "type": ..., "head": ..., "weights": {...}}} from its train split."""
    tr = prepared.splits["train"]
    out = {}
    for i, d in enumerate(prepared.devices):
        st = device_stats(tr.appliances_w[i], tr.states[i], prepared.resample_s, tr.valid)
        t = classify(st)
        out[d] = {"stats": st, "type": t, "head": head_for(t), "weights": weights_for(t, st).to_dict()}
    return out


def gate_threshold_for(pos_weight: float) -> float:
    """Hard-gate threshold matching a 50 % ON posterior under a BCE pos_weight w: p = w / (w + 1)
    (the starting point; the trainer recalibrates it on the validation split at the end)."""
    return round(float(pos_weight) / (float(pos_weight) + 1.0), 3)


def device_specs(classification: dict) -> tuple[DeviceSpec, ...]:
    """The model's DeviceSpec list, in the classification's (= the data's) device order."""
    return tuple(
        DeviceSpec(name, info["head"], gate_threshold_for(info.get("weights", {}).get("pos_weight", 1.0)))
        for name, info in classification.items()
    )
