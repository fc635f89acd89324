"""The upstream model input: scaled aggregate + sin/cos time features, exactly as their datasets build it.

Time features (both codebases' NILMDataset._create_exogene, cosinbase=True): for each name in the config's
`list_exo_variables`, in that order, sin(2 pi v / P) then cos(2 pi v / P), with
  minute v in 0..59 (P 60), hour 0..23 (P 24), dow Monday = 0 .. Sunday = 6 (P 7), dom 1..31 (P 31),
  month 1..12 (P 12),
of each step's local wall-clock time (timestamps are naive; a `Z` suffix is read as that wall-clock time).

Scaling (NILMscaler): every upstream scaling is affine, z = (x - offset) / scale, watts = z * scale + offset;
scalers_from_nilmscaler turns its fields into nilmbuild's "affine" scaler dicts.
"""

from __future__ import annotations

import numpy as np

from nilmbuild.errors import UserError

PERIODS = {"minute": 60.0, "hour": 24.0, "dow": 7.0, "dom": 31.0, "month": 12.0}
POWER_TYPES = ("StandardScaling", "MinMax", "MinMaxScaling", "MeanScaling", "MeanMaxScaling", "MaxScaling")
NILMSCALER_FIELDS = (
    "power_scaling_type",
    "appliance_scaling_type",
    "power_stat1",
    "power_stat2",
    "appliance_stat1",
    "appliance_stat2",
    "devices",
)


def _calendar(ts: np.ndarray) -> dict[str, np.ndarray]:
    t = np.asarray(ts).astype("datetime64[s]")
    month_start = t.astype("datetime64[M]")
    return {
        "minute": t.astype("datetime64[m]").astype(np.int64) % 60,
        "hour": t.astype("datetime64[h]").astype(np.int64) % 24,
        "dow": (t.astype("datetime64[D]").astype(np.int64) + 3) % 7,  # 1970-01-01 was a Thursday
        "dom": (t.astype("datetime64[D]") - month_start).astype("timedelta64[D]").astype(np.int64) + 1,
        "month": month_start.astype(np.int64) % 12 + 1,
    }


def time_features(timestamps: np.ndarray, exo_variables) -> np.ndarray:
    """(T,) datetime64 -> (2 * len(exo_variables), T) float32 sin/cos features."""
    cal = _calendar(timestamps)
    rows = []
    for name in exo_variables:
        angle = 2 * np.pi * cal[name] / PERIODS[name]
        rows += [np.sin(angle), np.cos(angle)]
    return np.stack(rows).astype(np.float32)


def affine(offset: float, scale: float) -> dict:
    """A nilmbuild scaler dict (nilmbuild.data.preprocess.AffineScaling): z = (x - offset) / scale."""
    return {"kind": "affine", "offset": float(offset), "scale": float(scale) if scale != 0 else 1.0}


def _channel(kind, stat1: float, stat2: float) -> dict:
    """NILMscaler's transform of one channel: MinMax (x - s1) / (s2 - s1), every other kind (x - s1) / s2 (its
    transform() and inverse test for the name "MinMax" only; tests/test_import_scaling.py checks every type)."""
    return affine(stat1, stat2 - stat1 if kind == "MinMax" else stat2)


def _divisor(kind) -> bool:
    """An int scaling type: NILMscaler's fixed divisor (stat1 0, stat2 the int)."""
    return isinstance(kind, int) and not isinstance(kind, bool)


def _stats(fields: dict, key: str, n: int) -> list[float]:
    vals = fields.get(key)
    if not isinstance(vals, (list, tuple)) or len(vals) != n:
        got = len(vals) if isinstance(vals, (list, tuple)) else type(vals).__name__
        raise UserError(f"scaler field {key!r} needs one number per device ({n}), got {got}: re-export the scaler")
    return [float(v) for v in vals]


def scalers_from_nilmscaler(fields: dict) -> dict:
    """NILMscaler fields (power_scaling_type, appliance_scaling_type, power_stat1, power_stat2, appliance_stat1,
    appliance_stat2 lists in device order, devices) -> {"aggregate": scaler, "appliances": {device: scaler}}.
    Appliance channels follow NILMscaler's inverse_transform_appliance: MinMax when the appliance type is MinMax
    or SameAsPower with a MinMax power type, else x * stat2 + stat1."""
    missing = [k for k in NILMSCALER_FIELDS if k not in fields]
    if missing:
        raise UserError(f"the scaler JSON lacks {missing}: export every NILMscaler field (docs/upstream-models.md)")
    ptype, atype = fields["power_scaling_type"], fields["appliance_scaling_type"]
    if not _divisor(ptype) and ptype not in POWER_TYPES:
        raise UserError(f"unknown power_scaling_type {ptype!r}: use one of {POWER_TYPES} or an int divisor")
    devices = [str(d) for d in fields["devices"]]
    s1, s2 = _stats(fields, "appliance_stat1", len(devices)), _stats(fields, "appliance_stat2", len(devices))
    app_kind = ptype if atype == "SameAsPower" else atype
    return {
        "aggregate": _channel(ptype, float(fields["power_stat1"]), float(fields["power_stat2"])),
        "appliances": {d: _channel(app_kind, s1[i], s2[i]) for i, d in enumerate(devices)},
        "nilmscaler": {k: fields[k] for k in NILMSCALER_FIELDS},
    }


def check_scalers(scalers: dict, devices) -> None:
    """UserError when a device of the model has no scaler."""
    lacking = [d for d in devices if d not in (scalers.get("appliances") or {})]
    if lacking:
        raise UserError(f"the scaler has no statistics for {lacking}: its `devices` must list every device of `app`")
