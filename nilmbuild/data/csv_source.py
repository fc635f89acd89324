"""Tidy CSVs and REFIT's cleaned CSVs: sniffed delimiter and decimal mark, columns mapped to devices by name or
`--columns`, power units from the column names or `--unit`.

Every problem with a file (malformed line, non-numeric value, duplicate or unsorted timestamps, empty file,
all-missing column, no usable appliance) raises a one-line `UserError` naming the file (and line) and what to do.
"""

from __future__ import annotations

import csv
import gzip
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nilmbuild.data.household import DEVICE_NAMES, Household, device_for_label, normalise_label
from nilmbuild.data.raw_channels import F32_MAX, check_increasing
from nilmbuild.errors import DataWarning, UserError
from nilmbuild.units import UNITS

if TYPE_CHECKING:
    import pandas as pd  # imported where a file is read: the simulator (the default source) never needs it

#: REFIT "CLEAN_HouseN.csv" Appliance1..9 -> label, per house (from the REFIT dataset's readme).
#: Houses not listed here need an explicit map, e.g. --columns Appliance8=kettle,Appliance5=microwave.
REFIT_APPLIANCES: dict[int, tuple[str, ...]] = {
    2: (
        "Fridge-Freezer",
        "Washing Machine",
        "Dishwasher",
        "Television Site",
        "Microwave",
        "Toaster",
        "Hi-Fi",
        "Kettle",
        "Overhead Fan",
    ),
}

TIME_NAMES = ("time", "timestamp", "datetime", "date", "unix", "localminute", "utc")
AGGREGATE_NAMES = ("aggregate", "mains", "main", "total", "use", "power", "site_meter")

#: Field delimiters a CSV is sniffed for, in order of preference on a tie.
DELIMITERS = (",", ";", "\t", "|")
_DELIM_NAME = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}
#: Unit suffix of a column name: "Aggregate_kW", "kettle (kW)", "Kettle [W]", "mains kw".
_UNIT_SUFFIX = re.compile(r"^(?P<base>.+?)(?:[\s_\-]*[(\[]|[\s_\-]+)\s*(?P<unit>kw|w)\s*[)\]]?\s*$", re.IGNORECASE)


def _csv_files(path: Path, pattern: str = "*.csv*") -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(p for p in path.glob(pattern) if p.suffix in (".csv", ".gz") and p.is_file())
    if not files:
        raise UserError(f"{path}: no .csv or .csv.gz files in this folder; point at a CSV file or a folder of them")
    return files


def _peek_lines(path: Path, n: int = 50) -> list[str]:
    """The first `n` non-blank lines (for sniffing); [] when the file cannot be read as text."""
    opener = gzip.open if path.suffix == ".gz" else open
    out: list[str] = []
    try:
        with opener(path, "rt", newline="", errors="replace") as f:
            for line in f:
                if line.strip():
                    out.append(line.rstrip("\r\n"))
                    if len(out) >= n:
                        break
    except (OSError, EOFError):
        return []
    return out


def sniff_dialect(lines: list[str]) -> tuple[str, str]:
    """(delimiter, decimal mark) of a CSV from its first lines: the delimiter that splits the header
    into the most fields that the rows repeat; a decimal comma when the delimiter is not ',' and
    numbers look like '12,5' (never when any look like '12.5')."""
    if not lines:
        return ",", "."
    header, rows = lines[0], lines[1:]

    def score(d: str) -> tuple[int, int]:
        h = header.count(d)
        return (-1, 0) if h == 0 else (sum(r.count(d) == h for r in rows), h)

    sep = max(DELIMITERS, key=score)
    if header.count(sep) == 0:
        sep = ","
    decimal = "."
    if sep != ",":
        cells = [c.strip().strip('"') for r in rows for c in r.split(sep)]
        if any(re.fullmatch(r"[-+]?\d+,\d+", c) for c in cells) and not any(
            re.fullmatch(r"[-+]?\d*\.\d+", c) for c in cells
        ):
            decimal = ","
    return sep, decimal


def _field_error(path: Path, lineno: int, header_line: str, row_line: str, sep: str) -> UserError:
    """The one-line error for a row whose field count differs from the header's, naming the delimiter
    when that is the cause (the row splits into the header's fields with another delimiter)."""
    n_h = len(next(csv.reader([header_line], delimiter=sep), []))
    n_r = len(next(csv.reader([row_line], delimiter=sep), []))
    for d in DELIMITERS:
        if d != sep and n_h > 1 and len(next(csv.reader([row_line], delimiter=d), [])) == n_h:
            return UserError(
                f"{path}:{lineno}: fields separated by {_DELIM_NAME[d]} but the header by "
                f"{_DELIM_NAME[sep]} (mixed delimiters); re-export the file with one delimiter"
            )
    if sep == "," and n_h > 1 and n_r == 1 + 2 * (n_h - 1) and re.search(r"\d,\d", row_line):
        return UserError(
            f"{path}:{lineno}: {n_r} fields but the header has {n_h} (malformed CSV row), as if "
            f"decimal commas split every number; re-export with ';' between fields or '.' as the decimal mark"
        )
    return UserError(
        f"{path}:{lineno}: {n_r} fields but the header has {n_h} "
        f"(separated by {_DELIM_NAME[sep]}; malformed CSV row); fix the row"
    )


def _check_fields(path: Path, lines: list[str], sep: str) -> None:
    """Raise the delimiter error early when one of the first rows has another field count than the header
    (pandas would silently pad short rows with NaN)."""
    if not lines:
        return
    n_h = len(next(csv.reader([lines[0]], delimiter=sep), []))
    for i, row in enumerate(lines[1:], 2):
        if len(next(csv.reader([row], delimiter=sep), [])) != n_h:
            err = _field_error(path, i, lines[0], row, sep)
            if "mixed delimiters" in str(err) or "decimal commas" in str(err):
                raise err
            return  # other malformed rows: reported where pandas finds them


def _read_csv(path: Path) -> pd.DataFrame:
    """Read one CSV (optionally .gz) as strings-or-numbers, header required. The delimiter (',', ';',
    tab, '|') and decimal mark ('.' or ',') are sniffed from the first lines (`df.attrs["dialect"]`)."""
    import pandas as pd

    lines = _peek_lines(path)
    sep, decimal = sniff_dialect(lines)
    _check_fields(path, lines, sep)
    try:
        df = pd.read_csv(path, sep=sep, decimal=decimal, low_memory=False)
    except pd.errors.EmptyDataError:
        raise UserError(f"{path}: file is empty; remove it or re-export it with a header and data rows") from None
    except pd.errors.ParserError as e:
        _scan_csv_fields(path, sep)
        m = re.search(r"line (\d+)", str(e))
        where = f":{m.group(1)}" if m else ""
        raise UserError(
            f"{path}{where}: malformed CSV row ({str(e).splitlines()[-1].strip()[:80]}); fix the row"
        ) from None
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise UserError(f"{path}: cannot read as CSV ({type(e).__name__}: {str(e)[:60]}); check the file") from None
    if df.shape[0] == 0:
        raise UserError(f"{path}: no data rows; remove the file or add data")
    if not isinstance(df.index, pd.RangeIndex):  # pandas turns surplus fields into an index
        _scan_csv_fields(path, sep)
        raise UserError(f"{path}: malformed CSV (rows do not match the header); check the file")
    df.attrs["dialect"] = {"delimiter": sep, "decimal": decimal}
    return df


def _scan_csv_fields(path: Path, sep: str = ",") -> None:
    """Raise a UserError for the first row whose field count differs from the header's (slow path)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="", errors="replace") as f:
        header_line = None
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if header_line is None:
                header_line, n_h = line, len(next(csv.reader([line], delimiter=sep)))
            elif len(next(csv.reader([line], delimiter=sep))) != n_h:
                raise _field_error(path, lineno, header_line, line, sep)


def _numeric(path: Path, df: pd.DataFrame, col: str) -> np.ndarray:
    """Column -> float64; empty cells are NaN, anything else non-numeric is an error with its line."""
    import pandas as pd

    s = df[col]
    if pd.api.types.is_numeric_dtype(s):
        return _finite(path, s, s.to_numpy(dtype=np.float64), col)
    v = pd.to_numeric(s, errors="coerce")
    bad = v.isna() & s.notna() & (s.astype(str).str.strip() != "")
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        hint = (
            " (a decimal comma? use '.' as the decimal mark, or ';' between fields)"
            if re.fullmatch(r"\s*[-+]?\d+,\d+\s*", str(s.iloc[i]))
            else ""
        )
        raise UserError(
            f"{path}:{i + 2}: non-numeric value {str(s.iloc[i])[:30]!r} in column {col!r}{hint}; fix it or leave the cell empty"
        )
    return _finite(path, s, v.to_numpy(dtype=np.float64), col)


def _finite(path: Path, s: pd.Series, a: np.ndarray, col: str) -> np.ndarray:
    """inf (e.g. 'inf', '1e999', or beyond float32) is no power reading: an error with its line (NaN = missing is fine)."""
    bad = np.flatnonzero(~(np.abs(a) <= F32_MAX) & ~np.isnan(a))
    if bad.size:
        i = int(bad[0])
        raise UserError(
            f"{path}:{i + 2}: infinite value {str(s.iloc[i])[:30]!r} in column {col!r}; fix it or leave the cell empty"
        )
    return a


def _times(path: Path, df: pd.DataFrame, col: str) -> np.ndarray:
    """Time column (ISO text, or unix seconds when numeric) -> int64 unix seconds, UTC."""
    import pandas as pd

    s = df[col]
    if pd.api.types.is_numeric_dtype(s):
        if s.isna().any():
            i = int(np.flatnonzero(s.isna().to_numpy())[0])
            raise UserError(f"{path}:{i + 2}: missing timestamp in column {col!r}; fill or delete the row")
        sec = s.to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~(np.abs(sec) < 1e11))  # inf, or beyond year 5000: not unix seconds
        if bad.size:
            i = int(bad[0])
            raise UserError(
                f"{path}:{i + 2}: bad timestamp {str(s.iloc[i])[:30]!r} in column {col!r}; use YYYY-MM-DD HH:MM:SS (UTC) or unix seconds"
            )
        return np.floor(sec).astype(np.int64)
    t = pd.to_datetime(s, errors="coerce", utc=True, format="ISO8601")
    if t.isna().any():
        i = int(np.flatnonzero(t.isna().to_numpy())[0])
        raise UserError(
            f"{path}:{i + 2}: bad timestamp {str(s.iloc[i])[:30]!r} in column {col!r}; use YYYY-MM-DD HH:MM:SS (UTC) or unix seconds"
        )
    return t.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy().astype("datetime64[s]").astype(np.int64)


def _map_columns(path: Path, cols: list[str], columns: dict[str, str] | None) -> dict[str, str]:
    """Column name -> 'time' | 'aggregate' | device. Explicit map first, then auto-map by normalised
    names (a unit suffix such as '_kW' or ' (W)' is ignored); *_status columns and unknown names are
    left out (see `_unknown_columns`)."""
    columns = dict(columns or {})
    for c in columns:
        if c not in cols:
            raise UserError(f"{path}: --columns names {c!r}, which is not a column (columns: {', '.join(cols)[:120]})")
    out = dict(columns)
    taken = set(columns.values())
    for c in cols:
        if c in out or normalise_label(c).endswith("status"):
            continue
        n = normalise_label(_unit_split(c)[0])
        role = "time" if n in TIME_NAMES else "aggregate" if n in AGGREGATE_NAMES else device_for_label(n)
        if role and role not in taken:
            out[c] = role
            taken.add(role)
    roles = set(out.values())
    if "time" not in roles:
        raise UserError(f"{path}: no time column (looked for {', '.join(TIME_NAMES)}); name it with --columns COL=time")
    if "aggregate" not in roles:
        raise UserError(
            f"{path}: no aggregate column (looked for {', '.join(AGGREGATE_NAMES)}); name it with --columns COL=aggregate"
        )
    return out


def _unit_split(col: str) -> tuple[str, str | None]:
    """'Aggregate_kW' -> ('Aggregate', 'kW'); 'kettle (W)' -> ('kettle', 'W'); 'Kettle' -> ('Kettle', None)."""
    m = _UNIT_SUFFIX.match(col)
    if not m:
        return col, None
    return m.group("base"), "kW" if m.group("unit").lower() == "kw" else "W"


def _unknown_columns(df: pd.DataFrame, mapping: dict[str, str]) -> list[str]:
    """Columns no role maps to, leaving out *_status flags, extra time columns, REFIT's 'Issues' and
    the empty 'Unnamed: N' column a trailing delimiter makes."""
    out = []
    for c in df.columns:
        n = normalise_label(_unit_split(str(c))[0])
        if c in mapping or n.endswith("status") or n in TIME_NAMES or n == "issues":
            continue
        if str(c).startswith("Unnamed:") and df[c].isna().all():
            continue
        out.append(str(c))
    return out


def _clip_negative(values: dict[str, np.ndarray]) -> dict[str, int]:
    """Set negative readings to 0 in place; column -> how many were clipped (only columns with any)."""
    counts = {}
    for name, v in values.items():
        neg = v < 0  # NaN compares False: missing stays missing
        if neg.any():
            counts[name] = int(neg.sum())
            v[neg] = 0.0
    return counts


def load_notes(meta: dict) -> list[str]:
    """Summary lines (same layout as `nilmbuild.data.preprocess.summary`) for what loading changed or
    left out: negative readings clipped, kW columns scaled, unknown columns ignored. [] when none."""
    lines = []
    neg = meta.get("negative_clipped") or {}
    if neg:
        lines.append(
            f"negative      {sum(neg.values()):,} readings clipped to 0 W ("
            + ", ".join(f"{k} {v:,}" for k, v in neg.items())
            + ")"
        )
    if meta.get("units"):
        lines.append("units         kW -> W: " + ", ".join(meta["units"]))
    if meta.get("unknown_columns"):
        lines.append("ignored       columns no device maps to: " + ", ".join(meta["unknown_columns"]))
    if meta.get("dataset") == "nilmtk":
        from nilmbuild.data.nilmtk_source import nilmtk_notes

        lines += nilmtk_notes(meta)
    return lines


def _load_csv_files(
    files: list[Path],
    columns: dict[str, str] | None,
    dataset: str,
    source: Path,
    meta: dict | None = None,
    unit: str | None = None,
) -> Household:
    """Read, map and concatenate CSV files (in name order) into one Household.

    Power columns are scaled to watts (unit from the column name, else `unit`, else W); negative
    readings are clipped to 0 with one warning (counts in meta["negative_clipped"]); columns that no
    device maps to are named in one warning and meta["unknown_columns"]."""
    if unit is not None and unit not in UNITS:
        raise UserError(f"--unit {unit!r}: use one of {', '.join(UNITS)}")
    mapping, unknown, parts = _read_csv_parts(files, columns)
    inv = {role: col for col, role in mapping.items()}
    units = {col: _unit_split(col)[1] or unit or "W" for col, role in mapping.items() if role != "time"}
    aggregate, appliances = _watts(parts, mapping, units, source)
    negative = _clip_negative({inv["aggregate"]: aggregate, **{inv[d]: v for d, v in appliances.items()}})
    kw = [c for c, u in units.items() if u == "kW"]
    _warn_suspect(source, negative, unknown, aggregate, inv["aggregate"], guess_kw=not kw and unit is None)
    sec = np.concatenate(parts["time"])
    rate = int(np.median(np.diff(sec))) if sec.size > 1 else 1
    like = next((d for d in ("refit", "ukdale", "redd") if d in normalise_label(str(source))), None)
    info = {
        "dataset": dataset,
        "house": None,
        "source": str(source),
        "like": like or dataset,
        "columns": dict(mapping),
        "negative_clipped": negative,
        "unknown_columns": unknown,
        "units": kw,
    }
    info.update(meta or {})
    return Household(sec.astype("datetime64[s]"), aggregate, appliances, max(rate, 1), meta=info)


def _read_csv_parts(files: list[Path], columns: dict[str, str] | None) -> tuple[dict, list[str], dict]:
    """Read each file and map its header -> (column->role mapping, unknown columns, {role: [array per file]}).

    Every file must have the same header and start after the previous one ends."""
    parts: dict[str, list[np.ndarray]] = {"time": []}
    mapping, unknown = None, []
    prev_last, prev_file = None, None
    for f in files:
        df = _read_csv(f)
        m = _map_columns(f, list(df.columns), columns)
        if mapping is not None and m != mapping:
            raise UserError(f"{f}: columns differ from {files[0].name}; give all files the same header")
        mapping = m
        unknown += [c for c in _unknown_columns(df, m) if c not in unknown]
        sec = _times(f, df, {role: col for col, role in m.items()}["time"])
        check_increasing(f, sec, first_line=2)
        if prev_last is not None and sec[0] <= prev_last:
            raise UserError(
                f"{f}:2: starts at or before the end of {prev_file.name}; files must cover "
                f"consecutive periods (remove overlaps or duplicate files)"
            )
        prev_last, prev_file = sec[-1], f
        parts["time"].append(sec)
        for col, role in m.items():
            if role == "aggregate" or role in DEVICE_NAMES:
                parts.setdefault(role, []).append(_numeric(f, df, col))
    return mapping, unknown, parts


def _watts(parts: dict, mapping: dict, units: dict, source: Path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Concatenate and scale the aggregate and each device's parts to float32 watts; refuse all-missing columns."""
    inv = {role: col for col, role in mapping.items()}

    def column(role: str) -> np.ndarray:
        return (np.concatenate(parts[role]) * UNITS[units[inv[role]]]).astype(np.float32)

    aggregate = column("aggregate")
    if np.isnan(aggregate).all():
        raise UserError(
            f"{source}: column {inv['aggregate']!r} has no values (all missing); map another column with --columns COL=aggregate"
        )
    appliances = {}
    for dev in DEVICE_NAMES:
        if dev in parts:
            appliances[dev] = column(dev)
            if np.isnan(appliances[dev]).all():
                raise UserError(
                    f"{source}: column {inv[dev]!r} ({dev}) has no values (all missing); drop the column or fix the export"
                )
    if not appliances:
        raise UserError(f"{source}: no appliance columns recognised; map them with --columns COL=kettle,...")
    return aggregate, appliances


def _warn_suspect(source, negative: dict, unknown: list[str], aggregate: np.ndarray, agg_col: str, guess_kw: bool):
    """One DataWarning each for clipped negatives, ignored columns, and an aggregate that looks like kW."""
    if negative:
        warnings.warn(
            f"{source}: {sum(negative.values()):,} negative readings clipped to 0 W ("
            + ", ".join(f"{k} {v:,}" for k, v in negative.items())
            + "); check the meter's sign",
            DataWarning,
            stacklevel=4,
        )
    if unknown:
        warnings.warn(
            f"{source}: ignoring column(s) no device maps to: {', '.join(unknown)}; map one with "
            f"--columns COL=kettle (devices: {', '.join(DEVICE_NAMES)})",
            DataWarning,
            stacklevel=4,
        )
    if guess_kw and np.nanpercentile(aggregate, 99) < 30:
        warnings.warn(
            f"{source}: column {agg_col!r} stays below 30 W (99th percentile "
            f"{np.nanpercentile(aggregate, 99):.3g}): if it is in kW, pass --unit kW or name it "
            f"'{agg_col}_kW'",
            DataWarning,
            stacklevel=4,
        )


def load_csv(path: Path, columns: dict[str, str] | None = None, unit: str | None = None) -> Household:
    """Tidy CSV: a file or a folder of .csv / .csv.gz files (read in name order, must not overlap),
    with a time column, an aggregate column and one column per appliance (auto-mapped by name or via
    `columns`). The delimiter (',', ';', tab, '|') and a decimal comma are sniffed; power is in W unless
    a column name says kW ('Aggregate_kW', 'kettle (kW)') or `unit="kW"`. Empty cells are NaN;
    negative readings are clipped to 0. A path containing 'refit'/'ukdale' selects that dataset's
    preprocessing defaults (meta['like'])."""
    path = Path(path)
    return _load_csv_files(_csv_files(path), columns, "csv", path, unit=unit)


def load_refit(path: Path, house: int = 2, columns: dict[str, str] | None = None, unit: str | None = None) -> Household:
    """REFIT cleaned CSV: PATH is CLEAN_HouseN.csv or the folder holding it (columns Time, Unix,
    Aggregate, Appliance1..9[, Issues]). Appliance channels are named from REFIT_APPLIANCES[house]
    unless `columns` maps them. Rows flagged in an 'Issues' column are kept (as in the source)."""
    path = Path(path)
    if path.is_dir():
        f = path / f"CLEAN_House{house}.csv"
        if not f.is_file():
            found = sorted(
                int(m.group(1))
                for p in path.glob("CLEAN_House*.csv")
                if (m := re.fullmatch(r"CLEAN_House(\d+)\.csv", p.name))
            )
            raise UserError(
                f"{path}: no CLEAN_House{house}.csv (found houses: {', '.join(map(str, found)) or 'none'}); pass --house with one of them"
            )
    else:
        f = path
    if columns is None:
        if house not in REFIT_APPLIANCES:
            raise UserError(
                f"{f}: no built-in appliance map for REFIT house {house} (known: "
                f"{', '.join(map(str, REFIT_APPLIANCES))}); pass --columns Appliance8=kettle,..."
            )
        columns = {}
        for i, label in enumerate(REFIT_APPLIANCES[house], 1):
            dev = device_for_label(label)
            if dev and dev not in columns.values():
                columns[f"Appliance{i}"] = dev
        columns["Unix"] = "time"
        columns["Aggregate"] = "aggregate"
    hh = _load_csv_files([f], columns, "refit", f, meta={"house": house, "like": "refit"}, unit=unit)
    return hh
