"""Data page (architecture.md 2-3): the preprocessing of section 2 on the actual data.

One day (24 h from the first example window's start, inside the test split) of the household's raw
native-rate signal next to the 1-minute resampled series of the prepared test split, the cut-off, the scalers,
the ON/OFF states with their thresholds, the windows (length, stride) on that day, the train/val/test blocks
with their leakage gaps (prepared.stats split_bins), and the six time features of each example window (ctx.x).
Arrays travel as float32 little-endian bytes in a msgpack blob (``data``).
"""

from __future__ import annotations

import msgpack
import numpy as np

from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from ._common import clean, f32, view_page

SLUG = "data"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Data"
SECTION = "2-3"
SUMMARY = "Preprocessing on the real data: raw vs 1-minute resampling, cut-off, scaling, ON/OFF states, windows, splits, time features."

TIME_FEATURES = ["month sin", "month cos", "day-of-year sin", "day-of-year cos", "hour sin", "hour cos"]


def _sec(ts) -> np.ndarray:
    return np.asarray(ts).astype("datetime64[s]").astype(np.int64)


def data_blob(ctx) -> bytes:
    prep, hh = ctx.prepared, ctx.household
    test = prep.test
    step = int(prep.resample_s)
    t_test = _sec(test.timestamps)
    start = int(_sec(ctx.t0[:1])[0]) if len(ctx.t0) else int(t_test[0])
    span_s = 86400
    i0 = int(np.searchsorted(t_test, start))
    i1 = int(np.searchsorted(t_test, start + span_s))
    # raw native samples of the same span
    t_raw = _sec(hh.timestamps)
    r0, r1 = int(np.searchsorted(t_raw, start)), int(np.searchsorted(t_raw, start + span_s))
    devices = list(prep.devices)
    raw_apps = {d: f32(hh.appliances[d][r0:r1]) for d in devices if d in hh.appliances}
    # windows of the test split that start inside the span (window starts as offsets in bins from `start`)
    w0 = _sec(test.t0)
    in_span = (w0 >= start) & (w0 < start + span_s)
    example = set(int(v) for v in _sec(ctx.t0))
    windows = [{"start": int((v - start) // step), "example": int(v) in example} for v in w0[in_span]]
    cfg = prep.config
    stats = prep.stats
    split_bins = stats.get("split_bins", {})
    out = {
        "start": str(np.datetime64(start, "s")),
        "step_s": step,
        "native_rate_s": int(hh.rate_s),
        "devices": devices,
        "raw": {
            "t": np.ascontiguousarray((t_raw[r0:r1] - start).astype("<i4")).tobytes(),
            "aggregate_w": f32(hh.aggregate[r0:r1]),
            "appliances_w": raw_apps,
            "n": r1 - r0,
        },
        "resampled": {
            "n": i1 - i0,
            "aggregate_w": f32(test.aggregate_w[i0:i1]),
            "appliances_w": f32(test.appliances_w[:, i0:i1]),
            "states": np.ascontiguousarray(test.states[:, i0:i1], dtype=np.uint8).tobytes(),
            "valid": np.ascontiguousarray(test.valid[i0:i1], dtype=np.uint8).tobytes(),
        },
        "cutoff_w": stats.get("cutoff_w"),
        "thresholds_w": prep.thresholds_w,
        "min_on_steps": prep.min_on_steps,
        "min_off_steps": prep.min_off_steps,
        "scalers": prep.scalers,
        "scaler_kind": cfg.get("scaler"),
        "window": int(cfg.get("window", 480)),
        "stride": int(cfg.get("stride", 240)),
        "eval_stride": int(cfg.get("eval_stride") or cfg.get("stride", 240)),
        "gap_windows": int(cfg.get("gap_windows", 0)),
        "windows": windows,
        "day_offset_bins": i0,
        "splits": {
            "bins": split_bins,
            "total_bins": stats.get("resampled_bins"),
            "span": stats.get("span"),
            "windows": stats.get("windows"),
            "fractions": cfg.get("fractions"),
        },
        "stats": {
            "on_fraction": stats.get("on_fraction"),
            "energy_kwh": stats.get("energy_kwh"),
            "aggregate_kwh": stats.get("aggregate_kwh"),
            "native_samples": stats.get("native_samples"),
            "gaps_filled_bins": stats.get("gaps_filled_bins"),
            "invalid_bins": stats.get("invalid_bins"),
        },
        "example": {
            "t0": [str(v) for v in np.asarray(ctx.t0).astype("datetime64[s]")],
            "x": f32(ctx.x[:, :7, :]),
            "shape": list(ctx.x[:, :7, :].shape),
        },
        "time_features": TIME_FEATURES,
    }
    return msgpack.packb(clean(out), use_bin_type=True)


def build(ctx) -> PageSpec:
    return view_page(
        __name__,
        data={"story": story.data_story(ctx)},
        blobs={"data": data_blob(ctx)},
        context={"notes": ctx.notes_for(SLUG), "source_meta": ctx.public(ctx.prepared.meta)},
    )
