"""Inference: seq2subseq over whole series, post-processing, metrics, and the helpers the CLI and the
pages call (`evaluate`, `disaggregate_series`, `predict_series`, `load_data_for`).

Checkpoint provenance read here (all optional; missing -> the simulator with PrepConfig defaults):

    provenance = {"source": "synthetic" | "csv:PATH" | ..., "house": int | None,
                  "days": int, "seed": int,              # simulator only
                  "columns": {...} | None,               # CSV/REFIT column map
                  "prep": {PrepConfig fields}}           # split / resample settings used in training
    (the same keys nested under provenance["data"] are accepted too; "prep_config" is an alias of "prep")

The scalers always come from the checkpoint (passed to prepare(..., scalers=) and used directly for the
model input); prepare() resamples, cleans, splits and computes the ground-truth ON states.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Callable

import numpy as np

from nilmbuild.errors import UserError

from .metrics import METRICS, all_metrics, baselines, device_metrics, format_table, json_safe, mean_baseline
from .postprocess import (PostConfig, clamp_negative, denormalise, duration_steps, postprocess,
                          suppress_long_off, suppress_short_activations)
from .seq2subseq import Geometry, Seq2SubseqResult, geometry, pad_series, seq2subseq

__all__ = [
    "METRICS", "Geometry", "PostConfig", "Seq2SubseqResult", "all_metrics", "clamp_negative", "data_settings",
    "denormalise", "device_metrics", "disaggregate_series", "duration_steps", "evaluate", "format_table",
    "baselines", "geometry", "json_safe", "load_data_for", "mean_baseline", "model_input", "pad_series", "postprocess",
    "predict_series", "seq2subseq", "suppress_long_off", "suppress_short_activations",
]


# ---- data for a checkpoint -------------------------------------------------------------------------

def data_settings(provenance: dict | None) -> dict:
    """Normalised data settings recorded in a checkpoint's provenance (see module docstring)."""
    p = dict(provenance or {})
    if isinstance(p.get("data"), dict):
        p = {**p["data"], **{k: v for k, v in p.items() if k != "data"}}
    src = p.get("source") or "synthetic"
    if isinstance(src, dict):
        src = src.get("spec") or src.get("source") or "synthetic"
    prep = p.get("prep") or p.get("prep_config") or {}
    return {"source": str(src), "house": p.get("house"), "days": int(p.get("days") or 60),
            "seed": int(p.get("seed") or 0), "columns": p.get("columns") or None, "prep": dict(prep)}


def _prep_config(prep: dict, **override):
    from nilmbuild.data.preprocess import PrepConfig

    names = {f.name for f in dataclasses.fields(PrepConfig)}
    kw = {k: v for k, v in {**prep, **override}.items() if k in names}
    for k in ("fractions", "devices"):
        if k in kw and kw[k] is not None:
            kw[k] = tuple(kw[k])
    return PrepConfig(**kw)


def load_data_for(loaded, source: str | None = None, house: int | None = None, *, days: int | None = None,
                  seed: int | None = None, date_from: str | None = None, date_to: str | None = None,
                  whole: bool = False):
    """Load and prepare the data a checkpoint is evaluated / run on -> Prepared.

    source/house default to the checkpoint's provenance; the split settings always come from it.
    whole=True puts the entire (date-filtered) series into the "train" split (for `disaggregate`).
    """
    hh = load_household_for(loaded, source, house, days=days, seed=seed, date_from=date_from, date_to=date_to)
    return prepare_for(loaded, hh, whole=whole)


def load_household_for(loaded, source: str | None = None, house: int | None = None, *, days: int | None = None,
                       seed: int | None = None, date_from: str | None = None, date_to: str | None = None):
    """The raw Household behind load_data_for (source/house/days/seed default to the checkpoint's provenance)."""
    from nilmbuild.data.loaders import load_source
    from nilmbuild.data.household import Household

    s = data_settings(getattr(loaded, "provenance", {}))
    same = source is None or source == s["source"]
    spec = s["source"] if source is None else source
    from nilmbuild.data.loaders import default_unit

    unit = default_unit.get() or ((getattr(loaded, "provenance", None) or {}).get("unit") if same else None)
    hh = load_source(spec, house=house if house is not None else (s["house"] if same else None),
                     columns=s["columns"] if same else None, unit=unit,
                     days=days if days is not None else s["days"], seed=seed if seed is not None else s["seed"])
    if date_from or date_to:
        try:
            lo = np.datetime64(date_from, "s") if date_from else None
            hi = np.datetime64(date_to, "s") if date_to else None
        except ValueError:
            raise UserError(f"bad date {date_from or date_to!r}; use YYYY-MM-DD or YYYY-MM-DDTHH:MM") from None
        keep = np.ones(len(hh), dtype=bool)
        if lo is not None:
            keep &= hh.timestamps >= lo
        if hi is not None:
            keep &= hh.timestamps < hi
        if not keep.any():
            raise UserError(f"no samples between {date_from or 'start'} and {date_to or 'end'} "
                            f"(data spans {hh.timestamps[0]} .. {hh.timestamps[-1]})")
        hh = Household(timestamps=hh.timestamps[keep], aggregate=hh.aggregate[keep],
                       appliances={k: v[keep] for k, v in hh.appliances.items()}, rate_s=hh.rate_s, meta=dict(hh.meta))
    return hh


def prepare_for(loaded, hh, *, whole: bool = False):
    """Prepare `hh` with the checkpoint's split settings, window and scalers (never refitted)."""
    from nilmbuild.data.preprocess import prepare

    s = data_settings(getattr(loaded, "provenance", {}))
    cfg = getattr(loaded, "cfg", None)
    over = {"window": cfg.window} if cfg is not None else {}
    if whole:
        over.update(fractions=(1.0, 0.0, 0.0), val_from=None, test_from=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return prepare(hh, _prep_config(s["prep"], **over), scalers=getattr(loaded, "scalers", None) or None)


# ---- running the model on a continuous series ------------------------------------------------------

def model_input(loaded, timestamps: np.ndarray, aggregate_w: np.ndarray) -> np.ndarray:
    """(T,) timestamps + aggregate watts -> (7, T) float32 model input, scaled with the checkpoint's
    aggregate scaler, time features as nilmbuild.data.preprocess.exogenous."""
    from nilmbuild.data.preprocess import exogenous, scaler_from_dict

    sc = (loaded.scalers or {}).get("aggregate")
    if not sc:
        raise UserError(f"checkpoint {getattr(loaded, 'path', '')} has no scalers: write it with `nilmbuild train`")
    agg = scaler_from_dict(sc).transform(np.asarray(aggregate_w, dtype=np.float64)).astype(np.float32)
    return np.concatenate([agg[None], exogenous(np.asarray(timestamps))], axis=0).astype(np.float32)


def _post_config(loaded, step_s: int, prepared=None, off_window: int | None = None) -> PostConfig:
    kw = {}
    if prepared is not None:
        kw["min_on_steps"] = {d: int(v) for d, v in prepared.min_on_steps.items()}
        kw["min_off_steps"] = {d: int(v) for d, v in prepared.min_off_steps.items()}
    if off_window is not None:
        kw["off_window"] = int(off_window)
    return PostConfig.for_model(loaded, step_s=step_s, **kw)


def predict_series(loaded, timestamps, aggregate_w, *, step_s: int = 60, prepared=None, batch_size: int = 32,
                   post: PostConfig | None = None, progress: Callable[[int, int], None] | None = None):
    """Seq2subseq + post-processing over one continuous series -> (Seq2SubseqResult, post dict (D, T) arrays)."""
    x = model_input(loaded, timestamps, aggregate_w)
    res = seq2subseq(loaded.model, x, batch_size=batch_size, timestamps=timestamps, step_s=step_s, progress=progress)
    pc = post or _post_config(loaded, step_s, prepared)
    return res, postprocess(res.power, res.gate, loaded.devices, loaded.scalers, pc, aggregate_w=aggregate_w)


def _truth(prepared, split, devices):
    """(D, T) ground truth watts and states in model device order (zeros for devices the data lacks)."""
    T = split.timestamps.shape[0]
    y, st = np.zeros((len(devices), T), np.float32), np.zeros((len(devices), T), np.uint8)
    for i, d in enumerate(devices):
        if d in prepared.devices:
            j = list(prepared.devices).index(d)
            y[i], st[i] = split.appliances_w[j], split.states[j]
    return y, st


def _thresholds(prepared, devices) -> dict:
    from nilmbuild.data.preprocess import THRESHOLDS_W

    thr = getattr(prepared, "thresholds_w", None) or {}
    return {d: float(thr.get(d, THRESHOLDS_W.get(d, 10.0))) for d in devices}


def train_means_w(prepared, devices) -> dict:
    """Each device's mean power (W) over the valid bins of the train split (the baseline)."""
    tr = prepared.splits["train"]
    y, _ = _truth(prepared, tr, devices)
    v = tr.valid.astype(bool)
    return {d: float(y[i][v].mean()) if v.any() else 0.0 for i, d in enumerate(devices)}


def evaluate(loaded, prepared, split: str = "test", *, batch_size: int = 32,
             progress: Callable[[int, int], None] | None = None) -> dict:
    """Run the checkpoint over the whole continuous `split` series and score the post-processed output.

    -> {"devices": {name: {metric: float}}, "baselines": {"mean": {name: {...}}, "zero": {...}},
        "baseline": the "mean" one (alias), "no_ground_truth": [devices without a channel in the data, not scored],
        "split": str, "samples": int, "span": [first, last timestamp]} (floats may be NaN; use json_safe for JSON).
    """
    if split not in prepared.splits:
        raise UserError(f"unknown split {split!r}; use train, val or test")
    sp = prepared.splits[split]
    if sp.timestamps.shape[0] == 0 or not sp.valid.any():
        raise UserError(f"the {split} split is empty; use more data or other split settings")
    devs = loaded.devices
    _, post = predict_series(loaded, sp.timestamps, sp.aggregate_w, step_s=prepared.resample_s, prepared=prepared,
                             batch_size=batch_size, progress=progress)
    missing = set(prepared.stats.get("missing", []))
    scored = [i for i, d in enumerate(devs) if d not in missing]
    names = [devs[i] for i in scored]
    y, st = _truth(prepared, sp, devs)
    y, st, yhat = y[scored], st[scored], post["final_w"][scored]
    thr = _thresholds(prepared, names)
    refs = baselines(names, y, st, thr, train_means_w(prepared, names), sp.valid)
    return {"devices": all_metrics(names, y, yhat, st, thr, sp.valid), "baselines": refs, "baseline": refs["mean"],
            "no_ground_truth": sorted(missing & set(devs)), "split": split, "samples": int(sp.valid.sum()),
            "aggregate_cap": float(post["cap_binds"][sp.valid].mean()) if sp.valid.any() else 0.0,
            "span": [str(sp.timestamps[0]), str(sp.timestamps[-1])]}


# ---- one span for the Disaggregation page ----------------------------------------------------------

def disaggregate_series(loaded, prepared_or_series, start=0, length: int | None = None, *, split: str = "test",
                        batch_size: int = 32, step_s: int | None = None) -> dict:
    """Everything the Disaggregation page shows for one span (a full day by default).

    prepared_or_series: a Prepared (its `split` series is used), a Split, or a dict with
      "timestamps" (T,) datetime64 and "aggregate_w" (T,), optionally "appliances_w" (M, T),
      "states" (M, T), "valid" (T,), "devices" (M names, default the model's), "step_s".
    start: sample index into that series, or a date/time (str or datetime64: the first sample at or after it).
    length: samples (default one day: 86400 // step_s), cropped to the end of the series.
    The model sees only the span (seq2subseq pads its ends), so the seams are those of the span.

    Returns (L = span length, D = model devices; every array's last axis is time):
      "devices": [D names], "step_s": int, "start": int index, "length": L
      "timestamps": (L,) datetime64[s]
      "aggregate_w": (L,) float32, "valid": (L,) bool
      "input": (7, L) float32 model input (scaled aggregate + 6 time features)
      "truth_w": (D, L) float32 ground truth W, "states": (D, L) uint8 duration-filtered ON states
                 (both None when the series has no appliance data)
      "power_scaled": (D, L) stitched model output (scaled), "power_raw_scaled": (D, L) pre-gate head output
      "gate": (D, L) gate probability
      "post": {"raw_w", "short_w", "long_off_w", "final_w": (D, L) float32 W after each step;
               "on_model", "short_removed", "off_suppressed": (D, L) bool;
               "gate_avg_pool", "gate_max_pool": (D, L) float32}
      "prediction_w": (D, L) == post["final_w"]
      "window_starts": (n,) int, window starts in span indices (first = -margin, in the padding)
      "centres": (n, 2) int [start, end) of each window's stitched centre; "seams": (n-1,) int
      "geometry": {"window", "centre", "margin", "n_windows", "pad_left", "pad_right"}
      "thresholds_w": {device: W}, "gate_thresholds": {device: p}, "min_on_steps", "min_off_steps": {device: int},
      "off_window": int
      "metrics": {device: {mae, rmse, nde, sae, teca, mr, precision, recall, f1, f1_10w}} of the
                 post-processed prediction over the span's valid samples (None without truth)
      "raw_metrics": same for the denormalised raw output (raw_w clamped at 0) (None without truth)
    """
    prepared = None
    if hasattr(prepared_or_series, "splits"):
        prepared = prepared_or_series
        sp = prepared.splits[split]
        series = {"timestamps": sp.timestamps, "aggregate_w": sp.aggregate_w, "appliances_w": sp.appliances_w,
                  "states": sp.states, "valid": sp.valid, "devices": list(prepared.devices),
                  "step_s": prepared.resample_s}
    elif hasattr(prepared_or_series, "aggregate_w"):
        sp = prepared_or_series
        series = {k: getattr(sp, k) for k in ("timestamps", "aggregate_w", "appliances_w", "states", "valid")}
    else:
        series = dict(prepared_or_series)
    ts = np.asarray(series["timestamps"]).astype("datetime64[s]")
    T = ts.shape[0]
    if T == 0:
        raise UserError("the series is empty")
    step = int(step_s or series.get("step_s") or (int((ts[1] - ts[0]).astype(np.int64)) if T > 1 else 60))
    if isinstance(start, (str, np.datetime64)):
        try:
            start = int(np.searchsorted(ts, np.datetime64(start, "s")))
        except ValueError:
            raise UserError(f"bad start {start!r}; use an index or YYYY-MM-DD[THH:MM]") from None
    start = int(start)
    if not 0 <= start < T:
        raise UserError(f"start {start} is outside the series (0 .. {T - 1}, {ts[0]} .. {ts[-1]})")
    length = int(length or 86400 // step)
    sl = slice(start, min(T, start + max(1, length)))
    devs = loaded.devices
    agg = np.asarray(series["aggregate_w"], dtype=np.float32)[sl]
    valid = np.asarray(series.get("valid") if series.get("valid") is not None else np.ones(T, bool), bool)[sl]
    pc = _post_config(loaded, step, prepared)
    res, post = predict_series(loaded, ts[sl], agg, step_s=step, batch_size=batch_size, post=pc)

    truth = states = metrics = raw_metrics = None
    thr = _thresholds(prepared, devs)
    no_truth = list(devs)
    if series.get("appliances_w") is not None:
        names = list(series.get("devices") or devs)
        missing = set(getattr(prepared, "stats", {}).get("missing", [])) | set(series.get("missing") or [])
        no_truth = [d for d in devs if d not in names or d in missing]
        L = agg.shape[0]
        truth, states = np.zeros((len(devs), L), np.float32), np.zeros((len(devs), L), np.uint8)
        apps = np.asarray(series["appliances_w"])
        sts = np.asarray(series["states"]) if series.get("states") is not None else None
        for i, d in enumerate(devs):
            if d in names:
                j = names.index(d)
                truth[i] = apps[j][sl]
                states[i] = sts[j][sl] if sts is not None else (apps[j][sl] > thr[d])
        k = [i for i, d in enumerate(devs) if d not in no_truth]        # devices without ground truth are not scored
        scored = [devs[i] for i in k]
        metrics = all_metrics(scored, truth[k], post["final_w"][k], states[k], thr, valid)
        raw_metrics = all_metrics(scored, truth[k], clamp_negative(post["raw_w"])[k], states[k], thr, valid)
    g = res.geometry
    return {
        "devices": list(devs), "step_s": step, "start": start, "length": int(agg.shape[0]),
        "timestamps": ts[sl], "aggregate_w": agg, "valid": valid,
        "input": model_input(loaded, ts[sl], agg),
        "truth_w": truth, "states": states, "no_truth": no_truth,
        "power_scaled": res.power, "power_raw_scaled": res.power_raw, "gate": res.gate,
        "post": post, "prediction_w": post["final_w"],
        "window_starts": res.window_starts, "centres": res.centres, "seams": res.seams,
        "geometry": dataclasses.asdict(g),
        "thresholds_w": thr, "gate_thresholds": dict(pc.gate_thresholds),
        "min_on_steps": dict(pc.min_on_steps), "min_off_steps": dict(pc.min_off_steps), "off_window": pc.off_window,
        "metrics": metrics, "raw_metrics": raw_metrics,
    }
