"""Preprocessing (spec sections 2-3): resample, fill short gaps, cut off, ON/OFF states, temporal
split, scalers fitted on train only, sliding windows, exogenous time features.

Gap rule: after resampling to `resample_s` bins (mean of the native samples in each bin), a run of
missing bins no longer than `ffill_max_s` is forward-filled from the last valid bin (the whole run);
longer runs stay missing, are marked invalid in `valid`, and every window overlapping an invalid bin
is dropped. The continuous per-split series keep those bins (zeros with valid=False).

Split rule: the resampled timeline is cut into three consecutive blocks (fractions of the timeline,
or explicit `val_from` / `test_from` dates); the first `gap_windows * window` bins of the val and test
blocks are discarded, so the last train window and the first val window are at least that far apart;
windows never cross a block boundary.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from nilmbuild.data.household import DEVICE_NAMES, Household
from nilmbuild.data.scalers import (  # noqa: F401  (re-exported: scalers lived here)
    FIXED_SCALERS,
    SCALERS,
    AffineScaling,
    MaxScaling,
    MeanScaling,
    MinMaxScaling,
    Scaler,
    StandardScaling,
    make_scaler,
    scaler_affine,
    scaler_affines,
    scaler_from_dict,
)
from nilmbuild.errors import UserError

SPLITS = ("train", "val", "test")

#: Conventions from docs (nilm-facts): Kelly / BERT4NILM / NILMFormer on UK-DALE.
THRESHOLDS_W = {"kettle": 2000.0, "microwave": 200.0, "fridge": 50.0, "dishwasher": 10.0, "washing_machine": 20.0}
REFIT_THRESHOLDS_W = {
    **THRESHOLDS_W,
    "kettle": 500.0,
    "washing_machine": 300.0,
    "dishwasher": 300.0,
    "microwave": 200.0,
}
MAX_POWER_W = {"kettle": 3100.0, "microwave": 3000.0, "fridge": 300.0, "dishwasher": 2500.0, "washing_machine": 2500.0}
MIN_ON_S = {"kettle": 12, "microwave": 12, "fridge": 60, "dishwasher": 1800, "washing_machine": 1800}
MIN_OFF_S = {"kettle": 0, "microwave": 30, "fridge": 12, "dishwasher": 1800, "washing_machine": 160}
#: Kelly's minimum ON durations assume a threshold low enough to keep a whole cycle above it (UK-DALE's
#: 10-20 W for dishwasher and washing machine). At REFIT's 300 W only the heating bursts pass (10-15 min
#: each), so a 30-minute minimum ON deleted almost every activation (washing machine: 11 % of its energy
#: inside ON periods). REFIT keeps Kelly's OFF bridging and drops no ON run (docs/spec-notes.md, "labels").
REFIT_MIN_ON_S = {d: 0 for d in MIN_ON_S}
#: A device whose energy falls less than this much inside its ON periods gets a warning in `nilmbuild data`.
MIN_ENERGY_IN_ON = 0.8
CUTOFF_W = {"ukdale": 6000.0, "refit": 10000.0, "redd": 6000.0, "synthetic": 6000.0, "csv": 6000.0}


@dataclass
class PrepConfig:
    """Preprocessing options. None = the dataset's default (see CUTOFF_W / THRESHOLDS_W)."""

    resample_s: int = 60
    ffill_max_s: int = 180
    cutoff_w: float | None = None
    window: int = 480
    stride: int = 240  # train stride
    eval_stride: int | None = None  # val/test stride; None = same as `stride`
    fractions: tuple[float, float, float] = (0.7, 0.15, 0.15)
    val_from: str | None = None  # explicit boundaries (UTC dates) override fractions
    test_from: str | None = None
    gap_windows: int = 1
    scaler: str = "max"  # max | standard | minmax | mean
    appliance_scaler: str | None = None  # None = same as `scaler` (training passes "max": targets >= 0)
    devices: tuple[str, ...] = DEVICE_NAMES
    thresholds_w: dict[str, float] | None = None
    min_on_s: dict[str, float] | None = None
    min_off_s: dict[str, float] | None = None
    max_power_w: dict[str, float] | None = None


# ---- result containers ----------------------------------------------------------------------------


@dataclass
class Split:
    """One split: windows for the model, plus the continuous series for seq2subseq.

    x: (N, 7, W) float32 model input; y: (N, M, 2, W) float32 [scaled power, ON/OFF];
    t0: (N,) datetime64[s] window starts; timestamps: (T,) datetime64[s] at resample_s;
    aggregate_w: (T,) float32 watts (after cutoff); appliances_w: (M, T) float32 watts (clipped);
    states: (M, T) uint8; valid: (T,) bool (False inside long gaps; those bins hold 0).
    """

    x: np.ndarray
    y: np.ndarray
    t0: np.ndarray
    timestamps: np.ndarray
    aggregate_w: np.ndarray
    appliances_w: np.ndarray
    states: np.ndarray
    valid: np.ndarray

    FIELDS = ("x", "y", "t0", "timestamps", "aggregate_w", "appliances_w", "states", "valid")


@dataclass
class Prepared:
    """Everything training, inference and the pages need from the data side."""

    splits: dict[str, Split]
    devices: tuple[str, ...]
    scalers: dict  # {"aggregate": {...}, "appliances": {name: {...}}}
    thresholds_w: dict[str, float]
    min_on_steps: dict[str, int]
    min_off_steps: dict[str, int]
    resample_s: int
    config: dict
    meta: dict
    stats: dict = field(default_factory=dict)

    def __getitem__(self, split: str) -> Split:
        return self.splits[split]

    @property
    def train(self) -> Split:
        return self.splits["train"]

    @property
    def val(self) -> Split:
        return self.splits["val"]

    @property
    def test(self) -> Split:
        return self.splits["test"]

    def aggregate_scaler(self) -> Scaler:
        return scaler_from_dict(self.scalers["aggregate"])

    def appliance_scaler(self, name: str) -> Scaler:
        return scaler_from_dict(self.scalers["appliances"][name])

    def to_npz(self, path: str | os.PathLike) -> None:
        """Write all arrays + JSON metadata to one .npz, atomically (temp file + os.replace)."""
        arrays = {f"{s}__{f}": getattr(sp, f) for s, sp in self.splits.items() for f in Split.FIELDS}
        for k, v in list(arrays.items()):
            if v.dtype.kind == "M":
                arrays[k] = v.astype("datetime64[s]").astype(np.int64)
        info = {
            k: getattr(self, k)
            for k in (
                "devices",
                "scalers",
                "thresholds_w",
                "min_on_steps",
                "min_off_steps",
                "resample_s",
                "config",
                "meta",
                "stats",
            )
        }
        arrays["info_json"] = np.array(json.dumps(info, default=_json_default))
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez_compressed(f, **arrays)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def from_npz(cls, path: str | os.PathLike) -> Prepared:
        try:
            z = np.load(path, allow_pickle=False)
            info = json.loads(str(z["info_json"]))
            splits = {}
            for s in SPLITS:
                vals = {f: z[f"{s}__{f}"] for f in Split.FIELDS}
                for f in ("t0", "timestamps"):
                    vals[f] = vals[f].astype("datetime64[s]")
                splits[s] = Split(**vals)
        except (OSError, KeyError, ValueError) as e:
            raise UserError(
                f"{path}: not a prepared-data file ({type(e).__name__}); make one with `nilmbuild data --out`"
            ) from None
        info["devices"] = tuple(info["devices"])
        return cls(splits=splits, **info)


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    return str(o)


# ---- pipeline steps -------------------------------------------------------------------------------


def resample(ts: np.ndarray, values: np.ndarray, origin: int, step_s: int, n: int) -> np.ndarray:
    """Mean of the finite samples of `values` (T,) in each `step_s` bin from `origin` (unix s) -> (n,) float64, NaN if none."""
    sec = ts.astype("datetime64[s]").astype(np.int64)
    idx = (sec - origin) // step_s
    m = np.isfinite(values)
    s = np.bincount(idx[m], weights=values[m].astype(np.float64), minlength=n)
    c = np.bincount(idx[m], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.maximum(c, 1), np.nan)


def nan_runs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) indices of the runs of NaN in x (T,)."""
    isn = np.isnan(x).astype(np.int8)
    d = np.diff(np.concatenate([[0], isn, [0]]))
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)


def bounded_ffill(x: np.ndarray, max_steps: int) -> tuple[np.ndarray, int]:
    """Forward-fill NaN runs of length <= max_steps that have a valid value before them.
    Longer runs (and a leading run) stay NaN. Returns (filled copy, number of filled bins)."""
    x = x.copy()
    starts, ends = nan_runs(x)
    filled = 0
    for s, e in zip(starts, ends):
        if s > 0 and e - s <= max_steps:
            x[s:e] = x[s - 1]
            filled += e - s
    return x, filled


def on_off(power: np.ndarray, threshold: float, min_on: int, min_off: int) -> np.ndarray:
    """ON where power > threshold, then OFF gaps shorter than `min_off` steps between two ON runs are
    bridged and ON runs shorter than `min_on` steps are removed (Kelly's activation rules). (T,) uint8."""
    on = power > threshold
    for value, min_len in ((False, min_off), (True, min_on)):
        d = np.diff(np.concatenate([[False], on == value, [False]]).astype(np.int8))
        s, e = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
        if value is False:  # only interior gaps are bridged
            inner = (s > 0) & (e < on.size)
            short = inner & ((e - s) < min_len)
            for a, b in zip(s[short], e[short]):
                on[a:b] = True
        else:
            for a, b in zip(s[(e - s) < min_len], e[(e - s) < min_len]):
                on[a:b] = False
    return on.astype(np.uint8)


def exogenous(ts: np.ndarray) -> np.ndarray:
    """Spec 3.1 cyclical features for (T,) datetime64 -> (6, T) float32:
    month/12, day-of-year/365, fractional hour/24, each as sin, cos."""
    t = ts.astype("datetime64[s]")
    month = (t.astype("datetime64[M]").astype(np.int64) % 12) + 1
    doy = (t.astype("datetime64[D]") - t.astype("datetime64[Y]")).astype(np.int64) + 1
    hour = (t - t.astype("datetime64[D]")).astype(np.int64) / 3600.0  # fractional hour
    out = []
    for v, period in ((month, 12.0), (doy, 365.0), (hour, 24.0)):
        a = 2 * np.pi * v / period
        out += [np.sin(a), np.cos(a)]
    return np.stack(out).astype(np.float32)


def split_bounds(ts: np.ndarray, cfg: PrepConfig) -> list[tuple[int, int]]:
    """[(start, end)] bin ranges of train/val/test after removing the leakage gaps."""
    n = ts.size
    if cfg.val_from or cfg.test_from:

        def at(date, default):
            if not date:
                return default
            try:
                d = np.datetime64(date, "s")
            except ValueError:
                raise UserError(f"bad split date {date!r}; use YYYY-MM-DD") from None
            return int(np.searchsorted(ts, d))

        b2 = at(cfg.test_from, n)
        b1 = at(
            cfg.val_from, b2 - int(round(n * cfg.fractions[1])) if cfg.test_from else int(round(n * cfg.fractions[0]))
        )
    else:
        f = np.asarray(cfg.fractions, dtype=float)
        if f.size != 3 or (f < 0).any() or f.sum() <= 0:
            raise UserError(f"bad split fractions {cfg.fractions}; give three non-negative numbers")
        f = f / f.sum()
        b1, b2 = int(round(n * f[0])), int(round(n * (f[0] + f[1])))
    b1 = max(0, min(b1, n))
    b2 = max(b1, min(b2, n))
    gap = cfg.gap_windows * cfg.window
    return [(0, b1), (min(b1 + gap, b2), b2), (min(b2 + gap, n), n)]


def window_starts(lo: int, hi: int, window: int, stride: int, valid: np.ndarray) -> np.ndarray:
    """Starts s in [lo, hi - window] step `stride` whose window [s, s+window) is all valid. (N,) int64."""
    if hi - lo < window:
        return np.zeros(0, dtype=np.int64)
    s = np.arange(lo, hi - window + 1, stride, dtype=np.int64)
    bad = np.concatenate([[0], np.cumsum(~valid)])
    return s[(bad[s + window] - bad[s]) == 0]


def _defaults(hh: Household, cfg: PrepConfig):
    like = hh.meta.get("like") or hh.meta.get("dataset", "csv")
    thr = dict(REFIT_THRESHOLDS_W if like == "refit" else THRESHOLDS_W)
    thr.update(cfg.thresholds_w or {})
    cutoff = cfg.cutoff_w if cfg.cutoff_w is not None else CUTOFF_W.get(like, 6000.0)
    min_on = {**(REFIT_MIN_ON_S if like == "refit" else MIN_ON_S), **(cfg.min_on_s or {})}
    min_off = {**MIN_OFF_S, **(cfg.min_off_s or {})}
    return like, thr, cutoff, {**MAX_POWER_W, **(cfg.max_power_w or {})}, min_on, min_off


def prepare(hh: Household, cfg: PrepConfig | None = None, scalers: dict | None = None) -> Prepared:
    """Household -> Prepared (see module docstring for the rules).

    scalers: a Prepared.scalers dict (e.g. a checkpoint's) to apply instead of fitting new ones, so data
    for a trained model is scaled exactly as its training data was. Several houses as one Prepared:
    nilmbuild.data.buildings (the same steps, scalers fitted on all their train blocks together).
    """
    cfg = checked_config(cfg)
    part = grid_part(hh, cfg)
    agg_scaler, app_scalers = fit_scalers([part], cfg, scalers)
    splits = part_windows(cfg, part, agg_scaler, app_scalers)
    meta = {k: v for k, v in hh.meta.items()}
    meta["missing"] = sorted(set(meta.get("missing", [])) | set(part["g"]["missing"]))
    return prepared_from(part, cfg, splits, agg_scaler, app_scalers, meta, part_stats(part, splits))


def checked_config(cfg: PrepConfig | None) -> PrepConfig:
    cfg = cfg or PrepConfig()
    check_devices(cfg.devices)
    if cfg.resample_s < 1 or cfg.window < 2 or cfg.stride < 1:
        raise UserError("resample, window and stride must be positive (window >= 2)")
    return cfg


def grid_part(hh: Household, cfg: PrepConfig) -> dict:
    """Steps 1-4 and the split bounds of one house: its regular grid (bounded ffill), cut-offs, ON/OFF states, and
    the dataset defaults they used. -> {"g", "agg" (T,), "apps" (M, T), "states" (M, T), "bounds", "thr", "cutoff",
    "pmax", "min_on", "min_off", "devices", "step", "source", "samples", "rate_s"}"""
    if len(hh) == 0:
        raise UserError(f"{hh.meta.get('source', 'data')}: no samples to prepare")
    like, thr, cutoff, pmax, min_on_s, min_off_s = _defaults(hh, cfg)
    step, devs = int(cfg.resample_s), tuple(cfg.devices)
    g = _on_grid(hh, devs, step, cfg.ffill_max_s)  # 1-2. regular grid, bounded ffill
    agg, apps = _clip(g, devs, cutoff, pmax)  # 3. cut-offs and clipping
    # 4. ON/OFF states from thresholds and duration rules, in steps at this rate (>= 1)
    min_on = {d: _to_steps(min_on_s.get(d, 0), step) for d in devs}
    min_off = {d: _to_steps(min_off_s.get(d, 0), step) for d in devs}
    states = np.stack([on_off(apps[i], thr[d], min_on[d], min_off[d]) for i, d in enumerate(devs)])  # (M, T)
    return {
        "g": g,
        "agg": agg,
        "apps": apps,
        "states": states,
        "bounds": split_bounds(g["ts"], cfg),  # 5. the split
        "thr": thr,
        "cutoff": cutoff,
        "pmax": pmax,
        "min_on": min_on,
        "min_off": min_off,
        "devices": devs,
        "step": step,
        "source": hh.meta.get("source"),
        "samples": len(hh),
        "rate_s": hh.rate_s,
    }


def prepared_from(part: dict, cfg: PrepConfig, splits: dict, agg_scaler, app_scalers, meta: dict, stats: dict):
    """The Prepared of windows `splits` cut from `part`'s grid (or several parts joined: data.buildings)."""
    devs = tuple(cfg.devices)
    return Prepared(
        splits=splits,
        devices=devs,
        scalers={"aggregate": agg_scaler.to_dict(), "appliances": {d: s.to_dict() for d, s in app_scalers.items()}},
        thresholds_w={d: float(part["thr"][d]) for d in devs},
        min_on_steps=part["min_on"],
        min_off_steps=part["min_off"],
        resample_s=int(cfg.resample_s),
        config=json.loads(json.dumps(asdict(cfg), default=_json_default)),
        meta=json.loads(json.dumps(meta, default=_json_default)),
        stats=stats,
    )


def check_devices(devices, where: str = "") -> None:
    """A one-line UserError naming the allowed devices when `devices` holds a name outside DEVICE_NAMES (the
    data side has labels, thresholds and durations for those only)."""
    unknown = [str(d) for d in devices if d not in DEVICE_NAMES]
    if unknown:
        raise UserError(
            f"{where}unknown device(s) {', '.join(map(repr, unknown))}: nilmbuild's data side knows "
            f"{', '.join(DEVICE_NAMES)}; use those names"
        )


def _to_steps(seconds: float, step: int) -> int:
    return max(1, int(np.ceil(float(seconds) / step)))


def _on_grid(hh: Household, devs: tuple, step: int, ffill_max_s: float) -> dict:
    """Resample onto a regular grid (bins aligned to multiples of `step` since the epoch) with a bounded
    forward-fill; missing devices become zeros (flagged). -> {"ts" (T,), "agg" (T,), "apps" (M, T), "valid"
    (T,), "missing", "gaps_filled", "n"}"""
    sec = hh.timestamps.astype("datetime64[s]").astype(np.int64)
    origin = int(sec[0] // step * step)
    n = int((sec[-1] - origin) // step + 1)
    ts = (origin + np.arange(n, dtype=np.int64) * step).astype("datetime64[s]")
    max_fill = max(0, int(ffill_max_s // step))
    agg, gaps_filled = bounded_ffill(resample(hh.timestamps, hh.aggregate, origin, step, n), max_fill)
    apps = np.zeros((len(devs), n))  # (M, T)
    missing = [d for d in devs if d not in hh.appliances]
    if missing:
        warnings.warn(
            f"{hh.meta.get('source')}: no channel for {', '.join(missing)}; filled with zeros "
            f"(their targets are meaningless; meta['missing'])",
            stacklevel=4,
        )
    for i, d in enumerate(devs):
        if d in hh.appliances:
            apps[i], f = bounded_ffill(resample(hh.timestamps, hh.appliances[d], origin, step, n), max_fill)
            gaps_filled += f
    valid = np.isfinite(agg) & np.isfinite(apps).all(axis=0)  # (T,)
    return {"ts": ts, "agg": agg, "apps": apps, "valid": valid, "missing": missing, "gaps_filled": gaps_filled, "n": n}


def _clip(g: dict, devs: tuple, cutoff: float, pmax: dict) -> tuple[np.ndarray, np.ndarray]:
    """Cut-offs and clipping; invalid bins hold 0. -> aggregate (T,), appliances (M, T), float32 watts"""
    valid = g["valid"]
    agg = np.where(valid, np.clip(g["agg"], 0, cutoff), 0.0).astype(np.float32)
    apps = np.stack([np.where(valid, np.clip(g["apps"][i], 0, pmax.get(d, np.inf)), 0.0) for i, d in enumerate(devs)])
    return agg, apps.reshape(len(devs), -1).astype(np.float32)


def fit_scalers(parts: list[dict], cfg: PrepConfig, scalers: dict | None):
    """The checkpoint's scalers (checked to cover these devices) or new ones fitted on the valid train bins of all
    `parts` together (one house: its train block; several: their train blocks concatenated)."""
    devs = tuple(cfg.devices)
    train = [(p, slice(*p["bounds"][0])) for p in parts]
    if not any(p["g"]["valid"][tr].any() for p, tr in train):
        raise UserError(f"{parts[0]['source']}: the train split has no valid data; use more data or other split dates")
    if scalers is not None:
        absent = [d for d in devs if d not in scalers.get("appliances", {})]
        if "aggregate" not in scalers or absent:
            raise UserError(
                f"the checkpoint's scalers do not cover {', '.join(absent) or 'the aggregate'}: "
                "use a checkpoint trained on these devices"
            )
        return scaler_from_dict(scalers["aggregate"]), {d: scaler_from_dict(scalers["appliances"][d]) for d in devs}
    agg_scaler = make_scaler(cfg.scaler).fit(np.concatenate([p["agg"][tr][p["g"]["valid"][tr]] for p, tr in train]))
    missing = {d for p in parts for d in p["g"]["missing"]}
    app_scalers = {}
    for i, d in enumerate(devs):
        kind = cfg.appliance_scaler or cfg.scaler
        sc = make_scaler(kind).fit(np.concatenate([p["apps"][i, tr][p["g"]["valid"][tr]] for p, tr in train]))
        if kind == "max" and d in missing:
            sc.max = parts[0]["pmax"].get(d, 1.0)
        app_scalers[d] = sc
    return agg_scaler, app_scalers


def part_windows(cfg, part: dict, agg_scaler, app_scalers) -> dict:
    """Each split's windows (x (N, 7, W), y (N, M, 2, W), t0) and its continuous series, of one part."""
    devs, g, agg, apps, states = tuple(cfg.devices), part["g"], part["agg"], part["apps"], part["states"]
    ts, valid, W = g["ts"], g["valid"], int(cfg.window)
    exo = exogenous(ts)  # (6, T)
    agg_s = agg_scaler.transform(agg).astype(np.float32)  # (T,)
    apps_s = np.stack([app_scalers[d].transform(apps[i]) for i, d in enumerate(devs)]).astype(np.float32)
    splits = {}
    for name, (lo, hi) in zip(SPLITS, part["bounds"]):
        stride = cfg.stride if name == "train" else (cfg.eval_stride or cfg.stride)
        starts = window_starts(lo, hi, W, stride, valid)  # (N,)
        idx = starts[:, None] + np.arange(W)  # (N, W)
        x = np.concatenate([agg_s[idx][:, None], exo[:, idx].transpose(1, 0, 2)], axis=1)  # (N, 7, W)
        y = np.stack([apps_s[:, idx], states[:, idx].astype(np.float32)], axis=2)  # (M, N, 2, W)
        y = y.transpose(1, 0, 2, 3) if y.size else np.zeros((0, len(devs), 2, W), np.float32)
        splits[name] = Split(
            x=np.ascontiguousarray(x, dtype=np.float32).reshape(-1, 7, W),
            y=np.ascontiguousarray(y, dtype=np.float32).reshape(-1, len(devs), 2, W),
            t0=ts[starts],
            timestamps=ts[lo:hi],
            aggregate_w=agg[lo:hi],
            appliances_w=apps[:, lo:hi],
            states=states[:, lo:hi],
            valid=valid[lo:hi],
        )
    return splits


def part_stats(part: dict, splits: dict) -> dict:
    """What `nilmbuild data` prints: span, gaps, ON fractions, energies, windows per split."""
    g, agg, apps, states = part["g"], part["agg"], part["apps"], part["states"]
    ts, valid, step, devs = g["ts"], g["valid"], part["step"], part["devices"]
    return {
        "span": [str(ts[0]), str(ts[-1])],
        "native_samples": part["samples"],
        "native_rate_s": part["rate_s"],
        "resampled_bins": g["n"],
        "valid_bins": int(valid.sum()),
        "gaps_filled_bins": int(g["gaps_filled"]),
        "invalid_bins": int((~valid).sum()),
        "cutoff_w": part["cutoff"],
        "on_fraction": {d: float(states[i][valid].mean()) if valid.any() else 0.0 for i, d in enumerate(devs)},
        "energy_kwh": {d: float(apps[i][valid].sum() * step / 3.6e6) for i, d in enumerate(devs)},
        "energy_in_on": energy_in_on(apps, states, valid, devs),
        "aggregate_kwh": float(agg[valid].sum() * step / 3.6e6),
        "windows": {s: int(sp.x.shape[0]) for s, sp in splits.items()},
        "split_bins": {s: [int(a), int(b)] for s, (a, b) in zip(SPLITS, part["bounds"])},
        "missing": g["missing"],
    }


def energy_in_on(apps: np.ndarray, states: np.ndarray, valid: np.ndarray, devs) -> dict[str, float | None]:
    """Share of each device's energy that falls inside its ON periods (None for a device that uses none).
    Low values mean the labels miss real activations (threshold or duration rules too strict)."""
    out = {}
    for i, d in enumerate(devs):
        total = float(apps[i][valid].sum())
        out[d] = float((apps[i] * states[i])[valid].sum() / total) if total > 0 else None
    return out


def example_batch(prepared: Prepared, split: str = "test", batch_size: int = 32, seed: int = 0):
    """A fixed, seeded batch (x (B, 7, W), y (B, M, 2, W), t0 (B,)) for the pages.

    Biased so every device with any activation in the split appears: windows are drawn round-robin
    over devices from those where that device is ON, then the rest at random; indices sorted by time.
    """
    sp = prepared.splits.get(split)
    if sp is None:
        raise UserError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    n = sp.x.shape[0]
    if n == 0:
        raise UserError(f"the {split} split has no windows; use more data, a shorter window or other split settings")
    rng = np.random.Generator(np.random.PCG64(seed))
    b = min(batch_size, n)
    active = sp.y[:, :, 1, :].any(axis=2)  # (N, M)
    pools = [list(rng.permutation(np.flatnonzero(active[:, m]))) for m in range(active.shape[1])]
    chosen: list[int] = []
    per_dev = max(1, b // (active.shape[1] + 1))  # leave room for random windows
    for _ in range(per_dev):
        for pool in pools:
            while pool and len(chosen) < b:
                i = int(pool.pop())
                if i not in chosen:
                    chosen.append(i)
                    break
    rest = [int(i) for i in rng.permutation(n) if int(i) not in chosen]
    chosen += rest[: b - len(chosen)]
    idx = np.sort(np.asarray(chosen, dtype=np.int64))
    return sp.x[idx], sp.y[idx], sp.t0[idx]


def summary(prepared: Prepared) -> str:
    """Human-readable table: span, samples, gaps, per-appliance ON fraction and energy, windows."""
    s, m = prepared.stats, prepared.meta
    lines = [
        f"source        {m.get('source')}  ({m.get('dataset')}"
        + (f", house {m['house']})" if m.get("house") is not None else ")"),
        f"span          {s['span'][0]} .. {s['span'][1]}",
        f"samples       {s['native_samples']:,} native @ {s['native_rate_s']} s -> {s['resampled_bins']:,} bins @ {prepared.resample_s} s",
        f"gaps          {s['gaps_filled_bins']:,} bins forward-filled, {s['invalid_bins']:,} bins in long gaps (windows there dropped)",
        f"cutoff        aggregate clipped to {s['cutoff_w']:.0f} W; aggregate energy {s['aggregate_kwh']:.1f} kWh",
        "",
        f"{'appliance':<16}{'threshold W':>12}{'min ON/OFF':>12}{'ON fraction':>13}{'energy kWh':>12}{'in ON':>7}",
    ]
    for d in prepared.devices:
        share = s.get("energy_in_on", {}).get(d)
        flag = "  (missing: zeros)" if d in s["missing"] else ""
        if share is not None and share < MIN_ENERGY_IN_ON:
            flag += f"  (only {share:.0%} of its energy is inside ON periods: check its threshold and duration rules)"
        dur = f"{prepared.min_on_steps[d]}/{prepared.min_off_steps[d]}"
        lines.append(
            f"{d:<16}{prepared.thresholds_w[d]:>12.0f}{dur:>12}{s['on_fraction'][d]:>13.4f}{s['energy_kwh'][d]:>12.2f}"
            f"{'-' if share is None else f'{share:.2f}':>7}{flag}"
        )
    lines.append(
        f"{'':<16}(min ON/OFF in {prepared.resample_s} s steps; 'in ON' = share of the energy inside ON periods)"
    )
    lines.append("")
    w = s["windows"]
    lines.append("windows       " + ", ".join(f"{k} {w[k]}" for k in SPLITS) + f"  (W = {prepared.config['window']})")
    return "\n".join(lines)
