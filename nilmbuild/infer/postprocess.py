"""Post-processing (architecture.md 11.2): small pure numpy functions, composable, each returning
its intermediate arrays so the pages can show before/after.

Pipeline used by `postprocess` (per device, arrays (T,)):

    raw scaled --denormalise--> raw W --short-activation suppression--> --long-OFF gate suppression-->
    --clamp negatives--> --cap to the aggregate (all devices together)--> final W

Cap to the aggregate (not in the spec; docs/spec-notes.md): appliances cannot draw more than the meter
measured. Where the devices' sum exceeds the aggregate at a step, every device is scaled by the same
factor aggregate / sum, so the sum equals the aggregate and each device keeps its share. The share of
steps where the cap binds is reported by `nilmbuild evaluate` ("aggregate_cap").

The spec lists denormalisation last; we denormalise first so that "set the prediction to 0" means
0 W for every scaler (with the default max scaler, 0 scaled == 0 W, so the order makes no difference;
with a standard scaler, 0 scaled would be the mean power). The two suppression steps only zero
samples, so the result is the spec's pipeline.

ON segments of a prediction are where the model's own ON decision holds: gate probability > the
device's gate threshold (the same test as the hard gate). A segment is a run of ON samples after
bridging OFF gaps shorter than `min_off_steps` (Kelly's rule, as for the ground-truth states);
segments shorter than `min_on_steps` are removed (set to 0 W). Both step counts come from the
nilm-facts minimum ON/OFF durations at the resample rate: max(1, ceil(seconds / resample_s)).

Long-OFF gate suppression: with centred pools of K samples (stride 1, truncated at the ends),
where avg_pool(gate) < thr AND max_pool(gate) < thr the prediction is set to 0. Note that
avg <= max, so with one shared threshold the test is max_pool(gate) < thr; separate `thr_avg` /
`thr_max` may be given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from nilmbuild.data.preprocess import MIN_OFF_S, MIN_ON_S, on_off, scaler_from_dict

#: default long-OFF pooling window, in samples (15 min at the 1-min resample rate)
DEFAULT_OFF_WINDOW = 15


def duration_steps(seconds: float, step_s: int) -> int:
    """A duration in seconds -> whole samples at `step_s`, at least 1 (the rule prepare() uses)."""
    return max(1, int(math.ceil(float(seconds) / float(step_s))))


def min_steps(devices, step_s: int, table: dict | None = None, default: dict | None = None) -> dict[str, int]:
    """Per-device minimum durations in samples from a seconds table (default MIN_ON_S)."""
    t = {**(default if default is not None else MIN_ON_S), **(table or {})}
    return {d: duration_steps(t.get(d, 0), step_s) for d in devices}


def denormalise(power_scaled: np.ndarray, scaler: dict) -> np.ndarray:
    """Scaled units -> watts with the data side's scaler (a JSON dict as stored in checkpoints)."""
    return np.asarray(scaler_from_dict(scaler).inverse(np.asarray(power_scaled, dtype=np.float64)), dtype=np.float32)


def suppress_short_activations(
    power: np.ndarray, on: np.ndarray, min_on_steps: int, min_off_steps: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Remove ON segments shorter than `min_on_steps`.

    power (T,), on (T,) bool -> (power_out (T,) with removed samples set to 0,
    kept (T,) bool: ON after bridging gaps < min_off_steps and dropping short segments,
    removed (T,) bool: samples of `on` that were zeroed).
    """
    on = np.asarray(on, dtype=bool)
    kept = on_off(on.astype(np.float32), 0.5, max(1, int(min_on_steps)), max(1, int(min_off_steps))).astype(bool)
    removed = on & ~kept
    out = np.where(removed, 0.0, np.asarray(power)).astype(np.float32)
    return out, kept, removed


def _pool(gate: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Centred average and max pools of width k (stride 1; windows truncated at the ends)."""
    g = np.asarray(gate, dtype=np.float64)
    k = max(1, int(k))
    left, right = (k - 1) // 2, k // 2
    gp = np.pad(g, (left, right), constant_values=np.nan)
    v = np.lib.stride_tricks.sliding_window_view(gp, k)
    return np.nanmean(v, axis=-1), np.nanmax(v, axis=-1)


def suppress_long_off(
    power: np.ndarray, gate: np.ndarray, thr: float, window: int = DEFAULT_OFF_WINDOW, thr_max: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Zero the prediction where avg_pool(gate) < thr and max_pool(gate) < thr_max (default thr).

    -> (power_out (T,), suppressed (T,) bool, avg_pool (T,), max_pool (T,))."""
    avg, mx = _pool(gate, window)
    suppressed = (avg < thr) & (mx < (thr if thr_max is None else thr_max))
    return np.where(suppressed, 0.0, np.asarray(power)).astype(np.float32), suppressed, avg, mx


def clamp_negative(power: np.ndarray) -> np.ndarray:
    return np.maximum(np.asarray(power, dtype=np.float32), 0.0)


def cap_to_aggregate(power: np.ndarray, aggregate_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(D, T) non-negative watts, (T,) aggregate watts -> (capped (D, T), binds (T,) bool).

    Where sum_d power[d, t] > aggregate[t] (>= 0), every device is scaled by aggregate[t] / sum: the sum
    then equals the aggregate and the devices keep their proportions. Elsewhere nothing changes."""
    p = np.asarray(power, dtype=np.float64)
    agg = np.maximum(np.nan_to_num(np.asarray(aggregate_w, dtype=np.float64)), 0.0)
    total = p.sum(axis=0)  # (T,)
    binds = total > agg
    scale = np.where(binds, agg / np.where(binds, total, 1.0), 1.0)
    return (p * scale).astype(np.float32), binds


@dataclass
class PostConfig:
    """Per-device settings. Missing entries fall back to nilm-facts durations / gate 0.5."""

    step_s: int = 60
    min_on_steps: dict[str, int] = field(default_factory=dict)
    min_off_steps: dict[str, int] = field(default_factory=dict)
    gate_thresholds: dict[str, float] = field(default_factory=dict)
    off_window: int = DEFAULT_OFF_WINDOW
    short: bool = True  # step 1 on/off
    long_off: bool = True  # step 2 on/off
    cap: bool = True  # step 4 on/off (needs the aggregate)

    @classmethod
    def for_model(cls, loaded_or_cfg, step_s: int = 60, **kw) -> PostConfig:
        cfg = getattr(loaded_or_cfg, "cfg", loaded_or_cfg)
        if hasattr(cfg, "arch"):  # an upstream model: its output is already gated (CondiNILM) or has no gate
            kw.update(short=False, long_off=False)
            kw.setdefault("gate_thresholds", {d: 0.5 for d in cfg.devices})
            return cls(step_s=step_s, **kw)
        devs = [d.name for d in cfg.devices]
        kw.setdefault("gate_thresholds", {d.name: float(d.gate_threshold) for d in cfg.devices})
        kw.setdefault("min_on_steps", min_steps(devs, step_s, default=MIN_ON_S))
        kw.setdefault("min_off_steps", min_steps(devs, step_s, default=MIN_OFF_S))
        return cls(step_s=step_s, **kw)


def postprocess(
    power_scaled: np.ndarray,
    gate: np.ndarray,
    devices,
    scalers: dict,
    pc: PostConfig | None = None,
    aggregate_w: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Whole pipeline on (D, T) arrays. Returns (every array (D, T), device order = `devices`):

    raw_w           denormalised model output (W)
    short_w         after short-activation suppression (W)
    long_off_w      after long-OFF gate suppression (W)
    clamped_w       after clamping negatives (W)
    final_w         after capping the devices' sum to `aggregate_w` (T,) (W): the prediction
                    (= clamped_w when no aggregate is given or pc.cap is off)
    cap_binds       (T,) bool, steps where the cap scaled the devices down
    on_model        bool, gate > gate threshold (the model's ON decision)
    short_removed   bool, samples zeroed by step 1
    off_suppressed  bool, samples zeroed by step 2
    gate_avg_pool, gate_max_pool   float, the pools step 2 tested
    """
    pc = pc or PostConfig()
    gate = np.asarray(gate, dtype=np.float32)
    app = scalers.get("appliances", scalers) if isinstance(scalers, dict) else {}
    res = {
        k: []
        for k in (
            "raw_w",
            "short_w",
            "long_off_w",
            "final_w",
            "on_model",
            "short_removed",
            "off_suppressed",
            "gate_avg_pool",
            "gate_max_pool",
        )
    }
    for i, d in enumerate(devices):
        if d not in app:
            raise KeyError(f"no scaler for device {d!r}")
        raw = denormalise(power_scaled[i], app[d])
        thr = float(pc.gate_thresholds.get(d, 0.5))
        on = gate[i] > thr
        if pc.short:
            short, _, removed = suppress_short_activations(
                raw,
                on,
                pc.min_on_steps.get(d, duration_steps(MIN_ON_S.get(d, 0), pc.step_s)),
                pc.min_off_steps.get(d, duration_steps(MIN_OFF_S.get(d, 0), pc.step_s)),
            )
        else:
            short, removed = raw.copy(), np.zeros_like(on)
        if pc.long_off:
            lo, supp, avg, mx = suppress_long_off(short, gate[i], thr, pc.off_window)
        else:
            lo, supp = short.copy(), np.zeros_like(on)
            avg, mx = _pool(gate[i], pc.off_window)
        for k, v in (
            ("raw_w", raw),
            ("short_w", short),
            ("long_off_w", lo),
            ("final_w", clamp_negative(lo)),
            ("on_model", on),
            ("short_removed", removed),
            ("off_suppressed", supp),
            ("gate_avg_pool", avg.astype(np.float32)),
            ("gate_max_pool", mx.astype(np.float32)),
        ):
            res[k].append(v)
    T = gate.shape[-1]
    out = {k: (np.stack(v) if v else np.zeros((0, T))) for k, v in res.items()}
    out["clamped_w"] = out["final_w"]
    out["cap_binds"] = np.zeros(T, dtype=bool)
    if pc.cap and aggregate_w is not None and len(devices):
        out["final_w"], out["cap_binds"] = cap_to_aggregate(out["clamped_w"], aggregate_w)
    return out
