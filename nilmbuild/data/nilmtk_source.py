"""`load_nilmtk`: one building of a NILMTK DataStore -> Household (the `nilmtk:PATH.h5` source).

- aggregate: the building's site meter(s) (`nilmtk_meta.site_meters`), summed where there are two (REDD's two
  legs), each in the power it has: active, else apparent when the store has no active power values in the span;
- appliances: the meters of the appliance types in `nilmtk_meta.NILMTK_TYPES`, summed per device; other
  appliances are named in one DataWarning and in meta["unknown_appliances"];
- the grid: bins of the slowest chosen meter's sample period, taken from the index (not the metadata), over the
  site meters' span; bins with no site-meter sample are left out (as the raw UK-DALE loader does).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nilmbuild.data.household import DEVICE_NAMES
from nilmbuild.data.nilmtk_meta import BuildingPlan, building_label
from nilmbuild.data.nilmtk_store import (
    bin_range,
    binned,
    dataset_like,
    declared_period,
    household_from,
    open_meter,
    open_store,
    parse_time,
    plan_for,
    power_columns,
    warn_once,
)
from nilmbuild.errors import UserError


def load_nilmtk(path: Path, building: int | None = None, start: str | None = None, end: str | None = None):
    """Read building `building` (default: the store's first) of the NILMTK store `path` in [start, end) (UTC)."""
    path = Path(path)
    lo_ns, hi_ns = parse_time(start, "--start"), parse_time(end, "--end")
    if lo_ns is not None and hi_ns is not None and hi_ns <= lo_ns:
        raise UserError(f"--end {end} is not after --start {start}; pass an end later than the start")
    with open_store(path) as f:
        plan, root = plan_for(path, f, building)
        sites, devs = _open_meters(path, f, plan, lo_ns, hi_ns, (start, end))
        rate = max(mt.period_s for mt in [*sites, *[m for ms in devs.values() for m in ms]])
        lo_bin, n_bins = bin_range(sites, rate)
        aggregate, has, used = _aggregate(path, sites, lo_bin, n_bins, rate)
        keep = np.flatnonzero(has)
        del has
        aggregate = aggregate[keep]
        appliances = _appliances(path, plan, devs, lo_bin, n_bins, rate, keep)
        meta = _meta(path, plan, root, sites, devs, used, rate)
    keep += lo_bin
    keep *= rate  # the kept bins' unix seconds, in place
    return household_from(keep, aggregate, appliances, rate, meta)


def _open_meters(path, f, plan: BuildingPlan, lo_ns, hi_ns, span):
    """(site MeterTables, device -> MeterTables); site meters without rows in the span are an error."""
    sites = []
    for m in plan.site_meters:
        mt = open_meter(path, f, plan.number, m, lo_ns, hi_ns)
        if mt is None:
            raise UserError(f"{path}: {building_label(plan)}'s site meter {m} has no data table; re-convert the store")
        if mt.rows[1] > mt.rows[0]:
            sites.append(mt)
    if not sites:
        raise UserError(
            f"{path}: {building_label(plan)}'s site meter(s) have no samples between {span[0] or 'the start'} and "
            f"{span[1] or 'the end'}; pass other --start/--end dates"
        )
    devs = {}
    for dev, meters in plan.devices.items():
        mts = [open_meter(path, f, plan.number, m, lo_ns, hi_ns) for m in meters]
        missing = [m for m, mt in zip(meters, mts) if mt is None or mt.rows[1] <= mt.rows[0]]
        if missing:
            warn_once(f"{path}: {dev} (meter {', '.join(map(str, missing))}) has no data in this span; left out")
            continue
        devs[dev] = mts
    return sites, devs


def _aggregate(path, sites, lo_bin: int, n_bins: int, rate: int):
    """Sum of the site meters' power on the grid -> (aggregate (G,), any site sample (G,), meter -> measurement)."""
    total = np.zeros(n_bins, np.float32)
    has = np.zeros(n_bins, bool)
    used = {}
    for mt in sites:
        for measurement in power_columns(path, mt):
            mean, got = binned(path, mt, measurement, lo_bin, n_bins, rate)
            if got.any():
                break
        used[mt.meter] = measurement
        total += mean  # NaN where this mains has no sample: the sum is missing there
        has |= got
    if not has.any():
        raise UserError(f"{path}: the site meter(s) have no power values in this span; pass other --start/--end dates")
    return total, has, used


def _appliances(path, plan: BuildingPlan, devs: dict, lo_bin: int, n_bins: int, rate: int, keep: np.ndarray):
    """Device -> (K,) float32 watts on the kept bins (meters of one device summed)."""
    out = {}
    for dev in DEVICE_NAMES:
        if dev not in devs:
            continue
        total = np.zeros(keep.size, np.float32)
        for mt in devs[dev]:
            measurement = power_columns(path, mt)[0]
            total += binned(path, mt, measurement, lo_bin, n_bins, rate)[0][keep]
        if np.isnan(total).all():
            warn_once(f"{path}: {dev} has no samples at the site meter's times; left out")
            continue
        out[dev] = total
    if not out:
        raise UserError(
            f"{path}: {building_label(plan)}: none of {', '.join(plan.devices)} has data at the site meter's times; "
            f"pass another --building or other --start/--end dates"
        )
    return out


def _meta(path, plan: BuildingPlan, root: dict, sites, devs: dict, used: dict, rate: int) -> dict:
    periods = {mt.meter: mt.period_s for mt in [*sites, *[m for ms in devs.values() for m in ms]]}
    declared = {m: declared_period(root, plan, m) for m in periods}
    unknown = plan.unknown + plan.shared
    if unknown:
        warn_once(f"{path}: ignoring appliance(s) no device maps to: {', '.join(unknown)[:300]}")
    return {
        "dataset": "nilmtk",
        "like": dataset_like(root),
        "house": plan.number,
        "building": building_label(plan),
        "original_name": plan.original_name,
        "source": str(path),
        "channels": {d: plan.labels[d] for d in devs},
        "site_meters": used,
        "periods_s": periods,
        "declared_periods_s": {m: p for m, p in declared.items() if p is not None and p != periods[m]},
        "unknown_appliances": unknown,
    }


def nilmtk_notes(meta: dict) -> list[str]:
    """Summary lines for `nilmbuild data`: building, aggregate measurement, periods, appliances read and left out."""
    mains = ", ".join(f"meter {m} {t} power" for m, t in meta["site_meters"].items())
    no_active = any(t != "active" for t in meta["site_meters"].values())
    lines = [
        f"store         {meta['building']}; aggregate = {mains}"
        + (" (no active power values in this span)" if no_active else ""),
        "periods       from the index: " + ", ".join(f"meter {m} {p} s" for m, p in meta["periods_s"].items()),
        "appliances    " + "; ".join(f"{d} = {', '.join(v)}" for d, v in meta["channels"].items()),
    ]
    if meta["declared_periods_s"]:
        lines.append(
            "              metadata declares "
            + ", ".join(f"meter {m} {p} s" for m, p in meta["declared_periods_s"].items())
            + " (ignored: the index wins)"
        )
    if meta["unknown_appliances"]:
        lines.append("ignored       appliances no device maps to: " + ", ".join(meta["unknown_appliances"]))
    return lines
