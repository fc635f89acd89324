"""Trace's buffer pool: capture's chunked runs make their attention matrices in pooled buffers, handed out again once
a record is dropped. Pooled and plain runs must give the same bits, a kept record must keep its buffer, and a chunk's
trace must be freed as soon as it is dropped (no reference cycle holding its pool and records)."""

import gc
import math
import weakref

import pytest
import torch

from nilmbuild.capture import traced_run
from nilmbuild.model import Trace, names
from nilmbuild.model.attention import _logsumexp_in
from nilmbuild.model.buffers import BufferPool
from tests.test_format import W, tiny_model


def test_logsumexp_in_a_work_buffer_has_pytorchs_bits():
    torch.manual_seed(0)
    x = torch.randn(3, 2, 5, 7) * 30
    x[0, 0, 0] = -math.inf  # a row with nothing to attend to: -inf, as torch.logsumexp
    x[1, 1, 2, 3] = -1e4
    got = _logsumexp_in(x, torch.full_like(x, float("nan")))
    assert torch.equal(got, torch.logsumexp(x, dim=-1))
    assert got[0, 0, 0] == -math.inf


def test_a_dropped_record_gives_its_buffer_back_and_a_kept_one_keeps_it():
    pool = BufferPool()
    t = Trace(copy=False, pool=pool)
    a = t.buffer("a", (2, 3))
    t.put("a", a.fill_(1.0), ("x", "y"), "s", "sec", "doc")
    b = t.buffer("b", (2, 3))
    assert b.data_ptr() != a.data_ptr()  # a is still recorded
    t.drop("a")
    c = t.buffer("c", (2, 3))
    assert c.data_ptr() == a.data_ptr()  # a's memory, handed out again
    assert t.buffer("d", (4,)).shape == (4,)  # another shape: a new buffer
    assert Trace(copy=False, keep=lambda n: n != "e", pool=pool).buffer("e", (2, 3)) is None  # not kept: allocate
    assert Trace().buffer("f", (2, 3)) is None  # no pool
    with pytest.raises(ValueError):
        with Trace().scratch((2,)):
            pass


def test_pooled_chunks_give_the_bits_of_plain_runs(monkeypatch):
    """Every planned part (q, k, scores, masked scores, weights, lse) of every chunk and layer, and every joined
    record, equal to a plain traced run of the same chunk."""
    monkeypatch.setattr(traced_run, "CHUNK", 2)
    torch.manual_seed(3)
    m, x = tiny_model(), torch.rand(5, 7, W)
    seen = []
    joined = traced_run.run_traced(
        m, x, attention=lambda layer, parts: seen.append({k: r.tensor.clone() for k, r in parts.items()})
    )
    plain = []
    for i in range(0, 5, 2):
        plain.append(Trace())
        with torch.no_grad():
            m(x[i : i + 2], trace=plain[-1])
    layers = m.cfg.n_encoder_layers
    assert len(seen) == layers * len(plain)
    for i, parts in enumerate(seen):
        run, layer = plain[i // layers], i % layers
        assert set(parts) == set(traced_run.PLANNED_PARTS)
        for k, t in parts.items():
            assert torch.equal(t, run[names.attn(layer, k)]), (i, k)
    for name, r in joined.records.items():
        if r.axes[:1] == ("batch",):
            assert torch.equal(r.tensor, torch.cat([t[name] for t in plain])), name


def test_a_chunk_trace_is_freed_when_dropped():
    gc.disable()
    try:
        part = traced_run._run_chunk(
            tiny_model(), torch.rand(2, 7, W), None, lambda layer, parts: None, pool=BufferPool()
        )
        ref = weakref.ref(part)
        del part
        assert ref() is None
    finally:
        gc.enable()
