"""A NILMTK store read range by range (what `nilmbuild disaggregate` streams from a `nilmtk:` source).

`NilmtkRange(path, building, span, window).read(lo_s, hi_s)` gives exactly the samples of
`load_nilmtk(path, building, *span)` whose time is in [lo_s, hi_s) and in `window` (the disaggregate --from/--to):
the same meters, the same grid period, the same power measurement per site meter (decided once over the span),
each range binned from its own rows only. The store stays open (PyTables' unpickling off) until `close()`.
One difference, documented: a device whose meter has rows in the span but no finite value at the site meters'
times is left out by `load_nilmtk` and read as missing (invalid bins) here.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

import numpy as np

from nilmbuild.data.household import DEVICE_NAMES
from nilmbuild.data.nilmtk_source import _meta, _open_meters
from nilmbuild.data.nilmtk_store import (
    NS,
    _chunks,
    _first_row_at,
    binned,
    open_store,
    parse_time,
    plan_for,
    power_columns,
)
from nilmbuild.errors import UserError

DAY_S = 86_400


class NilmtkRange:
    """Range reads of one building of a NILMTK store; a context manager (closes the store)."""

    def __init__(self, path, building: int | None = None, span=(None, None), window=(None, None)):
        self.path = Path(path)
        self._stack = contextlib.ExitStack()
        f = self._stack.enter_context(open_store(self.path))
        try:
            self._setup(f, building, span, window)
        except BaseException:
            self._stack.close()
            raise

    def _setup(self, f, building, span, window) -> None:
        lo_ns, hi_ns = parse_time(span[0], "--start"), parse_time(span[1], "--end")
        plan, root = plan_for(self.path, f, building)
        self.sites, self.devs = _open_meters(self.path, f, plan, lo_ns, hi_ns, span)
        self.rate = max(mt.period_s for mt in [*self.sites, *[m for ms in self.devs.values() for m in ms]])
        self.used = {mt.meter: self._measurement(mt) for mt in self.sites}
        self.meta = _meta(self.path, plan, root, self.sites, self.devs, self.used, self.rate)
        self.devices = tuple(d for d in DEVICE_NAMES if d in self.devs)
        w0, w1 = parse_time(window[0], "--from"), parse_time(window[1], "--to")
        self.window = (-(2**62) if w0 is None else w0 // NS, 2**62 if w1 is None else -(-w1 // NS))

    def _measurement(self, mt) -> str:
        """Active power when the span has any active value, else the next power column (load_nilmtk's choice)."""
        have = power_columns(self.path, mt)
        for m in have:
            if any(np.isfinite(v).any() for _, v in _chunks(self.path, mt, m)):
                return m
        return have[-1]

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()

    def _rows(self, mt, lo_ns: int, hi_ns: int):
        r0 = max(mt.rows[0], _first_row_at(mt.table, lo_ns))
        r1 = min(mt.rows[1], _first_row_at(mt.table, hi_ns))
        return dataclasses.replace(mt, rows=(r0, max(r0, r1)))

    def read(self, lo_s: int, hi_s: int):
        """-> (timestamps datetime64[s], aggregate (K,), {device: (K,)}) of the kept grid bins starting in [lo_s, hi_s)."""
        lo_s, hi_s = max(lo_s, self.window[0]), min(hi_s, self.window[1])
        r = self.rate
        b_lo, b_hi = -(-lo_s // r), max(-(-lo_s // r), -(-hi_s // r))
        n = b_hi - b_lo
        total, has = np.zeros(n, np.float32), np.zeros(n, bool)
        for mt in self.sites:
            mean, got = binned(self.path, self._rows(mt, b_lo * r * NS, b_hi * r * NS), self.used[mt.meter], b_lo, n, r)
            total += mean
            has |= got
        keep = np.flatnonzero(has)
        apps = {}
        for dev in self.devices:
            apps[dev] = np.zeros(keep.size, np.float32)
            for mt in self.devs[dev]:
                sub = self._rows(mt, b_lo * r * NS, b_hi * r * NS)
                apps[dev] += binned(self.path, sub, power_columns(self.path, mt)[0], b_lo, n, r)[0][keep]
        return ((b_lo + keep) * r).astype("datetime64[s]"), total[keep], apps

    def extent(self) -> tuple[int, int]:
        """(first, last) kept sample time, unix seconds; found by reading a day at a time from each end."""
        first_row = min(int(mt.table.read(mt.rows[0], mt.rows[0] + 1, field="index")[0]) for mt in self.sites)
        last_row = max(int(mt.table.read(mt.rows[1] - 1, mt.rows[1], field="index")[0]) for mt in self.sites)
        lo, hi = max(first_row // NS, self.window[0]), min(last_row // NS + 1, self.window[1])
        first = next(
            (int(ts[0].astype(np.int64)) for t in range(lo, hi, DAY_S) if (ts := self.read(t, t + DAY_S)[0]).size), None
        )
        if first is None:
            raise UserError(
                f"{self.path}: no samples in the requested span; pass other --from/--to or --start/--end dates"
            )
        last = next(
            int(ts[-1].astype(np.int64)) for t in range(hi, first, -DAY_S) if (ts := self.read(t - DAY_S, t)[0]).size
        )
        return first, last
