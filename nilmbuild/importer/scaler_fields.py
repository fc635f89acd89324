"""The upstream NILMscaler's fields, from `--scaler SCALER.json` or the config's `scaler` block, checked and put
in the config's device order.

CondiNILM keeps its fitted NILMscaler only inside its pickled data cache, which nilmbuild never unpickles; the
original NILMFormer keeps it nowhere. So the user writes its fields as JSON (docs/upstream-models.md):

    {"power_scaling_type": "MaxScaling", "appliance_scaling_type": "MaxScaling",
     "power_stat1": 0.0, "power_stat2": 6000.0,
     "appliance_stat1": [0.0, 0.0], "appliance_stat2": [3000.0, 2500.0],
     "devices": ["kettle", "fridge"]}

`appliance_stat1/2` are lists in the scaler's device order, which `devices` names (it may be left out for one
device). The fields are re-ordered here to the config's `app` order, the model's output channels.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from nilmbuild.errors import UserError

from .upstream_config import UpstreamConfig

#: The scaling type names check_fields reads (an int is accepted too: a fixed divisor); check_types then keeps the
#: ones each upstream really scales with. The original NILMFormer's fit() spells MinMax "MinMaxScaling".
SCALING_TYPES = {"StandardScaling", "MinMax", "MinMaxScaling", "MeanScaling", "MeanMaxScaling", "MaxScaling"}
#: The types each upstream's NILMscaler fits *and* scales with (tests/test_import_scaling.py runs every pair through
#: the upstream's own fit/transform/inverse). Left out: appliance "MeanScaling" in both (accepted, but fit() stores
#: no statistic for it, so transform() fails); power "MinMax" in the original (accepted, but its fit() tests for
#: "MinMaxScaling" and stores nothing, so its transform divides by 0); "MinMaxScaling" (both constructors refuse
#: it): the original NILMFormer has no working min-max power scaling.
WORKING_TYPES = {
    "condinilm": (
        {"StandardScaling", "MinMax", "MeanScaling", "MeanMaxScaling", "MaxScaling"},
        {"StandardScaling", "MinMax", "MeanMaxScaling", "MaxScaling", "SameAsPower"},
    ),
    "nilmformer": (
        {"StandardScaling", "MeanScaling", "MeanMaxScaling", "MaxScaling"},
        {"StandardScaling", "MinMax", "MeanMaxScaling", "MaxScaling", "SameAsPower"},
    ),
}
FIELDS = ("power_scaling_type", "appliance_scaling_type", "power_stat1", "power_stat2")
_HOW = "write it from the NILMscaler as docs/upstream-models.md shows"


def read_scaler(path: Path | None, cfg: UpstreamConfig) -> tuple[dict, str]:
    """(fields in the config's device order, where they came from: the JSON's name or `<config>:scaler`)."""
    if path is not None:
        if not path.is_file():
            raise UserError(f"--scaler {path} does not exist: {_HOW}")
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise UserError(f"--scaler {path.name} is not JSON: {_HOW}") from None
        return check_fields(raw, cfg, path.name), path.name
    raw = cfg.raw.get("scaler")
    if raw is None:
        raise UserError(
            f"no scaler: pass --scaler SCALER.json with the NILMscaler's fields, or put them in a `scaler` block of "
            f"--config {cfg.name} ({_HOW})"
        )
    return check_fields(raw, cfg, f"{cfg.name}:scaler"), f"{cfg.name}:scaler"


def check_fields(raw, cfg: UpstreamConfig, where: str) -> dict:
    """NILMscaler fields -> {types, power stats, appliance_stat1/2 and devices in cfg.devices' order}."""
    if not isinstance(raw, dict):
        raise UserError(f"{where}: the scaler must be a JSON object of NILMscaler fields: {_HOW}")
    missing = [k for k in (*FIELDS, "appliance_stat1", "appliance_stat2") if k not in raw]
    if missing:
        raise UserError(f"{where}: the scaler has no {', '.join(missing)}: {_HOW}")
    out = {
        "power_scaling_type": _kind(raw["power_scaling_type"], where, "power_scaling_type"),
        "appliance_scaling_type": _kind(raw["appliance_scaling_type"], where, "appliance_scaling_type"),
        "power_stat1": _number(raw["power_stat1"], where, "power_stat1"),
        "power_stat2": _number(raw["power_stat2"], where, "power_stat2"),
    }
    order = _scaler_devices(raw, cfg, where)
    for key in ("appliance_stat1", "appliance_stat2"):
        values = _numbers(raw[key], len(order), where, key)
        by_name = dict(zip(order, values, strict=True))
        out[key] = [by_name[d] for d in cfg.devices]
    out["devices"] = list(cfg.devices)
    return out


def _scaler_devices(raw: dict, cfg: UpstreamConfig, where: str) -> list[str]:
    """The scaler's device order: its `devices`, or (one device only) the config's."""
    names = raw.get("devices")
    if names is None:
        if len(cfg.devices) == 1:
            return list(cfg.devices)
        raise UserError(f"{where}: the scaler has no `devices` list naming its appliance_stat order: {_HOW}")
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not all(isinstance(n, (str, int)) for n in names):
        raise UserError(f"{where}: the scaler's `devices` must be a list of device names: {_HOW}")
    names = [str(n) for n in names]
    missing = [d for d in cfg.devices if d not in names]
    if missing:
        raise UserError(
            f"{where}: no scaler for device {', '.join(missing)} (the scaler has {', '.join(names)}; --config "
            f"{cfg.name} `app` has {', '.join(cfg.devices)}): pass the scaler of the run that trained this model"
        )
    extra = [n for n in names if n not in cfg.devices]
    if extra or len(set(names)) != len(names):
        raise UserError(
            f"{where}: the scaler's devices {', '.join(names)} are not the config's `app` "
            f"({', '.join(cfg.devices)}): pass the scaler of the run that trained this model"
        )
    return names


def _kind(v, where: str, key: str):
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return v
    if key == "appliance_scaling_type" and v == "SameAsPower":
        return v
    if v not in SCALING_TYPES:
        raise UserError(f"{where}: {key} is {v!r}, not one of NILMscaler's: {', '.join(sorted(SCALING_TYPES))}")
    return v


def _number(v, where: str, key: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise UserError(f"{where}: {key} is {v!r}, not a finite number: {_HOW}")
    return float(v)


def _numbers(v, n: int, where: str, key: str) -> list[float]:
    values = v if isinstance(v, list) else [v]
    if len(values) != n:
        raise UserError(f"{where}: {key} has {len(values)} values for {n} devices: {_HOW}")
    return [_number(x, where, key) for x in values]


def check_types(fields: dict, architecture: str, where: str) -> None:
    """A one-line UserError for a scaling type the upstream's NILMscaler accepts but cannot scale with (see
    WORKING_TYPES), or a device scale of 0: CondiNILM then divides by 1 but multiplies back by 0 (a device that
    never ran in the training block always reads its stat1), which no invertible scaler expresses."""
    power_ok, appliance_ok = WORKING_TYPES[architecture]
    for key, ok in (("power_scaling_type", power_ok), ("appliance_scaling_type", appliance_ok)):
        v = fields[key]
        if not _is_divisor(v) and v not in ok:
            raise UserError(
                f"{where}: the {architecture} NILMscaler never scales with {key} {v!r} (see docs/upstream-models.md); "
                f"it scales with {', '.join(sorted(ok))} or an int divisor: pass the scaler of your run"
            )
    kind = fields["power_scaling_type"] if fields["appliance_scaling_type"] == "SameAsPower" else None
    kind = kind or fields["appliance_scaling_type"]
    for d, s1, s2 in zip(fields["devices"], fields["appliance_stat1"], fields["appliance_stat2"], strict=True):
        if (s2 - s1 if kind == "MinMax" else s2) == 0:
            raise UserError(
                f"{where}: {d}'s scale is 0 (it never drew power in the training block), so the upstream's evaluation "
                f"reads it as a constant {s1:g} W: drop {d} from the run, or train on data where it runs"
            )


def _is_divisor(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
