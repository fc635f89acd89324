"""The bench's one output format: rows of figures printed as a table, grouped by section (used by
`python -m nilmbuild.bench` and the sections that run on their own, bench/live.py and bench/pages.py)."""

from __future__ import annotations

import math


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def print_table(rows: list[dict]) -> None:
    group = None
    for r in rows:
        if r["group"] != group:
            group = r["group"]
            print(f"\n{group}")
        cells = "  ".join(f"{k}={_fmt(v)}" for k, v in r.items() if k not in ("group", "name"))
        print(f"  {r['name']:<44} {cells}")
