"""`nilmtk:PATH.h5`: one building of a NILMTK DataStore (UK-DALE's `ukdale.h5`, any NILMTK converter's output).

Layout read (PyTables, never pandas: current pandas fails on older stores' metadata):
- `/buildingN/elec/meterM/table`: a pandas "frame_table": an `index` column of UTC nanoseconds and
  `values_block_K` columns whose labels, ``[("power", "active"), ...]``, are the `values_block_K_kind` attribute;
- the `metadata` attribute of `/buildingN` (meters, site meter, appliances: `nilmbuild.data.nilmtk_meta`) and of
  the root (dataset name, meter devices with their declared sample periods).

Safety: NILMTK pickles all its metadata into HDF5 attributes, and PyTables unpickles every attribute of a node
the moment it touches the node (opening the file touches the root). While a store is open here, PyTables'
unpickler is replaced by one that refuses (`_no_unpickling`), so PyTables keeps each attribute's raw bytes (its
own fallback for pickles it cannot load); the few attributes read are then loaded by
`nilmbuild.data.safe_pickle.loads_plain`, which builds plain containers and scalars only.

Memory: each meter is read by time range (binary search on its sorted index, then chunks of `CHUNK_ROWS` rows)
and averaged onto a grid of the slowest chosen meter's sample period, as the raw UK-DALE loader does; one series'
accumulators, the output arrays and one chunk are held at a time, never a whole table.
"""

from __future__ import annotations

import contextlib
import re
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nilmbuild.data.household import Household
from nilmbuild.data.nilmtk_meta import BuildingPlan, building_label, plan_building
from nilmbuild.data.safe_pickle import RefusedPickle, loads_plain
from nilmbuild.errors import DataWarning, UserError

CHUNK_ROWS = 1 << 16
IO_BUFFER_BYTES = 1 << 20  # per open table (PyTables allocates this much for a table on its first read)
CHUNK_CACHE_BYTES = 1 << 20  # per dataset (HDF5 keeps this much of decompressed chunks; PyTables default 16 MiB)
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
NS = 1_000_000_000
#: Root metadata `name` -> nilmbuild's dataset defaults (thresholds, aggregate cutoff) in preprocessing.
DATASET_LIKE = {"ukdale": "ukdale", "ukpd": "ukdale", "refit": "refit", "redd": "redd"}
_LOCK = threading.RLock()


class _Deferred(Exception):
    """Raised by the stand-in unpickler: PyTables then keeps the attribute's raw bytes."""


class _NoPickle:
    """Stands in for the `pickle` module inside tables.attributeset while a store is open here."""

    UnpicklingError = _Deferred

    @staticmethod
    def loads(*_args, **_kw):
        raise _Deferred


@contextlib.contextmanager
def _no_unpickling():
    import tables.attributeset as tas

    with _LOCK:
        saved, tas.pickle = tas.pickle, _NoPickle
        try:
            yield
        finally:
            tas.pickle = saved


@contextlib.contextmanager
def open_store(path: Path):
    """Open `path` read-only with PyTables, attributes left as raw bytes; bad files are one-line UserErrors."""
    import tables

    _check_signature(path)
    with _no_unpickling():
        try:
            f = tables.open_file(str(path), "r", io_buffer_size=IO_BUFFER_BYTES, chunk_cache_size=CHUNK_CACHE_BYTES)
        except (tables.HDF5ExtError, OSError, ValueError) as e:
            raise UserError(
                f"{path}: damaged or truncated HDF5 file ({_first_line(e)}); re-download or re-convert it"
            ) from None
        try:
            yield f
        except (tables.HDF5ExtError, tables.NoSuchNodeError) as e:
            raise UserError(
                f"{path}: could not read the store ({_first_line(e)}); re-download or re-convert it"
            ) from None
        finally:
            f.close()


def _first_line(e: Exception) -> str:
    """The line of an HDF5 error that says what is wrong ('truncated file: eof = ...'), else its last line."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("File ", "HDF5 error back trace", "End of HDF5"))]
    hit = next((ln for ln in lines if "truncated" in ln or "signature" in ln), None)
    return (hit or (lines[-1] if lines else type(e).__name__))[:160]


def _check_signature(path: Path) -> None:
    if not path.is_file():
        raise UserError(f"{path}: not a file; pass a NILMTK DataStore (.h5) after 'nilmtk:'")
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head != HDF5_SIGNATURE:
        raise UserError(
            f"{path}: not an HDF5 file (it starts with {head!r}); pass a NILMTK DataStore (.h5) after 'nilmtk:'"
        )


def read_attr(path: Path, node, name: str, default=None):
    """Attribute `name` of `node`: native values as they are, pickled ones through the restricted unpickler."""
    attrs = node._v_attrs
    if name not in attrs._v_attrnames:
        return default
    value = getattr(attrs, name)
    if isinstance(value, (bytes, np.bytes_)) and bytes(value).endswith(b"."):
        try:
            return loads_plain(bytes(value))
        except RefusedPickle as e:
            raise UserError(
                f"{path}: the {name!r} attribute of {node._v_pathname} holds a pickle that is not plain data ({e}); "
                f"nilmbuild never runs a file's code: re-create the store with NILMTK's converters"
            ) from None
        except Exception as e:  # a pickle that is merely broken
            raise UserError(
                f"{path}: unreadable {name!r} attribute of {node._v_pathname} ({e}); re-convert the store"
            ) from None
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, np.bytes_)) else value


# ---- buildings -------------------------------------------------------------------------------------


def buildings(f) -> list[int]:
    """Building numbers of the store (groups /buildingN), ascending."""
    return sorted(int(m.group(1)) for n in f.root._v_children if (m := re.fullmatch(r"building(\d+)", n)))


def pick_building(path: Path, f, number: int | None) -> int:
    found = buildings(f)
    if not found:
        raise UserError(f"{path}: no /buildingN groups: not a NILMTK DataStore; convert the data with NILMTK first")
    if number is None:
        return found[0]
    if number not in found:
        raise UserError(
            f"{path}: no building {number} (found buildings: {', '.join(map(str, found))}); "
            f"pass --building with one of them"
        )
    return number


# ---- one meter's table -----------------------------------------------------------------------------


@dataclass
class MeterTable:
    meter: int
    table: object  # tables.Table
    columns: dict[tuple[str, str], tuple[str, int]]  # ("power", "active") -> (field, column in field)
    rows: tuple[int, int]  # [first, last) rows inside the requested time range
    period_s: int  # sample period from the index (median step)


def _meter_table(path: Path, f, building: int, meter: int):
    """The tables.Table of a meter, or None when the store has no data for it."""
    import tables

    try:
        node = f.get_node(f"/building{building}/elec/meter{meter}/table")
    except tables.NoSuchNodeError:
        return None
    if not isinstance(node, tables.Table) or "index" not in node.colnames:
        raise UserError(
            f"{path}: /building{building}/elec/meter{meter} is not a pandas table with an index "
            f"(found {type(node).__name__}); re-convert the store with NILMTK"
        )
    return node


def _columns(path: Path, table) -> dict[tuple[str, str], tuple[str, int]]:
    """Column label -> (field, position) from the values_block_K_kind attributes."""
    out = {}
    for field in table.colnames:
        if not field.startswith("values_block_"):
            continue
        kinds = read_attr(path, table, f"{field}_kind", default=[]) or []
        for i, label in enumerate(kinds):
            key = tuple(str(x) for x in label) if isinstance(label, (list, tuple)) else (str(label), "")
            out[key] = (field, i)
    return out


def _first_row_at(table, t_ns: int) -> int:
    """First row whose index is >= t_ns (binary search on the sorted index; one chunk read per step)."""
    lo, hi = 0, table.nrows
    while lo < hi:
        mid = (lo + hi) // 2
        if int(table.read(mid, mid + 1, field="index")[0]) < t_ns:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _period_s(table, r0: int, r1: int) -> int:
    """Median step of the index over the first rows of [r0, r1), in whole seconds (>= 1)."""
    idx = table.read(r0, min(r1, r0 + 4097), field="index").astype(np.int64)
    if idx.size < 2:
        return 1
    return max(1, int(round(float(np.median(np.diff(idx))) / NS)))


def open_meter(path: Path, f, building: int, meter: int, lo_ns: int | None, hi_ns: int | None):
    """The meter's table, its columns, its rows inside [lo_ns, hi_ns) and its period; None when it has no table."""
    table = _meter_table(path, f, building, meter)
    if table is None:
        return None
    r0 = 0 if lo_ns is None else _first_row_at(table, lo_ns)
    r1 = table.nrows if hi_ns is None else _first_row_at(table, hi_ns)
    return MeterTable(meter, table, _columns(path, table), (r0, r1), _period_s(table, r0, r1))


def power_columns(path: Path, mt: MeterTable) -> list[str]:
    """The power measurements the meter has, active first: ['active', 'apparent'] or a subset."""
    have = [t for t in ("active", "apparent") if ("power", t) in mt.columns]
    if not have:
        labels = ", ".join("/".join(x for x in k if x) for k in mt.columns) or "none"
        raise UserError(
            f"{path}: meter {mt.meter} has no active or apparent power column (found: {labels}); "
            f"pass another --building or a store with power data"
        )
    return have


# ---- streaming onto the grid -----------------------------------------------------------------------


def _chunks(path: Path, mt: MeterTable, measurement: str):
    """(index ns int64, values float64) per chunk of rows in mt.rows; unsorted timestamps are a UserError."""
    field, col = mt.columns[("power", measurement)]
    prev = None
    for a in range(mt.rows[0], mt.rows[1], CHUNK_ROWS):
        rows = mt.table.read(a, min(a + CHUNK_ROWS, mt.rows[1]))
        idx = rows["index"].astype(np.int64)
        v = rows[field]
        v = (v[:, col] if v.ndim == 2 else v).astype(np.float64)
        d = np.diff(idx)
        if (d < 0).any() or (prev is not None and idx.size and idx[0] < prev):
            raise UserError(f"{path}: meter {mt.meter}'s timestamps are not sorted near row {a}; re-convert the store")
        prev = int(idx[-1]) if idx.size else prev
        yield idx, v


def binned(path: Path, mt: MeterTable, measurement: str, lo_bin: int, n_bins: int, rate_s: int):
    """Mean of the meter's `measurement` power within each rate_s bin lo_bin..lo_bin+n_bins-1
    -> ((n_bins,) float32 watts, NaN where no sample; (n_bins,) bool: any sample)."""
    s = np.zeros(n_bins, np.float64)
    c = np.zeros(n_bins, np.int32)
    for idx, v in _chunks(path, mt, measurement):
        b = idx // (rate_s * NS) - lo_bin
        keep = (b >= 0) & (b < n_bins) & np.isfinite(v)
        if not keep.any():
            continue
        b, v = b[keep], v[keep]
        b0 = int(b[0])
        span = int(b[-1]) - b0 + 1
        s[b0 : b0 + span] += np.bincount(b - b0, weights=v, minlength=span)
        c[b0 : b0 + span] += np.bincount(b - b0, minlength=span).astype(np.int32)
    has = c > 0
    np.divide(s, c, out=s, where=has)  # in place: a building-long grid is tens of MB per array
    del c
    s[~has] = np.nan
    return s.astype(np.float32), has


def bin_range(mts: list[MeterTable], rate_s: int) -> tuple[int, int]:
    """(first bin, number of bins) spanning the given meters' rows."""
    firsts, lasts = [], []
    for mt in mts:
        r0, r1 = mt.rows
        if r1 > r0:
            firsts.append(int(mt.table.read(r0, r0 + 1, field="index")[0]))
            lasts.append(int(mt.table.read(r1 - 1, r1, field="index")[0]))
    lo, hi = min(firsts) // (rate_s * NS), max(lasts) // (rate_s * NS)
    return lo, hi - lo + 1


def parse_time(text: str | None, flag: str) -> int | None:
    """'2013-06-01' or '2013-06-01T12:00' (UTC) -> ns since the epoch; None stays None."""
    if not text:
        return None
    try:
        return int(np.datetime64(str(text), "ns").astype(np.int64))
    except ValueError:
        raise UserError(f"{flag} {text!r}: use YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)") from None


def plan_for(path: Path, f, building: int | None) -> tuple[BuildingPlan, dict]:
    """(the building's meter plan, the root metadata dict)."""
    number = pick_building(path, f, building)
    meta = read_attr(path, f.get_node(f"/building{number}"), "metadata", default=None)
    if not isinstance(meta, dict):
        raise UserError(f"{path}: building {number} has no metadata; convert the data with NILMTK's converters")
    root = read_attr(path, f.root, "metadata", default={}) or {}
    return plan_building(path, number, meta), root if isinstance(root, dict) else {}


def declared_period(root: dict, plan: BuildingPlan, meter: int):
    """The sample period the metadata declares for a meter's device model (None when it says none)."""
    dev = (root.get("meter_devices") or {}).get(plan.device_models.get(meter, ""))
    return dev.get("sample_period") if isinstance(dev, dict) else None


def dataset_like(root: dict) -> str:
    """'UK-DALE' -> 'ukdale' etc. (preprocessing defaults); anything else reads as a tidy CSV would."""
    name = re.sub(r"[^a-z0-9]", "", str(root.get("name") or "").lower())
    return DATASET_LIKE.get(name, "csv")


def warn_once(msg: str) -> None:
    warnings.warn(msg, DataWarning, stacklevel=4)


def household_from(timestamps_s: np.ndarray, aggregate, appliances: dict, rate_s: int, meta: dict) -> Household:
    return Household(timestamps_s.astype("datetime64[s]"), aggregate, appliances, rate_s, meta=meta).check()


__all__ = ["building_label", "open_store", "read_attr"]
