"""What a NILMTK DataStore's metadata says about a building: its site meter(s) and the meters of the
appliances nilmbuild knows. Pure functions on the (already safely unpickled) metadata dicts; the file itself
is read by `nilmbuild.data.nilmtk_store`.

NILMTK keeps a building's metadata in the `metadata` attribute of `/buildingN`:
``{"instance": N, "original_name": "house_2", "elec_meters": {M: {"site_meter": bool, "submeter_of": M',
"disabled": bool, "device_model": ..., "data_location": ...}}, "appliances": [{"type": ..., "instance": i,
"meters": [M, ...], "original_name": ...}]}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nilmbuild.errors import UserError

#: NILMTK appliance `type` -> nilmbuild device. Explicit on purpose: only these types are read; every other
#: appliance is named in a warning and left out (a store's own spelling is matched case-insensitively).
NILMTK_TYPES: dict[str, str] = {
    "kettle": "kettle",
    "microwave": "microwave",
    "fridge": "fridge",
    "fridge freezer": "fridge",
    "dish washer": "dishwasher",
    "washing machine": "washing_machine",
    "washer dryer": "washing_machine",
}


@dataclass
class BuildingPlan:
    """Which meters to read for one building, and what was left out (for the summary)."""

    number: int
    original_name: str | None
    site_meters: list[int]
    devices: dict[str, list[int]]  # nilmbuild device -> meters summed into it
    labels: dict[str, list[str]] = field(default_factory=dict)  # device -> "kettle (meter 8)"
    unknown: list[str] = field(default_factory=list)  # "laptop computer (meter 2)"
    shared: list[str] = field(default_factory=list)  # meters carrying several appliances, left out
    device_models: dict[int, str] = field(default_factory=dict)  # meter -> device model (declared periods)


def building_label(plan: BuildingPlan) -> str:
    """'building 2' or, when the converter renumbered it, 'building 19 (original house_20)'."""
    orig = plan.original_name
    digits = "".join(c for c in str(orig or "") if c.isdigit())
    if orig and digits and int(digits) != plan.number:
        return f"building {plan.number} (original {orig})"
    return f"building {plan.number}"


def _meters(path, number: int, meta: dict) -> dict[int, dict]:
    """The building's elec_meters as {int meter: dict}; a malformed table is a UserError."""
    meters = meta.get("elec_meters")
    if not isinstance(meters, dict) or not meters:
        raise UserError(f"{path}: building {number} lists no elec_meters in its metadata; pass another --building")
    try:
        return {int(k): (v if isinstance(v, dict) else {}) for k, v in meters.items()}
    except (TypeError, ValueError):
        raise UserError(
            f"{path}: building {number}'s elec_meters has non-numeric meter ids; re-convert the store"
        ) from None


def site_meters(path, number: int, meters: dict[int, dict]) -> list[int]:
    """Enabled meters flagged `site_meter`, leaving out one that is a submeter of another site meter (UK-DALE's
    6-s whole-house channel under its 1-s mains: the same power twice). Two independent mains (REDD's two
    legs) are both kept and summed by the reader."""
    sites = [m for m, d in sorted(meters.items()) if d.get("site_meter") and not d.get("disabled")]
    sites = [m for m in sites if meters[m].get("submeter_of") not in sites or meters[m].get("submeter_of") == m]
    if not sites:
        disabled = [m for m, d in meters.items() if d.get("site_meter") and d.get("disabled")]
        note = f" (site meter(s) {', '.join(map(str, disabled))} disabled)" if disabled else ""
        raise UserError(
            f"{path}: building {number} has no site meter among meters {_span(meters)}{note}, so no aggregate; "
            f"pass another --building, or set site_meter: true on the mains in the store's metadata"
        )
    return sites


def _span(meters: dict) -> str:
    ks = sorted(meters)
    return f"{ks[0]}..{ks[-1]}" if len(ks) > 2 else ", ".join(map(str, ks))


def _appliance_name(app: dict, meters: list[int]) -> str:
    t = str(app.get("type") or "unlabelled")
    inst = app.get("instance")
    inst_s = f" #{inst}" if isinstance(inst, int) and inst > 1 else ""
    return f"{t}{inst_s} (meter {', '.join(map(str, meters))})"


def plan_building(path, number: int, meta: dict) -> BuildingPlan:
    """Site meters + known appliances' meters of building `number` from its metadata dict."""
    meters = _meters(path, number, meta)
    plan = BuildingPlan(number, meta.get("original_name"), site_meters(path, number, meters), {})
    plan.device_models = {m: str(d.get("device_model") or "") for m, d in meters.items()}
    apps = [a for a in meta.get("appliances") or [] if isinstance(a, dict)]
    per_meter: dict[int, int] = {}
    for a in apps:
        for m in _app_meters(a):
            per_meter[m] = per_meter.get(m, 0) + 1
    for a in apps:
        _place(plan, a, per_meter, meters)
    if not plan.devices:
        found = ", ".join(plan.unknown + plan.shared) or "no appliance labelled in its metadata"
        raise UserError(
            f"{path}: building {number} has no appliance nilmbuild knows (found: {found[:200]}); nilmbuild reads "
            f"NILMTK types {', '.join(NILMTK_TYPES)}: pass another --building or a store that labels them"
        )
    return plan


def _app_meters(app: dict) -> list[int]:
    out = []
    for m in app.get("meters") or []:
        try:
            out.append(int(m))
        except (TypeError, ValueError):
            continue
    return out


def _place(plan: BuildingPlan, app: dict, per_meter: dict[int, int], meters: dict[int, dict]) -> None:
    """Put one appliance into plan.devices, or name it in plan.unknown / plan.shared."""
    ms = [m for m in _app_meters(app) if m in meters and not meters[m].get("disabled")]
    name = _appliance_name(app, ms or _app_meters(app))
    dev = NILMTK_TYPES.get(str(app.get("type") or "").strip().lower())
    if dev is None or not ms:
        plan.unknown.append(name)
    elif any(per_meter.get(m, 0) > 1 for m in ms):
        plan.shared.append(f"{name}: shares its meter with another appliance")
    else:
        have = plan.devices.setdefault(dev, [])
        have += [m for m in ms if m not in have]
        plan.labels.setdefault(dev, []).append(name)
