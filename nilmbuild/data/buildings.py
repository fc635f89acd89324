"""Several houses (buildings) of one source as one data set: `nilmbuild train -s nilmtk:ukdale.h5 --building 1,3,4,5`.

The rules (docs/training.md, "Several buildings"):

- each building is read on its own (`load_source(..., house=N)`, the same --start/--end for all), then resampled,
  cleaned and split train/val/test on its own timeline with the one PrepConfig, exactly as a single building is
  (`preprocess.grid_part`): the same fractions of each building's timeline (or the same --val-from/--test-from
  dates for every building), so every building is in every split and none is seen only in training;
- the scalers are fitted once, on the valid train bins of all the buildings together (`preprocess.fit_scalers`);
- windows are cut per building, so no window crosses from one building into another. Each split's continuous
  series is the buildings' series one after another with `window` invalid bins (valid=False, zeros) between two
  of them: the training's random windows (train/windows.py) never overlap invalid bins, and a seq2subseq window
  (validation, calibration, `evaluate`) is never long enough to see two buildings. A boundary is treated as a
  long gap inside one building is;
- devices: by default those metered in every building (a device some building lacks is left out, with a warning
  naming the buildings); a device asked for with --devices that a building lacks is a one-line error. Its targets
  there would be zeros, which the model would learn as "never ON", not as "unknown".
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np

from nilmbuild.data.household import DEVICE_NAMES
from nilmbuild.data.preprocess import (
    SPLITS,
    PrepConfig,
    Split,
    checked_config,
    fit_scalers,
    grid_part,
    part_stats,
    part_windows,
    prepared_from,
)
from nilmbuild.errors import DataWarning, UserError

#: Sources whose --house/--building names one of several houses.
WITH_HOUSES = ("ukdale", "refit", "redd", "nilmtk")


def several(house) -> bool:
    """Whether a --house/--building setting names several buildings (a list or tuple of numbers)."""
    return isinstance(house, (list, tuple))


def check_buildings(source: str, houses) -> tuple[int, ...]:
    """The buildings as a tuple, or a one-line UserError: a source without houses, a store that lacks some."""
    houses = tuple(int(h) for h in houses)
    kind, _, rest = source.partition(":")
    kind = kind.strip().lower()
    if kind not in WITH_HOUSES:
        raise UserError(
            f"--building {','.join(map(str, houses))}: {source} has no buildings; several buildings need a source "
            "with houses (nilmtk:PATH.h5, ukdale:PATH, refit:PATH, redd:PATH)"
        )
    if kind == "nilmtk" and Path(rest).expanduser().is_file():
        _check_store(Path(rest).expanduser(), houses)
    return houses


def _check_store(path: Path, houses: tuple[int, ...]) -> None:
    from nilmbuild.data.nilmtk_store import buildings, open_store

    with open_store(path) as f:
        found = buildings(f)
    absent = [h for h in houses if h not in found]
    if absent:
        raise UserError(
            f"{path}: no building {', '.join(map(str, absent))} (found buildings: {', '.join(map(str, found))}); "
            "pass --building with some of those, e.g. --building " + ",".join(map(str, found[:4]))
        )


def prepare_buildings(source: str, houses, cfg: PrepConfig, *, scalers: dict | None = None, devices=None, **load_kw):
    """Read and prepare every building of `houses` -> one Prepared (see the module docstring).

    devices: the devices to keep (None: every device all the buildings meter); scalers: a checkpoint's, applied
    instead of fitting (its data again: `nilmbuild calibrate`); load_kw: load_source's unit, span, days, seed."""
    from nilmbuild.data.loaders import load_source

    houses = check_buildings(source, houses)
    cfg = checked_config(cfg)
    wanted = tuple(devices) if devices else DEVICE_NAMES
    parts, metas = [], []
    for h in houses:
        hh = load_source(source, house=h, **load_kw)
        metas.append(hh.meta)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # devices a building lacks: settled by _devices below
            parts.append(grid_part(hh, dataclasses.replace(cfg, devices=wanted)))
        del hh
    devs = _devices(source, houses, parts, wanted, explicit=bool(devices))
    parts = [_keep(p, wanted, devs) for p in parts]
    cfg = dataclasses.replace(cfg, devices=devs)
    agg_scaler, app_scalers = fit_scalers(parts, cfg, scalers)
    per = [part_windows(cfg, p, agg_scaler, app_scalers) for p in parts]
    splits = join_splits(per, int(cfg.window), int(cfg.resample_s))
    stats = _stats(houses, parts, per, metas, splits)
    return prepared_from(parts[0], cfg, splits, agg_scaler, app_scalers, _meta(source, houses, metas), stats)


def _devices(source: str, houses, parts: list[dict], wanted: tuple, explicit: bool) -> tuple[str, ...]:
    """The devices every building meters, among `wanted` (not asked for: among those some building meters); an
    asked-for one that some building lacks is an error, one left out is named in a DataWarning."""
    lacking = {d: [h for h, p in zip(houses, parts) if d in p["g"]["missing"]] for d in wanted}
    if not explicit:
        lacking = {d: b for d, b in lacking.items() if len(b) < len(houses)}
    if explicit and any(lacking.values()):
        raise UserError(
            "; ".join(f"building {', '.join(map(str, b))} of {source} has no {d}" for d, b in lacking.items() if b)
            + ": leave it out of --devices or of --building (a device is trained only where every building meters it)"
        )
    devs = tuple(d for d, b in lacking.items() if not b)
    if not devs:
        raise UserError(
            f"{source}: no device nilmbuild knows is metered in every building of {', '.join(map(str, houses))}; "
            "pick other buildings"
        )
    left = [f"{d} (not in building {', '.join(map(str, b))})" for d, b in lacking.items() if b]
    if left:
        warnings.warn(
            f"{source}: left out {', '.join(left)}: a device is trained only where every building meters it",
            DataWarning,
            stacklevel=3,
        )
    return devs


def _keep(part: dict, wanted: tuple, devs: tuple) -> dict:
    """`part` with only the rows (and per-device settings) of `devs`."""
    idx = [wanted.index(d) for d in devs]
    out = dict(part, apps=part["apps"][idx], states=part["states"][idx], devices=devs)
    out["g"] = dict(part["g"], apps=part["g"]["apps"][idx], missing=[d for d in part["g"]["missing"] if d in devs])
    for k in ("min_on", "min_off"):
        out[k] = {d: part[k][d] for d in devs}
    return out


def join_splits(per: list[dict], window: int, step_s: int) -> dict:
    """Each split of every building, one after another: windows concatenated, continuous series joined with
    `window` invalid bins between two buildings (their timestamps continue the previous building's grid)."""
    out = {}
    for name in SPLITS:
        pieces = [p[name] for p in per]
        series = []
        for sp in pieces:
            if sp.timestamps.size == 0:
                continue
            if series:
                series.append(_separator(series[-1], window, step_s))
            series.append(sp)
        out[name] = Split(
            x=np.concatenate([sp.x for sp in pieces]),
            y=np.concatenate([sp.y for sp in pieces]),
            t0=np.concatenate([sp.t0 for sp in pieces]),
            **{f: np.concatenate([getattr(s, f) for s in series] or [getattr(pieces[0], f)], axis=-1) for f in _SERIES},
        )
    return out


_SERIES = ("timestamps", "aggregate_w", "appliances_w", "states", "valid")


def _separator(before: Split, window: int, step_s: int) -> Split:
    """`window` invalid bins (zeros, valid False) after `before`, on its time grid."""
    m = before.appliances_w.shape[0]
    ts = before.timestamps[-1] + np.arange(1, window + 1) * np.timedelta64(step_s, "s")
    return Split(
        x=before.x[:0],
        y=before.y[:0],
        t0=before.t0[:0],
        timestamps=ts.astype(before.timestamps.dtype),
        aggregate_w=np.zeros(window, before.aggregate_w.dtype),
        appliances_w=np.zeros((m, window), before.appliances_w.dtype),
        states=np.zeros((m, window), before.states.dtype),
        valid=np.zeros(window, bool),
    )


def _meta(source: str, houses, metas: list[dict]) -> dict:
    meta = dict(metas[0])
    meta.update(
        house=list(houses), missing=[], buildings=[m.get("building") or f"house {h}" for h, m in zip(houses, metas)]
    )
    return meta


def _stats(houses, parts: list[dict], per: list[dict], metas: list[dict], splits: dict) -> dict:
    """Each building's `part_stats` (and its split spans) under "buildings"; the whole: span, windows, samples."""
    each = []
    for h, p, sp, m in zip(houses, parts, per, metas):
        st = part_stats(p, sp)
        st["house"], st["building"] = h, m.get("building") or f"house {h}"
        st["splits"] = {
            s: ([str(x.timestamps[0]), str(x.timestamps[-1])] if x.timestamps.size else None) for s, x in sp.items()
        }
        each.append(st)
    return {
        "span": [min(s["span"][0] for s in each), max(s["span"][1] for s in each)],
        "native_samples": sum(s["native_samples"] for s in each),
        "windows": {s: int(sp.x.shape[0]) for s, sp in splits.items()},
        "missing": [],
        "buildings": each,
    }
