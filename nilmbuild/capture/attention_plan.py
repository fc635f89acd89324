"""One attention layer's records, planned chunk by chunk of the traced batch.

A reader gets q, k (f16, or f32 when f16 misses), the row log-sum-exp lse (f32, computed here from the stored
q, k) and rebuilds scores, masked scores and weights with format.materialise. `LayerPlan.add` rebuilds them for
every sample of a chunk, exactly as a reader would, against PyTorch's true matrices, and keeps the largest error
and each sample's moments; `LayerPlan.finish` writes the records once the whole batch is traced.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from nilmbuild.model import names
from nilmbuild.model.attention import MASK_VALUE
from nilmbuild.threads import usable_threads

from . import format as fmt

F16_EPS = 2.0**-11  # unit roundoff of binary16
ATTN_WEIGHTS_TOL = 2e-3  # rebuilt attention weights vs PyTorch's, absolute
REBUILD_THREADS = 2  # at most, and no more than the CPUs this process may use
_OPS = {"scores": "attention_scores", "masked_scores": "attention_masked_scores", "weights": "attention_weights"}


def max_abs_diff(rebuilt32: np.ndarray, true: np.ndarray, work: np.ndarray | None = None) -> float:
    """max |rebuilt - true| in float64, the capture's error of a rebuilt record (0 where both agree on NaN/inf,
    +inf where they do not); work: a float32 array of their shape for the differences (no allocation).

    Two float32 arrays are subtracted in float32: each difference is then the exact one correctly rounded, and
    rounding is monotonic, so the exact largest (and most negative) difference is among the elements whose rounded
    difference is extreme; only those are subtracted again in float64 (same value as a float64 pass, ~2x faster)."""
    if not true.size:
        return 0.0
    if rebuilt32.dtype != np.float32 or true.dtype != np.float32 or rebuilt32.shape != true.shape:
        return _max_abs_diff64(rebuilt32, true)
    with np.errstate(over="ignore", invalid="ignore"):  # inf - inf, or a difference beyond float32: see below
        d = np.subtract(rebuilt32, true, out=work if work is not None and work.dtype == np.float32 else None)
    hi, lo = d.max(), d.min()
    if not (np.isfinite(hi) and np.isfinite(lo)):  # NaN, inf or a float32 overflow: the float64 pass decides
        return _max_abs_diff64(rebuilt32, true)
    if hi == 0 and lo == 0:  # a nonzero float32 difference never rounds to 0
        return 0.0
    at = np.flatnonzero((d == hi) | (d == lo))
    exact = rebuilt32.reshape(-1)[at].astype(np.float64) - true.reshape(-1)[at]
    return float(np.abs(exact).max())


def _max_abs_diff64(rebuilt32: np.ndarray, true: np.ndarray) -> float:
    d = np.subtract(rebuilt32, true, dtype=np.float64)  # each value converted exactly
    err = float(max(d.max(), -d.min()))  # max |d|, without an |d| array
    if not np.isfinite(err):  # NaN or inf: a miss (+inf), unless both hold the same values
        err = 0.0 if np.array_equal(rebuilt32, true, equal_nan=True) else math.inf
    return err


class Workspace:
    """Scratch arrays for rebuild_head, reused from one head to the next: one head's (L, S) float64 matrix (~1.8 MB)
    stays in the CPU's caches over the ~20 passes made over it, where a whole sample's (H, L, S) one (~15 MB) went
    to memory and back each time; and a fresh array per step costs more in page faults than the arithmetic done
    in it."""

    def __init__(self, shape: tuple) -> None:
        self.scores = np.empty(shape, dtype=np.float64)
        self.work = np.empty(shape, dtype=np.float64)
        self.rebuilt32 = np.empty(shape, dtype=np.float32)
        self.diff32 = np.empty(shape, dtype=np.float32)

    def as32(self, a: np.ndarray) -> np.ndarray:
        """a rounded to float32 (as a.astype(np.float32)), in the workspace."""
        np.copyto(self.rebuilt32, a, casting="same_kind")
        return self.rebuilt32


def rebuild_sample(q, k, scale: float, mask_diagonal: bool, true: dict, ws: Workspace | None = None):
    """One sample (H, L, E) q, k as a reader has them -> (its lse (H, L) f32, {part: max error of the rebuilt
    matrix against true[part]}, {part: moments of true[part]}); true holds "weights" and maybe "scores",
    "masked_scores" (H, L, L). Head by head (rebuild_head, in the (L, S) arrays of `ws`); each head's moments are
    merged (format.merge_moments)."""
    ws = ws or Workspace((q.shape[-2], k.shape[-2]))
    heads = [
        rebuild_head(q[h], k[h], scale, mask_diagonal, {p: t[h] for p, t in true.items()}, ws) for h in range(len(q))
    ]
    lse = np.stack([lse for lse, _, _ in heads])  # (H, L)
    errs = {p: max(e[p] for _, e, _ in heads) for p in true}
    return lse, errs, {p: fmt.merge_moments([m[p] for _, _, m in heads]) for p in true}


def rebuild_head(q, k, scale: float, mask_diagonal: bool, true: dict, ws: Workspace):
    """rebuild_sample for one head's (L, E) q, k and (L, S) true matrices. Same arithmetic as format.materialise."""
    diag = np.arange(q.shape[-2])
    errs, moments = {}, {p: fmt.moments(t, ws.work) for p, t in true.items()}
    s = fmt.attention_scores64(q, k, scale, out=ws.scores)
    if "scores" in true:
        errs["scores"] = max_abs_diff(ws.as32(s), true["scores"], ws.diff32)
    if mask_diagonal:
        s[diag, diag] = MASK_VALUE
    if "masked_scores" in true:
        errs["masked_scores"] = max_abs_diff(ws.as32(s), true["masked_scores"], ws.diff32)
    lse = fmt.logsumexp_rows(s, ws.work).astype(np.float32)
    s -= lse.astype(np.float64)[:, None]
    w = np.exp(s, out=s)
    if mask_diagonal:
        w[diag, diag] = 0.0
    errs["weights"] = max_abs_diff(ws.as32(w), true["weights"], ws.diff32)
    return lse, errs, moments


def rebuild_chunk(q, k, scale: float, mask_diagonal: bool, true: dict) -> list[tuple]:
    """rebuild_sample for each sample of a chunk ((n, H, L, E) q, k; true: (n, H, L, L) arrays), in sample order.
    numpy releases the GIL in each step, so the samples are shared out between up to REBUILD_THREADS threads, each
    with its own workspace (each sample's arithmetic is unchanged: the same bits as one thread). The traced run
    waits meanwhile, so the threads have the machine's cores to themselves."""
    n = q.shape[0]
    threads = max(1, min(usable_threads(REBUILD_THREADS), n))
    spaces = [Workspace((q.shape[2], k.shape[2])) for _ in range(threads)]

    def every(start: int) -> list[tuple]:
        ws = spaces[start]
        return [
            rebuild_sample(q[b], k[b], scale, mask_diagonal, {p: t[b] for p, t in true.items()}, ws)
            for b in range(start, n, threads)
        ]

    if threads == 1:
        return every(0)
    with ThreadPoolExecutor(threads) as pool:
        parts = list(pool.map(every, range(threads)))
    return [parts[b % threads][b // threads] for b in range(n)]


@dataclass
class LayerPlan:
    """The records of one layer's attention (names.attn(layer, part), under names.ablation(ablation, ...) for an
    ablation run), gathered over the batch's chunks."""

    layer: int
    ablation: str | None  # None: the main run
    scale: float
    encoding: str = "f16"  # of q, k
    include_scores: bool = True
    mask_diagonal: bool | None = None  # known from the first chunk (masked_scores traced or not)
    lse: list = field(default_factory=list)  # per chunk (chunk, H, L) f32
    errs: dict = field(default_factory=dict)  # part -> max error over the batch
    moments: dict = field(default_factory=dict)  # part -> per-sample moments of the true matrix
    meta: dict = field(default_factory=dict)  # part -> (axes, stage, section, doc, per-sample shape)

    def name(self, part: str, ablation: str | None = "same") -> str:
        """This layer's record `part` in this plan's run (or in `ablation`'s run: None for the main run)."""
        kind = self.ablation if ablation == "same" else ablation
        return names.attn(self.layer, part) if kind is None else names.ablation(kind, names.attn(self.layer, part))

    def parts(self) -> tuple[str, ...]:
        return ("weights",) + (("scores", "masked_scores") if self.include_scores else ())

    def add(self, parts: dict) -> None:
        """One chunk's trace records of this layer: q, k, lse and the (chunk, H, L, L) matrices."""
        if self.mask_diagonal is None:
            self.mask_diagonal = "masked_scores" in parts
        q, k = (fmt.quantise(parts[p].tensor.numpy(), self.encoding) for p in ("q", "k"))
        true = {p: parts[p].tensor.numpy() for p in self.parts() if p in parts}
        for p in true:
            r = parts[p]
            self.meta.setdefault(p, (r.axes, r.stage, r.section, r.doc, tuple(r.tensor.shape[1:])))
        rebuilt = rebuild_chunk(q, k, self.scale, self.mask_diagonal, true)
        for _, errs, moments in rebuilt:
            for p in true:
                self.errs[p] = max(self.errs.get(p, 0.0), errs[p])
                self.moments.setdefault(p, []).append(moments[p])
        self.lse.append(np.stack([lse for lse, _, _ in rebuilt]))

    def tolerance(self, part: str) -> float:
        if part == "weights":
            return ATTN_WEIGHTS_TOL
        amax = max(max(abs(m[1]), abs(m[2])) for m in self.moments[part])  # (n, min, max, mean, M2) per sample
        return 8 * F16_EPS * amax + 1e-5

    def misses(self) -> list[str]:
        """The parts whose rebuild is outside its bound over the whole batch."""
        return [p for p in self.errs if not self.errs[p] <= self.tolerance(p)]

    def spec(self, part: str) -> dict:
        """The derivation a reader follows for `part` (keys in the order the capture format has always written)."""
        spec = {"op": _OPS[part], "q": self.name("q"), "k": self.name("k")}
        if part == "weights":
            spec["lse"] = self.name("lse")
        spec["scale"] = float(self.scale)
        if part == "weights":
            spec["mask_diagonal"] = bool(self.mask_diagonal)
        if part != "scores":
            spec["mask_value"] = float(MASK_VALUE)
        return spec

    def finish(self, planner, trace, samples=None) -> None:
        """Write q, k (or aliases of the main run's equal tensors), lse and the derived matrices (samples: the
        batch indices the run was made on, when not the whole batch)."""
        for p in ("q", "k"):
            main = self.name(p, None) if self.ablation else None  # an ablation run's q, k may equal the main run's
            r = trace.records[names.attn(self.layer, p)]
            planner.alias_or_store(
                self.name(p), r.tensor.numpy(), r.axes, r.stage, r.section, r.doc, main, self.encoding, samples
            )
        lse = trace.records[names.attn(self.layer, "lse")]
        planner.store_lse(self.name("lse"), lse, np.concatenate(self.lse), samples)
        for p in self.parts():
            if p in self.errs:
                axes, stage, section, doc, shape = self.meta[p]
                shape = (len(self.moments[p]),) + shape
                planner.verified(
                    self.name(p),
                    (axes, stage, section, doc),
                    shape,
                    self.moments[p],
                    self.spec(p),
                    self.errs[p],
                    samples,
                )
