"""Data exactly as a checkpoint was trained on: one home for the way from a data source to model input.

Training writes the data settings into the checkpoint's provenance (`training_provenance`); everything that
runs a checkpoint later (`nilmbuild evaluate`, `disaggregate`, `calibrate`, `capture`, `site`) reads them back
(`data_settings`) and prepares the data the same way (`load_household_for` + `prepare_for`, or both at once
`load_data_for`), always with the checkpoint's own scalers. `nilmbuild.infer` only runs the model on what
this module prepares.

Checkpoint provenance read here (all optional; missing -> the simulator with PrepConfig defaults):

    provenance = {"source": "synthetic" | "csv:PATH" | ..., "house": int | [int, ...] | None,
                  "start": str | None, "end": str | None, # --start/--end the run was trained with
                  "days": int, "seed": int,              # simulator only
                  "columns": {...} | None,               # CSV/REFIT column map
                  "unit": "W" | "kW" | None,             # --unit the run was trained with (None: W)
                  "prep": {PrepConfig fields}}           # split / resample settings used in training

The data settings are passed explicitly (the commands' --unit, --start/--end go in as `unit=`, `span=`); none is
a global. A list "house" is a run over several buildings (nilmbuild.data.buildings), recorded building by
building under "buildings"; running such a checkpoint on one building takes --building N.
    (the same keys nested under provenance["data"] are accepted too; "prep_config" is an alias of "prep")

The scalers always come from the checkpoint (passed to prepare(..., scalers=) and used directly for the
model input); prepare() resamples, cleans, splits and computes the ground-truth ON states.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
import warnings

import numpy as np

from nilmbuild.errors import UserError

__all__ = [
    "data_settings",
    "load_data_for",
    "load_household_for",
    "load_training_data",
    "model_input",
    "nilmtk_source_for",
    "prepare_for",
    "thresholds_for",
    "train_means_w",
    "training_provenance",
    "truth_w",
]


# ---- training: the data a run trains on, and what it records about it ------------------------------


def load_training_data(
    source: str,
    *,
    window: int,
    house: int | tuple[int, ...] | None = None,
    days: int = 60,
    seed: int = 0,
    devices=None,
    val_from: str | None = None,
    test_from: str | None = None,
    scaler: str = "max",
    prep: dict | None = None,
    unit: str | None = None,
    span: tuple | None = None,
):
    """Load and prepare a training run's data -> Prepared (scalers fitted on its train split).

    house: one house/building, or several (a tuple: nilmbuild.data.buildings, one data set over all of them).
    devices: None -> every device the source has a channel for (several buildings: that all of them have).
    prep: PrepConfig overrides. unit: of CSV power columns whose name has none (None: W)."""
    from nilmbuild.data.buildings import prepare_buildings, several
    from nilmbuild.data.household import DEVICE_NAMES
    from nilmbuild.data.loaders import load_source
    from nilmbuild.data.preprocess import PrepConfig, prepare

    unknown = [d for d in devices or () if d not in DEVICE_NAMES]
    if unknown:
        raise UserError(f"unknown device(s) {', '.join(unknown)}; use some of {', '.join(DEVICE_NAMES)}")
    kw = {"window": window, "stride": window // 2, "val_from": val_from, "test_from": test_from, "scaler": scaler}
    kw.update(appliance_scaler="max", **(prep or {}))
    if several(house):
        cfg = PrepConfig(**kw)
        prepared = prepare_buildings(source, house, cfg, devices=devices, unit=unit, span=span, days=days, seed=seed)
    else:
        hh = load_source(source, house=house, days=days, seed=seed, unit=unit, span=span)
        devs = tuple(devices) if devices else tuple(d for d in DEVICE_NAMES if d in hh.appliances)
        if not devs:
            raise UserError(f"{source}: no appliance channel to train on")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prepared = prepare(hh, PrepConfig(**{"devices": devs, **kw}))
    if prepared.train.x.shape[0] == 0:
        raise UserError(
            f"{source}: the train split has no {window}-step windows; use more data (--days) or other split dates"
        )
    return prepared


def training_provenance(
    prepared,
    *,
    source: str,
    house: int | tuple[int, ...] | None,
    days: int,
    seed: int,
    unit: str | None = None,
    span: tuple | None = None,
    command: str = "",
) -> dict:
    """What a checkpoint records about its data: everything `data_settings` reads back, plus the split spans (several
    buildings: each building's under "buildings", with its span, split spans and windows)."""
    from nilmbuild import __version__

    start, end = tuple(span) if span else (None, None)
    buildings = prepared.stats.get("buildings")
    return {
        "source": source,
        "house": list(house) if isinstance(house, (list, tuple)) else house,
        "start": start,
        "end": end,
        "days": days if source == "synthetic" else None,
        "seed": seed,
        "columns": None,
        "unit": unit,
        "prep": prepared.config,
        "span": prepared.stats.get("span"),
        "unknown_columns": prepared.meta.get("unknown_columns") or [],
        "splits": None if buildings else _split_spans(prepared.splits),
        **({"buildings": [_building_record(b) for b in buildings]} if buildings else {}),
        "windows": prepared.stats.get("windows"),
        "dataset": prepared.meta.get("dataset"),
        "command": command or " ".join(shlex.quote(a) for a in sys.argv),
        "nilmbuild_version": __version__,
    }


def _split_spans(splits: dict) -> dict:
    return {
        s: ([str(sp.timestamps[0]), str(sp.timestamps[-1])] if sp.timestamps.size else None) for s, sp in splits.items()
    }


def _building_record(stats: dict) -> dict:
    """One building of a several-building run, as its provenance records it."""
    keys = ("house", "building", "span", "splits", "windows", "native_samples", "native_rate_s")
    return {k: stats.get(k) for k in keys}


# ---- a checkpoint: the same data again -------------------------------------------------------------


def data_settings(provenance: dict | None) -> dict:
    """Normalised data settings recorded in a checkpoint's provenance (see module docstring)."""
    p = dict(provenance or {})
    if isinstance(p.get("data"), dict):
        p = {**p["data"], **{k: v for k, v in p.items() if k != "data"}}
    src = p.get("source") or "synthetic"
    if isinstance(src, dict):
        src = src.get("spec") or src.get("source") or "synthetic"
    prep = p.get("prep") or p.get("prep_config") or {}
    return {
        "source": str(src),
        "house": p.get("house"),
        "days": int(p.get("days") or 60),
        "seed": int(p.get("seed") or 0),
        "columns": p.get("columns") or None,
        "unit": p.get("unit") or None,
        "prep": dict(prep),
        "start": p.get("start"),
        "end": p.get("end"),
    }


def _prep_config(prep: dict, **override):
    from nilmbuild.data.preprocess import PrepConfig

    names = {f.name for f in dataclasses.fields(PrepConfig)}
    kw = {k: v for k, v in {**prep, **override}.items() if k in names}
    for k in ("fractions", "devices"):
        if k in kw and kw[k] is not None:
            kw[k] = tuple(kw[k])
    return PrepConfig(**kw)


def load_data_for(loaded, source: str | None = None, house: int | None = None, *, whole: bool = False, **request):
    """Load and prepare the data a checkpoint is evaluated / run on -> Prepared.

    request: load_household_for's keywords (days, seed, date_from, date_to, unit, span); source/house/unit/span
    default to the checkpoint's provenance; the split settings always come from it.
    whole=True puts the entire (date-filtered) series into the "train" split (for `disaggregate`).
    A checkpoint trained on several buildings, run on its own source without --building, gets them all again
    (`nilmbuild calibrate`, or `evaluate` over the test parts of all of them): _buildings_again.
    """
    s = data_settings(getattr(loaded, "provenance", {}))
    if house is None and (source is None or source == s["source"]) and _several(s["house"]):
        if whole or request.get("date_from") or request.get("date_to"):
            raise UserError(_pick_one(s))
        again = {k: request.get(k) for k in ("unit", "span", "days", "seed")}
        return _buildings_again(loaded, s, **again)
    return prepare_for(loaded, load_household_for(loaded, source, house, **request), whole=whole)


def _several(house) -> bool:
    from nilmbuild.data.buildings import several

    return several(house)


def _pick_one(s: dict) -> str:
    return (
        f"the checkpoint was trained on buildings {', '.join(map(str, s['house']))} of {s['source']}: pass "
        "--building N to pick one (one of them, or another building of the store, e.g. the held-out one)"
    )


def _buildings_again(loaded, s: dict, *, unit, span, days, seed):
    """A several-building checkpoint's own data again, with its split settings, window and scalers."""
    from nilmbuild.data.buildings import prepare_buildings

    cfg = getattr(loaded, "cfg", None)
    pc = _prep_config(s["prep"], **({"window": cfg.window} if cfg is not None else {}))
    prepared = prepare_buildings(
        s["source"],
        s["house"],
        pc,
        scalers=getattr(loaded, "scalers", None) or None,
        devices=pc.devices,
        columns=s["columns"],
        unit=unit or s["unit"],
        span=_span_for(s, True, span),
        days=days if days is not None else s["days"],
        seed=seed if seed is not None else s["seed"],
    )
    if getattr(cfg, "exo_variables", None) is not None:
        _own_time_features(loaded, prepared)
    return prepared


def load_household_for(
    loaded,
    source: str | None = None,
    house: int | None = None,
    *,
    days: int | None = None,
    seed: int | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    unit: str | None = None,
    span: tuple | None = None,
):
    """The raw Household behind load_data_for (source/house/unit/days/seed default to the checkpoint's provenance;
    house, columns and unit only when the source is the checkpoint's own). span: (start, end) as the command's
    --start/--end gave them, None when it gave neither: then the span the checkpoint was trained on, when the
    source and house are its own (`_span_for`)."""
    from nilmbuild.data.loaders import load_source

    s = data_settings(getattr(loaded, "provenance", {}))
    same = source is None or source == s["source"]
    spec = s["source"] if source is None else source
    unit = unit or (s["unit"] if same else None)
    house = house if house is not None else (s["house"] if same else None)
    if _several(house):
        raise UserError(_pick_one(s))
    hh = load_source(
        spec,
        house=house,
        columns=s["columns"] if same else None,
        unit=unit,
        days=days if days is not None else s["days"],
        seed=seed if seed is not None else s["seed"],
        span=_span_for(s, same and house == s["house"], span),
    )
    from nilmbuild.data.household import between

    return between(hh, date_from, date_to) if (date_from or date_to) else hh


def nilmtk_source_for(loaded, source: str | None = None, house: int | None = None, span: tuple | None = None):
    """(path, building, span) of the `nilmtk:` store load_household_for would read, or None for other sources
    (`nilmbuild disaggregate` reads such a store range by range instead)."""
    s = data_settings(getattr(loaded, "provenance", {}))
    same = source is None or source == s["source"]
    spec = s["source"] if source is None else source
    kind, _, rest = spec.partition(":")
    if kind.strip().lower() != "nilmtk" or not rest:
        return None
    building = house if house is not None else (s["house"] if same else None)
    if _several(building):
        raise UserError(_pick_one(s))
    return rest, building, _span_for(s, same and building == s["house"], span)


def _span_for(s: dict, same: bool, given: tuple | None) -> tuple:
    """--start/--end when given, else the span the checkpoint was trained on (same source and house only), else
    all of the data."""
    if given and (given[0] or given[1]):
        return tuple(given)
    return (s["start"], s["end"]) if same else (None, None)


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
        prepared = prepare(hh, _prep_config(s["prep"], **over), scalers=getattr(loaded, "scalers", None) or None)
    if getattr(cfg, "exo_variables", None) is not None:
        _own_time_features(loaded, prepared)
    return prepared


def _own_time_features(loaded, prepared) -> None:
    """Give every split's windows the checkpoint architecture's own time features (an upstream config's
    list_exo_variables: 1 + E channels, E = 8 for CondiNILM's minute, hour, dow, month) in place of the spec's."""
    step = np.timedelta64(int(prepared.resample_s), "s")
    for sp in prepared.splits.values():
        n, _, w = sp.x.shape
        stamps = sp.t0.astype("datetime64[s]")[:, None] + np.arange(w) * step  # (N, W)
        feats = time_features_for(loaded, stamps.reshape(-1))  # (E, N W)
        feats = feats.reshape(feats.shape[0], n, w).transpose(1, 0, 2)
        sp.x = np.concatenate([sp.x[:, :1], feats.astype(np.float32)], axis=1)


# ---- model input and ground truth of a continuous series -------------------------------------------


def model_input(loaded, timestamps: np.ndarray, aggregate_w: np.ndarray) -> np.ndarray:
    """(T,) timestamps + aggregate watts -> (1 + E, T) float32 model input, scaled with the checkpoint's
    aggregate scaler, with its architecture's time features (time_features_for; E = 6 for the spec)."""
    from nilmbuild.data.preprocess import scaler_from_dict

    sc = (loaded.scalers or {}).get("aggregate")
    if not sc:
        raise UserError(f"checkpoint {getattr(loaded, 'path', '')} has no scalers: write it with `nilmbuild train`")
    agg = scaler_from_dict(sc).transform(np.asarray(aggregate_w, dtype=np.float64)).astype(np.float32)
    return np.concatenate([agg[None], time_features_for(loaded, np.asarray(timestamps))], axis=0).astype(np.float32)


def time_features_for(loaded, timestamps: np.ndarray) -> np.ndarray:
    """The time-feature channels of the checkpoint's architecture: the spec's 6 (data.preprocess.exogenous), or
    an upstream config's list_exo_variables as its dataset computes them (model/upstream/inputs.py)."""
    from nilmbuild.data.preprocess import exogenous

    exo = getattr(getattr(loaded, "cfg", None), "exo_variables", None)  # a Prepared (training's calibration): the spec
    if exo is None:
        return exogenous(timestamps)
    from nilmbuild.model.upstream.inputs import time_features

    return time_features(timestamps, exo)


def truth_w(prepared, split, devices):
    """(D, T) ground truth watts and states in `devices` order (zeros for devices the data lacks)."""
    T = split.timestamps.shape[0]
    y, st = np.zeros((len(devices), T), np.float32), np.zeros((len(devices), T), np.uint8)
    for i, d in enumerate(devices):
        if d in prepared.devices:
            j = list(prepared.devices).index(d)
            y[i], st[i] = split.appliances_w[j], split.states[j]
    return y, st


def thresholds_for(prepared, devices) -> dict:
    """ON thresholds (W) per device: the prepared data's, else nilm-facts' defaults, else 10 W."""
    from nilmbuild.data.preprocess import THRESHOLDS_W

    thr = getattr(prepared, "thresholds_w", None) or {}
    return {d: float(thr.get(d, THRESHOLDS_W.get(d, 10.0))) for d in devices}


def train_means_w(prepared, devices) -> dict:
    """Each device's mean power (W) over the valid bins of the train split (the baseline)."""
    tr = prepared.splits["train"]
    y, _ = truth_w(prepared, tr, devices)
    v = tr.valid.astype(bool)
    return {d: float(y[i][v].mean()) if v.any() else 0.0 for i, d in enumerate(devices)}
