"""Trace a run of the example batch chunk by chunk, joined into one batch-sized Trace.

NILMFormer treats every window on its own (eval mode: no batch statistics), so a chunk of samples gives each sample
the values the whole batch would, up to float32 rounding (PyTorch may pick another kernel for another batch size:
the shipped model's 8-sample chunks happen to give the same bits). Only the (chunk, H, L, L) attention matrices of
one chunk and one layer are alive at a time instead of the whole batch's (~0.7 GB for 32 windows), planned and
dropped as soon as the layer's attention is traced.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from nilmbuild.memory import release_freed_memory
from nilmbuild.model import names
from nilmbuild.model.buffers import BufferPool
from nilmbuild.model.trace import Trace, TraceRecord

CHUNK = 8  # samples per traced run

#: What planning one attention layer reads from a chunk's trace.
PLANNED_PARTS = ("q", "k", "scores", "masked_scores", "weights", "lse")


def run_traced(model, x: torch.Tensor, keep=None, attention: Callable | None = None, samples=None, **kw) -> Trace:
    """Trace `x` (B, 7, L) through `model` chunk by chunk; return one Trace with every kept record at batch size.

    keep(name): record only these. attention(layer, parts): called for each chunk as soon as a layer's attention
    is traced (its lse is the last part put), with the chunk's trace records of that layer, in sample order; the
    (chunk, H, L, L) matrices are dropped right after and never joined. Without `attention` the batch runs whole
    (PyTorch's kernels are ~10 % faster on bigger batches): for runs that keep no (B, H, L, L) record.
    samples: keep (and plan) only these batch indices, in increasing order (the Trace's batch axis is theirs); each
    is run in its chunk of the whole batch, so that its values have the same bits as in a run of every sample.
    """
    B = int(x.shape[0])
    if attention is None and samples is None:
        return _run_chunk(model, x, keep, None, **kw)
    want = range(B) if samples is None else sorted({int(s) for s in samples})
    joined: Trace | None = None
    done = 0
    pool = BufferPool() if attention is not None else None  # the matrices of one layer, reused chunk after chunk
    for start in range(0, B, CHUNK):
        rows = [s - start for s in want if start <= s < start + CHUNK]
        if not rows:
            continue
        part = _run_chunk(
            model, x[start : start + CHUNK], keep, attention, None if samples is None else rows, pool, **kw
        )
        joined = _join(joined, part, done, len(want))
        done += len(rows)
        del part
        release_freed_memory()  # the chunk's freed matrices and temporaries (glibc keeps them otherwise)
    return joined


def _rows(r: TraceRecord, rows: list[int] | None) -> TraceRecord:
    """r narrowed to these rows of its batch axis (r itself for None or a record without one)."""
    if rows is None or r.axes[:1] != ("batch",):
        return r
    return TraceRecord(r.tensor[rows], r.axes, r.stage, r.section, r.doc, r.derive)


def _run_chunk(model, x, keep, attention, rows: list[int] | None = None, pool: BufferPool | None = None, **kw) -> Trace:
    """One traced run of x; with rows, only these rows of its records are planned and kept. pool: where the
    attention matrices are made (they go back to it once planned and dropped)."""

    def on_put(trace: Trace, name: str) -> None:  # given the trace: a closure over it would be a reference cycle
        p = name.split(".")  # an attention layer's lse is its last record: plan the layer
        layer = int(p[1]) if attention is not None and len(p) > 1 and p[1].isdigit() else None
        if layer is None or name != names.attn(layer, "lse"):
            return
        parts = {
            k: _rows(trace.records[names.attn(layer, k)], rows) for k in PLANNED_PARTS if names.attn(layer, k) in trace
        }
        attention(layer, parts)
        for k in names.ATTN_MATRICES:  # (chunk, H, L, L): dropped once planned
            trace.drop(names.attn(layer, k))

    trace = Trace(keep=keep, copy=False, on_put=on_put, pool=pool)
    with torch.no_grad():
        model(x, trace=trace, **kw)
    if rows is not None:
        trace.records = {n: _rows(r, rows) for n, r in trace.records.items()}
    return trace


def _join(joined: Trace | None, part: Trace, start: int, B: int) -> Trace:
    """Copy one chunk's records into the batch-sized trace (made from the first chunk). Records without a batch
    axis (weights-only tensors) must be equal in every chunk."""
    if joined is None:
        joined = Trace(copy=False)
        joined.order = list(part.order)
        for name, r in part.records.items():
            t = r.tensor
            if r.axes[:1] == ("batch",):
                t = torch.empty((B,) + tuple(r.tensor.shape[1:]), dtype=r.tensor.dtype)
            joined.records[name] = TraceRecord(t, r.axes, r.stage, r.section, r.doc, r.derive)
    for name, r in part.records.items():
        into = joined.records[name].tensor
        if r.axes[:1] == ("batch",):
            into[start : start + r.tensor.shape[0]] = r.tensor
        elif not torch.equal(into, r.tensor):
            raise RuntimeError(f"capture: {name} has no batch axis but differs between chunks of the batch")
    return joined
