"""Capture records: what one captured tensor is (CaptureRecord), the whole capture (Capture), and how a stored
record chooses its encoding (f16 / f16z / f32 / bits) and measures what the encoding loses (`err`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import format as fmt

SMALL_NUMEL = 1024  # per sample: tensors this small are stored f32


@dataclass
class CaptureRecord:
    name: str
    tensor: np.ndarray | None  # float32 values a stored record writes (None for derived)
    axes: tuple[str, ...]
    stage: str
    section: str
    doc: str
    shape: tuple[int, ...]
    moments: list  # per-sample (n, min, max, mean, M2) of the exact tensor; [one] if unbatched
    encoding: str = "f16"
    derive: dict | None = None  # op + args when encoding == "derived"
    err: float = 0.0
    samples: tuple[int, ...] | None = None  # batch indices of the rows, when a run was made on these samples only

    def __post_init__(self) -> None:
        if self.samples is not None:
            self.samples = tuple(int(s) for s in self.samples)

    def rows(self) -> list[int]:
        """The batch indices of a batched record's rows (all of the batch unless `samples`)."""
        return list(range(self.shape[0])) if self.samples is None else list(self.samples)

    def deps(self) -> list[str]:
        if self.encoding != "derived":
            return []
        return [self.derive[f] for f in fmt.OP_REFS[self.derive["op"]] if self.derive.get(f) is not None]


@dataclass
class Capture:
    records: dict[str, CaptureRecord]
    meta: dict = field(default_factory=dict)
    batch_size: int = 0

    def names(self) -> list[str]:
        return list(self.records)


def moments_of(t: np.ndarray, batched: bool) -> list:
    if batched:
        return [fmt.moments(t[i]) for i in range(t.shape[0])]
    return [fmt.moments(t)]


def choose_encoding(t: np.ndarray, batched: bool) -> str:
    """f16 by default; bits for 0/1 tensors; f32 for small, out-of-range or tiny-range tensors."""
    per_sample = t[0].size if (batched and t.shape[0]) else t.size
    finite = np.isfinite(t).all()
    if t.size >= 8 and finite and np.isin(t, (0.0, 1.0)).all():
        return "bits"
    if per_sample <= SMALL_NUMEL or not finite:
        return "f32"
    amax = float(np.abs(t).max()) if t.size else 0.0
    if amax > 65000.0:
        return "f32"
    q = fmt.f16_round(t)
    std = float(t.std())
    if std > 0 and float(np.abs(q - t).max()) > 1e-2 * std:  # f16 would blur the tensor's own variation
        return "f32"
    nnz = int(np.count_nonzero(q))
    if (t.size + 7) // 8 + 2 * nnz < 0.9 * 2 * t.size:  # mostly-zero (ReLU) tensors: sparse f16
        return "f16z"
    return "f16"


def stored_record(name, t, axes, stage, section, doc, encoding=None, samples=None) -> CaptureRecord:
    t = np.ascontiguousarray(np.asarray(t, dtype=np.float32))
    batched = bool(axes) and axes[0] == "batch"
    enc = encoding or choose_encoding(t, batched)
    with np.errstate(invalid="ignore"):
        d = np.abs(fmt.quantise(t, enc).astype(np.float64) - t)
    err = float(np.nanmax(d)) if t.size and not np.isnan(d).all() else 0.0
    return CaptureRecord(
        name, t, tuple(axes), stage, section, doc, tuple(t.shape), moments_of(t, batched), enc, None, err, samples
    )
