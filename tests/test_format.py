"""Blob format: every encoding round-trips, derived records stay within their bounds, selection, determinism."""

import functools

import numpy as np
import pytest
import torch

from nilmbuild.capture import Capture, capture_batch, decode, encode
from nilmbuild.capture import format as fmt
from nilmbuild.capture.attention_plan import ATTN_WEIGHTS_TOL
from nilmbuild.capture.planner import REL_TOL_DERIVED
from nilmbuild.capture.records import stored_record as _stored
from nilmbuild.model import NILMFormer, NILMFormerConfig, Trace

B, W = 3, 64


def tiny_model(seed=0):
    torch.manual_seed(seed)
    m = NILMFormer(NILMFormerConfig(window=W)).eval()
    with torch.no_grad():
        for g in (m.encoder_film.gen, m.decoder_film.gen):
            g.fc2.weight.normal_(0, 0.3)
            g.fc2.bias.normal_(0, 0.3)
    return m


@functools.cache
def tiny_capture():
    m = tiny_model()
    torch.manual_seed(1)
    x = torch.rand(B, 7, W)
    y = np.stack(
        [np.random.default_rng(0).random((B, 5, W)), np.random.default_rng(1).random((B, 5, W)) > 0.7], axis=2
    ).astype(np.float32)
    t0 = np.array(["2024-01-01T00:00", "2024-01-02T08:00", "2024-01-03T16:00"], dtype="datetime64[s]")
    cap = capture_batch(m, x, y=y, t0=t0)
    trace = Trace()
    with torch.no_grad():
        m(x, trace=trace, gate_mode="hard")
    return m, x, cap, trace


def special_capture():
    """Records that exercise every stored encoding, f16 special values included."""
    half = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    recs = {}
    for name, t, enc in (
        ("half.all", half, "f16"),
        ("half.all_f32", half, "f32"),
        ("bits.x", (np.arange(37) % 3 == 0).astype(np.float32), "bits"),
        ("u8.x", (np.arange(11) % 2).astype(np.float32), "u8bool"),
        ("sparse.x", np.where(np.arange(100) % 3 == 0, np.linspace(-2, 2, 100), 0).astype(np.float32), "f16z"),
    ):
        recs[name] = _stored(name, t, ("index",), "0", "test", "special values", encoding=enc)
    return Capture(records=recs, meta={"test": True}, batch_size=1)


def test_every_stored_encoding_round_trips():
    cap = special_capture()
    r = decode(encode(cap))
    for n, rec in cap.records.items():
        want = fmt.quantise(rec.tensor, rec.encoding)
        np.testing.assert_array_equal(r.get(n), want)  # NaN == NaN for array_equal? use bit view
        assert r.record(n)["encoding"] == rec.encoding
    h = r.get("half.all")
    bits = np.arange(65536, dtype=np.uint16)
    ref = bits.view(np.float16).astype(np.float32)
    assert np.array_equal(np.isnan(h), np.isnan(ref))
    ok = ~np.isnan(ref)
    assert np.array_equal(h[ok], ref[ok])  # subnormals, +-0, +-inf exact
    assert r.get("half.all")[0x0001] == 2.0**-24 and np.isinf(r.get("half.all")[0x7C00])


def test_roundtrip_stored_records_are_f16_exact_and_derived_within_bounds():
    m, x, cap, trace = tiny_capture()
    r = decode(encode(cap))
    assert r.meta["samples"] == [0, 1, 2] and len(r.meta["t0"]) == 3
    for n in r.names():
        rec = r.record(n)
        got = r.get(n)
        assert list(got.shape) == rec["shape"], n
        if n not in trace.records:
            continue
        true = trace[n].numpy()
        amax = float(np.abs(true).max()) if true.size else 0.0
        err = float(np.abs(got.astype(np.float64) - true).max()) if true.size else 0.0
        if rec["encoding"] == "f16" or rec["encoding"] == "f16z":
            assert err <= 2.0**-11 * amax + 6e-8, n
        elif rec["encoding"] in ("f32", "bits"):
            assert err == 0.0 or n.endswith(".lse"), n
        elif rec["op"] == "attention_weights":
            assert err <= ATTN_WEIGHTS_TOL, n
        else:
            assert err <= REL_TOL_DERIVED * amax + 1e-5, (n, rec["op"], err, amax)
        assert abs(rec["err"] - err) <= 1e-6 + 1e-3 * err, n  # recorded err is the measured one


def test_stats_are_of_the_exact_tensor():
    m, x, cap, trace = tiny_capture()
    r = decode(encode(cap, samples=[1]))
    for n in ("encoder.1.attn.weights", "encoder.0.ffn.gelu", "projection"):
        t = trace[n].numpy()[1].astype(np.float64)
        s = r.record(n)["stats"]
        assert s["min"] == t.min() and s["max"] == t.max()
        assert abs(s["mean"] - t.mean()) < 1e-9 and abs(s["std"] - t.std()) < 1e-9


def test_select_names_and_samples_slice_consistently():
    m, x, cap, trace = tiny_capture()
    full = decode(encode(cap))
    part = decode(encode(cap, names=["encoder.1.attn.weights", "output.*"], samples=[2, 0]))
    assert part.meta["samples"] == [2, 0] and part.meta["batch_size"] == 2
    assert part.meta["t0"] == [full.meta["t0"][2], full.meta["t0"][0]]
    # the dependencies of the derived weights come along
    assert {"encoder.1.attn.q", "encoder.1.attn.k", "encoder.1.attn.lse"} <= set(part.names())
    assert "encoder.0.ffn.hidden" not in part.names()
    np.testing.assert_array_equal(part.get("encoder.1.attn.weights"), full.get("encoder.1.attn.weights")[[2, 0]])
    np.testing.assert_array_equal(part.get("output.power"), full.get("output.power")[[2, 0]])
    # records without a batch axis (weights) are never sliced by `samples`: same shape, values and stats
    wq = "weights.encoder.0.attn.wq"
    sel = decode(encode(cap, names=[wq], samples=[2, 0]))
    assert sel.names() == [wq] and sel.record(wq)["axes"] == ["out_feature", "in_feature"]
    assert sel.record(wq)["shape"] == [96, 96] == list(m.layers[0].attn.wq.weight.shape)
    np.testing.assert_array_equal(sel.get(wq), full.get(wq))
    np.testing.assert_array_equal(sel.get(wq), fmt.f16_round(m.layers[0].attn.wq.weight.detach().numpy()))
    assert sel.record(wq)["stats"] == full.record(wq)["stats"]
    with pytest.raises(KeyError):
        encode(cap, names=["no.such.record"])
    with pytest.raises(IndexError):
        encode(cap, samples=[B])


def test_deterministic_bytes():
    m, x, cap, trace = tiny_capture()
    a = encode(cap, samples=[0])
    assert a == encode(cap, samples=[0])
    cap2 = capture_batch(tiny_model(), x, ablations=False)
    cap3 = capture_batch(tiny_model(), x, ablations=False)
    assert encode(cap2) == encode(cap3)


def test_query_rows_of_derived_attention_equal_the_whole_matrix_bit_for_bit():
    _, _, cap, _ = tiny_capture()
    rows = [0, 5, W // 2, W - 1]  # first and last row: the diagonal mask sits at their ends
    for layer in (0, 2):
        name = f"encoder.{layer}.attn.weights"
        assert decode(encode(cap)).record(name)["encoding"] == "derived"
        part = decode(encode(cap)).query_rows(name, rows)  # a fresh reader: the rows only, never the matrix
        whole = decode(encode(cap)).get(name)
        assert part.dtype == np.float32 and part.shape == (B, whole.shape[1], len(rows), W)
        assert np.array_equal(part, whole[:, :, rows, :])
        assert all((part[:, :, i, r] == 0).all() for i, r in enumerate(rows))  # the masked diagonal is exactly 0
    with pytest.raises(ValueError):
        fmt.attention_weight_rows({"name": "x", "op": "attention_scores"}, None, rows)


@pytest.mark.parametrize("q_shape", [(8, 480, 12), (480, 12), (8, 1, 12), (8, 7, 12), (2, 3, 50, 17), (3, 300)])
def test_attention_scores64_is_the_readers_in_order_sum_bit_for_bit(q_shape):
    """Whichever path attention_scores64 takes (BLAS or einsum when it was checked to add in order), its bits are
    the term-by-term float64 sum decode.js computes."""
    rng = np.random.default_rng(3)
    q = (rng.standard_normal(q_shape) * 3).astype(np.float32)
    k = (rng.standard_normal(q_shape[:-2] + (37, q_shape[-1])) * 3).astype(np.float32)
    by_hand = np.zeros(q.shape[:-1] + (k.shape[-2],))
    for e in range(q.shape[-1]):  # the definition, one term at a time
        by_hand += q[..., :, None, e].astype(np.float64) * k[..., None, :, e].astype(np.float64)
    by_hand *= 0.25
    assert np.array_equal(fmt.attention_scores64(q, k, 0.25), by_hand)


def test_a_fast_path_that_adds_in_another_order_is_not_used(monkeypatch):
    """_fast_in_order must notice a fast path whose sum order differs (here: the terms added last to first) and
    take the next one, or none."""

    def reversed_sum(q, k, scale, out=None):
        return fmt._scores_in_order(q[..., ::-1], k[..., ::-1], scale)

    fmt._fast_in_order.cache_clear()
    try:
        monkeypatch.setattr(fmt, "_scores_blas", reversed_sum)
        assert fmt._fast_in_order((8, 480, 12), (8, 480, 12)) in ("_scores_fast", None)
        fmt._fast_in_order.cache_clear()
        monkeypatch.setattr(fmt, "_scores_fast", reversed_sum)
        assert fmt._fast_in_order((8, 480, 12), (8, 480, 12)) is None
        q, k = np.ones((8, 480, 12), np.float32), np.full((8, 480, 12), 0.5, np.float32)
        assert np.array_equal(fmt.attention_scores64(q, k, 2.0), np.full((8, 480, 480), 12.0))  # the explicit sum
    finally:
        fmt._fast_in_order.cache_clear()
