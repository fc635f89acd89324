"""The overview diagram's node records and column rule, shared by the spec's flow (index.py) and an upstream
model's (upstream_flow.py)."""

from __future__ import annotations


def node(id_, label, sub, phase, page, record, col, row) -> dict:
    return {
        "id": id_,
        "label": label,
        "sub": sub,
        "phase": phase,
        "page": page,
        "record": record,
        "col": col,
        "row": row,
    }


def encoder_col(layer: int, n_layers: int, cols: tuple[int, int]):
    """Layer `layer`'s column: the layers spread evenly over `cols` (first, last), an int where it falls on one."""
    lo, hi = cols
    c = (lo + hi) / 2 if n_layers == 1 else lo + (hi - lo) * layer / (n_layers - 1)
    return int(c) if c == int(c) else c
