"""Where a `Household` comes from: `load_source` reads a source spec (synthetic, csv:, ukdale:, refit:, redd:,
nilmtk:) with the reader of its kind, and `parse_column_map` reads `--columns`.

The readers: nilmbuild/data/simulate.py (the built-in simulator), raw_channels.py (UK-DALE and REDD raw files),
csv_source.py (tidy CSVs and REFIT), nilmtk_source.py (NILMTK HDF5 stores). Every problem with the input raises a
one-line `UserError` naming the file (and line where it applies) and what to do; timestamps are never sorted
silently.
"""

from __future__ import annotations

from pathlib import Path

from nilmbuild.data.csv_source import load_csv, load_notes, load_refit, sniff_dialect
from nilmbuild.data.household import DEVICE_NAMES, Household, between
from nilmbuild.data.raw_channels import load_redd, load_ukdale, read_channel, read_labels
from nilmbuild.errors import UserError

__all__ = [
    "load_csv",
    "load_notes",
    "load_redd",
    "load_refit",
    "load_source",
    "load_ukdale",
    "parse_column_map",
    "read_channel",
    "read_labels",
    "sniff_dialect",
]


def load_source(
    spec: str,
    house: int | None = None,
    columns: dict[str, str] | None = None,
    days: int = 60,
    seed: int = 0,
    unit: str | None = None,
    span: tuple[str | None, str | None] | None = None,
) -> Household:
    """Load `synthetic`, `csv:PATH`, `ukdale:PATH`, `refit:PATH`, `redd:PATH` or `nilmtk:PATH.h5`.

    house: the dataset's house number (UK-DALE default 1, REFIT 2, REDD 1; a NILMTK store's building, default
    its first); columns: CSV/REFIT column -> device map (targets: DEVICE_NAMES, "time", "aggregate");
    days/seed: simulator only; unit: "W" or "kW" for CSV power columns whose name has no unit suffix (the
    CLI's --unit; default W). A unit in the column name ("Aggregate_kW", "kettle (W)") wins. span: (start, end)
    UTC dates, end exclusive, either None for the data's own (the CLI's --start/--end; None: all of it): a NILMTK
    store is read only inside it, other sources are cut to it after loading.
    """
    span = tuple(span) if span else (None, None)
    hh = _load_spec(spec, house, columns, days, seed, unit, span)
    if (span[0] or span[1]) and not spec.strip().lower().startswith("nilmtk:"):
        hh = between(hh, *span)
    return hh


def _load_spec(spec, house, columns, days, seed, unit, span) -> Household:
    """load_source without the span cut (the nilmtk: store reads only the span itself)."""
    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "synthetic":
        from nilmbuild.data.simulate import simulate_household

        return simulate_household(days=days, seed=seed)
    loaders = {
        "csv": lambda p: load_csv(p, columns=columns, unit=unit),
        "ukdale": lambda p: load_ukdale(p, house=house if house is not None else 1),
        "refit": lambda p: load_refit(p, house=house if house is not None else 2, columns=columns, unit=unit),
        "redd": lambda p: load_redd(p, house=house if house is not None else 1),
        "nilmtk": lambda p: _nilmtk(p, house, span),
    }
    if kind not in loaders or not rest:
        raise UserError(
            f"unknown data source {spec!r}; use synthetic, csv:PATH, ukdale:PATH, refit:PATH, redd:PATH or nilmtk:PATH.h5"
        )
    path = Path(rest).expanduser()
    if not path.exists():
        raise UserError(f"{path}: no such file or folder; check the path after '{kind}:'")
    return loaders[kind](path)


def _nilmtk(path: Path, building: int | None, span) -> Household:
    from nilmbuild.data.nilmtk_source import load_nilmtk

    return load_nilmtk(path, building=building, start=span[0], end=span[1])


def parse_column_map(text: str | None) -> dict[str, str]:
    """'Kettle=kettle,WashingMachine=washing_machine' -> {'Kettle': 'kettle', ...}; validates targets."""
    out: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in (text or "").split(","))):
        src, eq, dst = item.partition("=")
        dst = dst.strip()
        if not eq or not src.strip() or dst not in (*DEVICE_NAMES, "time", "aggregate"):
            raise UserError(
                f"--columns: bad item {item!r}; write COLUMN=NAME with NAME one of "
                f"{', '.join(DEVICE_NAMES)}, time, aggregate"
            )
        out[src.strip()] = dst
    return out
