"""Hand-made NILMTK stores for the `nilmtk:` tests (nilmbuild.bench.nilmtk_writer, NILMTK's layout): one building,
its meters given as {meter: (unix seconds, {column: values})}, read back as `nilmbuild` reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nilmbuild.bench.nilmtk_writer import building_meta, write_store
from nilmbuild.data import load_source

T0 = 1_370_476_800  # 2013-06-06 00:00:00 UTC, a multiple of 60 s


def load(path: Path, start: str | None = None, end: str | None = None):
    return load_source(f"nilmtk:{path}", span=(start, end))


def iso(t_s: int) -> str:
    """Unix seconds as the ISO time --start / --end take."""
    return str(np.datetime64(t_s, "s"))


def store(tmp_path: Path, meters: dict, sites=(1,), appliances=(("kettle", [9]),), root=None, **extra) -> Path:
    """tmp_path/s.h5: building 1 with these site meters and (appliance, [meters]); extra: more building metadata."""
    meta = building_meta(1, list(sites), list(appliances), **extra)
    return write_store(tmp_path / "s.h5", {1: {"metadata": meta, "meters": meters}}, root=root)
