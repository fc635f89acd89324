"""A checkpoint over a continuous series: seq2subseq, post-processing and scores (what `nilmbuild evaluate`,
`nilmbuild disaggregate` and the Disaggregation page run). The data comes prepared by nilmbuild.pipeline."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from nilmbuild.errors import UserError
from nilmbuild.pipeline import model_input, thresholds_for, train_means_w, truth_w

from .metrics import all_metrics, baselines
from .postprocess import PostConfig, clamp_negative, postprocess
from .seq2subseq import seq2subseq

# ---- the continuous test (or any) split ------------------------------------------------------------


def _post_config(loaded, step_s: int, prepared=None, off_window: int | None = None) -> PostConfig:
    kw = {}
    if prepared is not None:
        kw["min_on_steps"] = {d: int(v) for d, v in prepared.min_on_steps.items()}
        kw["min_off_steps"] = {d: int(v) for d, v in prepared.min_off_steps.items()}
    if off_window is not None:
        kw["off_window"] = int(off_window)
    return PostConfig.for_model(loaded, step_s=step_s, **kw)


def predict_series(
    loaded,
    timestamps,
    aggregate_w,
    *,
    step_s: int = 60,
    prepared=None,
    batch_size: int = 32,
    post: PostConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
):
    """Seq2subseq + post-processing over one continuous series -> (Seq2SubseqResult, post dict (D, T) arrays)."""
    x = model_input(loaded, timestamps, aggregate_w)
    res = seq2subseq(loaded.model, x, batch_size=batch_size, timestamps=timestamps, step_s=step_s, progress=progress)
    pc = post or _post_config(loaded, step_s, prepared)
    return res, postprocess(res.power, res.gate, loaded.devices, loaded.scalers, pc, aggregate_w=aggregate_w)


def predict_split(
    loaded, prepared, split: str, *, batch_size: int = 32, progress: Callable[[int, int], None] | None = None
) -> dict:
    """predict_series over the whole continuous `split` of a Prepared, at its resolution -> the post dict."""
    sp = prepared.splits[split]
    _, post = predict_series(
        loaded,
        sp.timestamps,
        sp.aggregate_w,
        step_s=prepared.resample_s,
        prepared=prepared,
        batch_size=batch_size,
        progress=progress,
    )
    return post


def evaluate(
    loaded, prepared, split: str = "test", *, batch_size: int = 32, progress: Callable[[int, int], None] | None = None
) -> dict:
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
    post = predict_split(loaded, prepared, split, batch_size=batch_size, progress=progress)
    missing = set(prepared.stats.get("missing", []))
    scored = [i for i, d in enumerate(devs) if d not in missing]
    names = [devs[i] for i in scored]
    y, st = truth_w(prepared, sp, devs)
    y, st, yhat = y[scored], st[scored], post["final_w"][scored]
    thr = thresholds_for(prepared, names)
    refs = baselines(names, y, st, thr, train_means_w(prepared, names), sp.valid)
    return {
        "devices": all_metrics(names, y, yhat, st, thr, sp.valid),
        "baselines": refs,
        "baseline": refs["mean"],
        "no_ground_truth": sorted(missing & set(devs)),
        "split": split,
        "samples": int(sp.valid.sum()),
        "aggregate_cap": float(post["cap_binds"][sp.valid].mean()) if sp.valid.any() else 0.0,
        "span": _split_span(sp, several="buildings" in prepared.stats),
    }


def _split_span(sp, several: bool) -> list[str]:
    """[first, last] timestamp of a split; of several buildings' (joined, not in time order): the earliest and
    latest valid one."""
    ts = sp.timestamps[sp.valid.astype(bool)] if several else sp.timestamps
    return [str(ts.min()), str(ts.max())] if several else [str(ts[0]), str(ts[-1])]


# ---- one span for the Disaggregation page ----------------------------------------------------------


def _as_series(prepared_or_series, split: str) -> tuple[dict, object]:
    """A Prepared (its `split`), a Split or a dict -> (series dict, the Prepared or None)."""
    if hasattr(prepared_or_series, "splits"):
        prepared = prepared_or_series
        sp = prepared.splits[split]
        return {
            "timestamps": sp.timestamps,
            "aggregate_w": sp.aggregate_w,
            "appliances_w": sp.appliances_w,
            "states": sp.states,
            "valid": sp.valid,
            "devices": list(prepared.devices),
            "step_s": prepared.resample_s,
        }, prepared
    if hasattr(prepared_or_series, "aggregate_w"):
        sp = prepared_or_series
        return {k: getattr(sp, k) for k in ("timestamps", "aggregate_w", "appliances_w", "states", "valid")}, None
    return dict(prepared_or_series), None


def _span_start(ts: np.ndarray, start) -> int:
    """A sample index, or a date/time -> the index of the first sample at or after it."""
    if isinstance(start, (str, np.datetime64)):
        try:
            start = int(np.searchsorted(ts, np.datetime64(start, "s")))
        except ValueError:
            raise UserError(f"bad start {start!r}; use an index or YYYY-MM-DD[THH:MM]") from None
    start = int(start)
    if not 0 <= start < ts.shape[0]:
        raise UserError(f"start {start} is outside the series (0 .. {ts.shape[0] - 1}, {ts[0]} .. {ts[-1]})")
    return start


def _span_truth(series: dict, sl: slice, devs, prepared, thr: dict):
    """Ground truth of the span in model device order -> (truth_w, states, devices without ground truth)."""
    names = list(series.get("devices") or devs)
    missing = set(getattr(prepared, "stats", {}).get("missing", [])) | set(series.get("missing") or [])
    no_truth = [d for d in devs if d not in names or d in missing]
    L = sl.stop - sl.start
    truth, states = np.zeros((len(devs), L), np.float32), np.zeros((len(devs), L), np.uint8)
    apps = np.asarray(series["appliances_w"])
    sts = np.asarray(series["states"]) if series.get("states") is not None else None
    for i, d in enumerate(devs):
        if d in names:
            j = names.index(d)
            truth[i] = apps[j][sl]
            states[i] = sts[j][sl] if sts is not None else (apps[j][sl] > thr[d])
    return truth, states, no_truth


def _span(series: dict, start, length: int | None, step_s: int | None) -> tuple[np.ndarray, int, int, slice]:
    """-> (all timestamps as datetime64[s], step in s, start index, slice of the span); a day by default."""
    ts = np.asarray(series["timestamps"]).astype("datetime64[s]")
    T = ts.shape[0]
    if T == 0:
        raise UserError("the series is empty")
    step = int(step_s or series.get("step_s") or (int((ts[1] - ts[0]).astype(np.int64)) if T > 1 else 60))
    start = _span_start(ts, start)
    length = int(length or 86400 // step)
    return ts, step, start, slice(start, min(T, start + max(1, length)))


def _span_scores(series: dict, sl: slice, devs, prepared, thr: dict, post: dict, valid: np.ndarray):
    """-> (truth_w, states, devices without ground truth, metrics, raw_metrics); all but no_truth None
    when the series has no appliance data. Devices without ground truth are not scored."""
    if series.get("appliances_w") is None:
        return None, None, list(devs), None, None
    truth, states, no_truth = _span_truth(series, sl, devs, prepared, thr)
    k = [i for i, d in enumerate(devs) if d not in no_truth]
    scored = [devs[i] for i in k]
    metrics = all_metrics(scored, truth[k], post["final_w"][k], states[k], thr, valid)
    raw_metrics = all_metrics(scored, truth[k], clamp_negative(post["raw_w"])[k], states[k], thr, valid)
    return truth, states, no_truth, metrics, raw_metrics


def disaggregate_series(
    loaded,
    prepared_or_series,
    start=0,
    length: int | None = None,
    *,
    split: str = "test",
    batch_size: int = 32,
    step_s: int | None = None,
) -> dict:
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
    series, prepared = _as_series(prepared_or_series, split)
    ts, step, start, sl = _span(series, start, length, step_s)
    devs = loaded.devices
    agg = np.asarray(series["aggregate_w"], dtype=np.float32)[sl]
    valid = series.get("valid")
    valid = np.asarray(valid if valid is not None else np.ones(ts.shape[0], bool), bool)[sl]
    pc = _post_config(loaded, step, prepared)
    res, post = predict_series(loaded, ts[sl], agg, step_s=step, batch_size=batch_size, post=pc)
    thr = thresholds_for(prepared, devs)
    truth, states, no_truth, metrics, raw_metrics = _span_scores(series, sl, devs, prepared, thr, post, valid)
    g = res.geometry
    return {
        "devices": list(devs),
        "step_s": step,
        "start": start,
        "length": int(agg.shape[0]),
        "timestamps": ts[sl],
        "aggregate_w": agg,
        "valid": valid,
        "input": model_input(loaded, ts[sl], agg),
        "truth_w": truth,
        "states": states,
        "no_truth": no_truth,
        "power_scaled": res.power,
        "power_raw_scaled": res.power_raw,
        "gate": res.gate,
        "post": post,
        "prediction_w": post["final_w"],
        "window_starts": res.window_starts,
        "centres": res.centres,
        "seams": res.seams,
        "geometry": dataclasses.asdict(g),
        "thresholds_w": thr,
        "gate_thresholds": dict(pc.gate_thresholds),
        "min_on_steps": dict(pc.min_on_steps),
        "min_off_steps": dict(pc.min_off_steps),
        "off_window": pc.off_window,
        "metrics": metrics,
        "raw_metrics": raw_metrics,
    }
